"""Reading results back as tidy DataFrames, so notebooks never write SQL against raw tables."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import pandas as pd

from ..core.errors import ParameterError, StoreError
from ..core.settings import get_settings
from .store import Store

# Preferred cost metric first; the first one the run measured on every row stands in.


def _store(store: Store | None) -> Store:
    return store or Store.default()


def runs(*, experiment: str | None = None, limit: int = 20, store: Store | None = None) -> pd.DataFrame:
    where = "where experiment = ?" if experiment else ""
    return _store(store).query(
        f"select run_id, experiment, notebook, status, started_at, ended_at, hostname, cpu_model, kernel, "
        f"host_class, host_price, host_price_unit, pmu, host_fingerprint, worker, "
        f"benchlib_version, git_sha, owner, status_note, error from runs {where} order by started_at desc limit {int(limit)}",
        [experiment] if experiment else [],
    )


def run_info(run_id: str, store: Store | None = None) -> dict:
    df = _store(store).query("select * from runs where run_id = ?", [run_id])
    if df.empty:
        raise StoreError(f"no run {run_id!r} in {_store(store).where}")
    info = df.iloc[0].to_dict()
    info["parameters"] = json.loads(info["parameters"] or "{}")
    info["perf_support"] = json.loads(info["perf_support"] or "{}")
    failures = info.get("failures")
    info["failures"] = json.loads(failures) if isinstance(failures, str) else {}
    return info


def instances(run_id: str, store: Store | None = None) -> pd.DataFrame:
    return _store(store).query("select * exclude (schema_version) from instances where run_id = ? "
                               "order by started_at", [run_id])


def measurements(run_id: str | list[str], store: Store | None = None) -> pd.DataFrame:
    """Every measured row of the run(s), with the engine instance's provenance beside it."""
    ids = [run_id] if isinstance(run_id, str) else list(run_id)
    df = _store(store).query(
        "select m.* exclude (schema_version), i.image_ref, i.image_source, i.server_version "
        "from measurements m left join instances i using (run_id, instance_id) "
        "where m.run_id in (select unnest(?)) order by m.seq, m.metric", [ids])
    if df.empty and not set(ids) & set(_store(store).run_ids()):
        raise StoreError(f"no run {', '.join(ids)} in {_store(store).where}")
    return df


def latest_run_per_engine(experiment: str, store: Store | None = None) -> pd.DataFrame:
    """For each engine, the newest finished-ok run of `experiment` that measured it."""
    return _store(store).query(
        "select engine, arg_max(run_id, r.started_at) as run_id, max(r.started_at) as started_at "
        "from (select distinct run_id, engine from measurements where experiment = ?) m "
        "join runs r using (run_id) where r.status = 'ok' group by engine order by engine", [experiment])


ENGINE_SCOPES = ("server", "embedded")
COST_WINDOWS = ("baseline", "phase", "settle")


def engine_rows(df: pd.DataFrame, scopes: tuple[str, ...] = ENGINE_SCOPES) -> pd.DataFrame:
    """The engine's own rows (its cgroup, a cluster's summed cgroups, or the process of an
    embedded engine), not the client's; `scopes=(NODE_SCOPE,)`: a cluster's nodes, each its own."""
    return df[df["scope"].isin(scopes)]


# The engine cost metrics cost_metric chooses between, preferred first, with their units.
COST_METRICS = (("instructions_user", "instructions"), ("cpu_time", "s"))


def cost_metric(df: pd.DataFrame) -> tuple[str, str, str]:
    """(metric, unit, explanation): user-space instructions where perf or valgrind counted them in
    every engine window (seed 000's metric), else CPU time from the engine's accounting."""
    from ..counters.valgrind import NOT_NATIVE, SERIALISES, SOURCE

    df = engine_rows(df)
    counted = df[(df["metric"] == "instructions_user") & df["window"].isin(["phase", "settle"])]
    if not counted.empty and (counted["status"] == "ok").all():
        sources = set(counted["source"])
        if SOURCE not in sources:
            return (*COST_METRICS[0], "user-space instructions counted by perf (as in seed 000)")
        by = ("valgrind's callgrind" if sources == {SOURCE} else
              f"valgrind's callgrind in some runs and perf in others ({', '.join(sorted(sources))})")
        return (*COST_METRICS[0], f"user-space instructions counted by {by}, the whole server under it (every "
                "process and thread of its container, including processes that ended inside a window), seed 000's "
                f"metric counted in software; {SERIALISES}. The CPU seconds of a server under valgrind include "
                f"valgrind's own work: they are stored apart (metrics ending {NOT_NATIVE}) and are not its CPU cost")
    statuses = ", ".join(sorted(set(counted["status"]))) or "not recorded"
    sources = "; ".join(sorted(set(df[df["metric"] == "cpu_time"]["source"]))) or "cgroup"
    return (*COST_METRICS[1], f"CPU seconds (user+system) from each scope's accounting ({sources}) stand in for "
            "instructions: "
            f"perf's instructions:u on this host was {statuses}")


def counted_by_valgrind(df: pd.DataFrame, metric: str) -> bool:
    """Whether valgrind counted `metric` in any of these rows: its wall times are then valgrind's
    (a server slowed many times, its threads serialised), no figure of the engine's."""
    from ..counters.valgrind import SOURCE

    return SOURCE in set(df[df["metric"] == metric]["source"])


def phase_costs(df: pd.DataFrame, metric: str, scopes: tuple[str, ...] = ENGINE_SCOPES) -> pd.DataFrame:
    """Per engine start, variant (labels) and phase: the engine's metric in the phase window, in
    the settle window, and both with the engine's idle rate x duration subtracted (the idle rate
    comes from the baseline window of the same engine start). Baseline windows appear as their
    own phase. `scopes=(NODE_SCOPE,)`: per cluster node instead (each node's own idle rate)."""
    df = engine_rows(df, scopes)
    df = df[df["window"].isin(COST_WINDOWS)]  # warm-up windows are kept in the store, never in a cost
    keys = ["run_id", "instance_id", "engine", "repetition", "labels", "phase"]
    wide = (df[df["metric"].isin([metric, "wall_time"])]
            .groupby(keys + ["window", "metric"], dropna=False)["value"].sum(min_count=1)  # NaN stays NaN
            .unstack(["window", "metric"]))
    wide.columns = [f"{w}_{m}" for w, m in wide.columns]
    wide = wide.reset_index()
    for col in (f"{w}_{m}" for w in ("baseline", "phase", "settle") for m in (metric, "wall_time")):
        if col not in wide:
            wide[col] = float("nan")
    is_base = wide["baseline_wall_time"].notna()
    wide["idle_rate"] = wide["instance_id"].map(idle_rates(df, metric))
    phase_value = wide[f"phase_{metric}"].where(~is_base, wide[f"baseline_{metric}"])
    phase_wall = wide["phase_wall_time"].where(~is_base, wide["baseline_wall_time"])
    # No settle window (embedded engines, baselines) stays NaN in settle columns: not measured is
    # not zero. Sums treat it as nothing to add.
    settle_value = wide[f"settle_{metric}"].where(~is_base)
    settle_wall = wide["settle_wall_time"].where(~is_base)
    total = phase_value + settle_value.fillna(0.0)
    total_wall = phase_wall + settle_wall.fillna(0.0)
    return pd.DataFrame({
        "run_id": wide["run_id"], "instance_id": wide["instance_id"], "engine": wide["engine"],
        "repetition": wide["repetition"],
        "labels": wide["labels"], "phase": wide["phase"], "is_baseline": is_base,
        "value": phase_value, "wall_s": phase_wall, "settle_value": settle_value, "settle_wall_s": settle_wall,
        "with_settle": total,
        # The baseline itself is the idle cost: its net is zero by definition, not rounding residue.
        "net": (phase_value - wide["idle_rate"] * phase_wall).where(~is_base, 0.0),
        "net_with_settle": (total - wide["idle_rate"] * total_wall).where(~is_base, 0.0),
        "idle_rate": wide["idle_rate"],
    })


def idle_rates(df: pd.DataFrame, metric: str) -> pd.Series:
    """Per engine start, the idle rate (metric per second) its windows are net of: its one idle
    baseline; or, where it took more (write_cost: one right after each cell's settle window, on the
    engine holding the cell's rows), the median of those after its first. The first, taken just
    after start-up, holds the start's tail (MySQL: 24 ms/s in its first second, against 8 once
    settled), and one later window can catch work a cell set off after its settle window ended."""
    base = df[(df["window"] == "baseline") & df["metric"].isin([metric, "wall_time"])]
    key = "seq" if "seq" in base else "labels"
    # A window stored without its sequence number (an imported or hand-made run) is still a window.
    base = base.assign(**{key: base[key].astype(object).where(base[key].notna(), "unnumbered")})
    windows = base.pivot_table(index=["instance_id", key], columns="metric", values="value", aggfunc="sum")
    # No idle window, or one without its own duration (a client's rows): no idle rate, NaN.
    if windows.empty or metric not in windows or "wall_time" not in windows:
        return pd.Series(dtype=float)
    rates = (windows[metric] / windows["wall_time"]).groupby(level="instance_id")
    return rates.apply(lambda r: r.iloc[1:].median() if len(r) > 1 else r.iloc[0])


def t_quantile_975(dof: int) -> float:
    """Two-sided 95% Student t quantile; a table avoids a SciPy dependency for one number."""
    table = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
             10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 30: 2.042, 60: 2.000}
    if dof < 1:
        return float("nan")
    if dof > 60:
        return 1.96
    return table[max(k for k in table if k <= dof)]  # the next smaller dof: errs on the wide side


def ci95_half_width(sd: float, n: int) -> float:
    """Half width of the 95% confidence interval of a mean of `n` values with standard deviation
    `sd` (Student t); NaN for fewer than two."""
    return t_quantile_975(int(n) - 1) * sd / math.sqrt(n) if n > 1 else float("nan")


def spread(grouped, columns: Iterable[str]) -> pd.DataFrame:
    """Per group of a DataFrameGroupBy: each column's standard deviation (`<col>_std`) and the
    half width of its mean's 95% CI (`<col>_ci95`), and `n`: what `contrast` reads beside a mean."""
    n = grouped.size()
    out = pd.DataFrame(index=n.index)
    for col in columns:
        std = grouped[col].std(ddof=1)
        out[f"{col}_std"] = std
        out[f"{col}_ci95"] = [ci95_half_width(sd, k) for k, sd in zip(n, std)]
    out["n"] = n
    return out


def summarize(costs: pd.DataFrame, columns=("value", "wall_s", "settle_value", "settle_wall_s", "with_settle",
                                             "net", "net_with_settle"), by=("engine", "labels", "phase")
              ) -> pd.DataFrame:
    """Mean over repetitions, with standard deviation, coefficient of variation and the half
    width of the 95% confidence interval of the mean (Student t), for the cost columns (those of
    them in `columns`: a frame of one `value` column, as the change list has, works too)."""
    grouped = costs.groupby(list(by), sort=False, dropna=False)
    out = grouped[list(columns)].mean()
    n = grouped.size()
    for col in [c for c in ("value", "with_settle", "net_with_settle") if c in columns]:
        std = grouped[col].std(ddof=1)
        out[f"{col}_std"] = std
        out[f"{col}_cv"] = std / out[col].abs()
        out[f"{col}_ci95"] = [ci95_half_width(sd, k) for k, sd in zip(n, std)]
        # The spread over repetitions, (max - min) / |mean|: how far apart the figures were, which
        # for an instruction count is the claim itself ("agree within 0.5%"); NaN for one figure.
        spread = (grouped[col].max() - grouped[col].min()) / out[col].abs()
        out[f"{col}_spread"] = spread.where(n > 1)
    out["n"] = n
    return out.reset_index()


def precision(run_id: str, *, floor: float, per: str | None = None, instance_id: str | None = None,
              measured_in: int | None = None, store: Store | None = None) -> pd.DataFrame:
    """How tight each engine-phase cost of a run is so far: mean, 95% CI half width and that
    width relative to the mean. Phases whose mean CPU is below `floor` seconds are
    `targeted=False`: a 4 ms cgroup tick on a 20 ms phase is noise no repetition count
    fixes, and a target for them would only burn the repetition budget. `per`: a reading of the
    phase window that divides its cost (a fixed-duration sysbench window's "transactions": its
    CPU per window is cores x seconds whatever the throughput). `instance_id`: one engine start.
    `measured_in`: only phases measured in that repetition (a start's one-off steps, a load say,
    can never gain a second value, and must not hold its repetitions open)."""
    df = measurements(run_id, store)
    if instance_id is not None:
        df = df[df["instance_id"] == instance_id]
    if df.empty:
        return pd.DataFrame(columns=["engine", "labels", "phase", "mean", "ci95", "rel_ci95", "spread", "n", "targeted",
                                     "metric"])
    metric, _, _ = cost_metric(df)
    keys = ["engine", "labels", "phase"]
    divisor = None
    if per is not None:
        counted = df[(df["metric"] == per) & (df["window"] == "phase")]
        divisor = counted.groupby(["instance_id", "repetition", "labels", "phase"])["value"].sum(min_count=1)

    def summary_of(name: str, divide: bool) -> pd.DataFrame:
        costs = phase_costs(df, name)
        costs = costs[~costs["is_baseline"]]
        if divide and divisor is not None:
            index = pd.MultiIndex.from_frame(costs[["instance_id", "repetition", "labels", "phase"]])
            costs = costs.assign(value=costs["value"].to_numpy() / divisor.reindex(index).to_numpy())
        return summarize(costs, by=tuple(keys))

    summary = summary_of(metric, True)
    counted_by_valgrind = (df["metric"] == metric).any() and metric == COST_METRICS[0][0] and \
        (df[(df["metric"] == metric) & (df["window"] == "phase")]["source"] == "valgrind").all()
    if measured_in is not None:
        recurring = df[(df["repetition"] == measured_in) & (df["window"] == "phase")]
        recurring = set(zip(recurring["engine"], recurring["labels"], recurring["phase"]))
        summary = summary[[k in recurring for k in zip(summary["engine"], summary["labels"], summary["phase"])]]
    # The floor is CPU seconds per window whatever the cost metric (instructions on a host with a PMU):
    # it stands for the resolution of cgroup CPU ticks. Callgrind's counts have none: every phase
    # counted by valgrind has a target.
    seconds = summary_of("cpu_time", False).set_index(keys)["value"]
    cpu = [seconds.get(k, float("nan")) for k in zip(summary["engine"], summary["labels"], summary["phase"])]
    return pd.DataFrame({
        "engine": summary["engine"], "labels": summary["labels"], "phase": summary["phase"],
        "mean": summary["value"], "ci95": summary["value_ci95"], "rel_ci95": summary["value_ci95"] / summary["value"],
        "spread": summary["value_spread"], "n": summary["n"],
        "targeted": [counted_by_valgrind or c >= floor for c in cpu], "metric": metric,
    })


@dataclass(frozen=True)
class PrecisionOutcome:
    """Whether every phase window with a precision target has a 95% CI within `ci_target`
    (`precision`'s table): `met`, and the counts behind it. A window with one value has no CI and
    counts as wide. The driver stops on it; a report reads it: one rule, no sentence between them."""
    met: bool
    wide: int  # targeted windows still wider than ci_target
    targeted: int
    table: pd.DataFrame  # precision's rows, each with `wide`

    @property
    def widest(self) -> pd.Series | None:
        target = self.table[self.table["targeted"]]
        return None if target.empty else target.sort_values("rel_ci95", ascending=False, na_position="first").iloc[0]


# Instruction counts (valgrind's, deterministic) of a phase within this spread of each other (max -
# min over the mean): one more repetition would count the same, so the repetitions stop.
INSTRUCTIONS_AGREE = 0.005


def precision_outcome(run_id: str, ci_target: float, *, floor: float, per: str | None = None,
                      instance_id: str | None = None, measured_in: int | None = None,
                      store: Store | None = None, recurring_only: bool = False) -> PrecisionOutcome:
    """`recurring_only`: leave out a phase measured once by an engine that repeated others (a
    one-off step, a load say, can gain no second value): what the driver's `measured_in` leaves
    out, for a whole run read afterwards."""
    p = precision(run_id, floor=floor, per=per, instance_id=instance_id, measured_in=measured_in, store=store)
    if recurring_only and not p.empty:
        p = p[~((p["n"] == 1) & (p.groupby("engine")["n"].transform("max") > 1))]
    # NaN (one repetition) counts as wide; instruction counts that agree within INSTRUCTIONS_AGREE
    # do not: one more repetition would count the same.
    p = p.assign(agree=(p["metric"] == "instructions_user") & (p["spread"] <= INSTRUCTIONS_AGREE))
    p = p.assign(wide=p["targeted"] & ~(p["rel_ci95"] <= ci_target) & ~p["agree"])
    return PrecisionOutcome(met=not p["wide"].any(), wide=int(p["wide"].sum()), targeted=int(p["targeted"].sum()),
                            table=p)


def start_labels(measurements: pd.DataFrame, key: str) -> dict:
    """Engine start -> the value its windows' labels give `key` (a start's regime: one value per
    start), for the starts that carry it."""
    if "labels" not in measurements:
        return {}
    tagged = measurements[measurements["labels"].str.contains(f'"{key}"', na=False)].drop_duplicates("instance_id")
    found = {i: json.loads(labels).get(key) for i, labels in zip(tagged["instance_id"], tagged["labels"])}
    return {i: v for i, v in found.items() if v is not None}


def calibrations(df: pd.DataFrame) -> pd.DataFrame:
    """Per engine start and repetition, the calibration loop's CPU seconds (measure.calibrate;
    warm-ups excluded): the host's own speed at that moment. Empty for runs stored before it."""
    rows = df[(df["metric"] == "calibration_cpu_time") & (df["window"] == "calibration")]
    return (rows[["run_id", "instance_id", "engine", "repetition", "value"]
                 + (["started_at"] if "started_at" in rows else [])]
            .rename(columns={"value": "calibration_s"}).reset_index(drop=True))


def host_speed(df: pd.DataFrame) -> dict[str, float] | None:
    """How much the host's speed moved over a run's calibrations: mean, relative standard
    deviation, 95% CI half width relative to the mean, and max / min. None: no calibration."""
    c = calibrations(df)["calibration_s"].dropna()
    if c.empty:
        return None
    n, mean = len(c), float(c.mean())
    sd = float(c.std(ddof=1)) if n > 1 else float("nan")
    return {"n": n, "mean_s": mean, "rel_sd": sd / mean, "rel_ci95": ci95_half_width(sd, n) / mean
            if n > 1 else float("nan"), "max_over_min": float(c.max() / c.min())}


def host_factor(df: pd.DataFrame, subject, base, by: str | list[str] = "engine") -> float:
    """What the host's speed alone makes a cost's ratio subject / base: the subject's median
    calibration loop over the base's (1.25: the subject's host ran 1.25x slower, so a cost ratio up
    to 1.25 could be the host's alone: findings.judge's band). `by`: the column(s) naming the two
    sides (`run_id` between runs). NaN where either side has no calibration."""
    return loop_factor(calibrations(df), subject, base, by)


def loop_factor(loops: pd.DataFrame, subject, base, by: str | list[str] = "engine") -> float:
    """`host_factor` over calibration rows (`calibrations`, or a subset of them: one regime's)."""
    medians = loops.dropna(subset=["calibration_s"]).groupby(by)["calibration_s"].median()
    if subject not in medians or base not in medians or not medians[base] > 0:
        return float("nan")
    return float(medians[subject] / medians[base])


def normalised(costs: pd.DataFrame, df: pd.DataFrame, columns=("value", "net", "net_with_settle", "with_settle")
               ) -> pd.DataFrame:
    """`costs` (phase_costs rows) with each repetition's figures scaled by how fast the host was
    then: x (the run's median calibration / that start and repetition's calibration). A
    repetition measured while the host ran 10% slow has its cost scaled down by 10%. Rows without
    a calibration are dropped: a normalised figure is never a raw one in disguise."""
    c = calibrations(df)
    if c.empty:
        return costs.iloc[0:0]
    # A step-major start calibrates beside every step: one factor per repetition, from its median.
    per_repetition = c.groupby(["instance_id", "repetition"])["calibration_s"].median()
    factor = (c["calibration_s"].median() / per_repetition).rename("factor")
    out = costs.join(factor, on=["instance_id", "repetition"], how="inner")
    for col in columns:
        if col in out:
            out[col] = out[col] * out["factor"]
    return out.drop(columns="factor")


def welch(mean_a: float, sd_a: float, n_a: int, mean_b: float, sd_b: float, n_b: int, *,
          exact: bool = False) -> tuple[float, float]:
    """Welch's unequal-variances t statistic of b - a and its Welch-Satterthwaite degrees of
    freedom; NaN where either side has fewer than two repetitions (no variance, no test).
    `exact`: the figures are counts that repeat exactly when the work does (valgrind's
    instructions), so identical repetitions are certainty, not resolution."""
    if n_a < 2 or n_b < 2 or any(math.isnan(x) for x in (mean_a, sd_a, mean_b, sd_b)):
        return float("nan"), float("nan")
    va, vb = sd_a ** 2 / n_a, sd_b ** 2 / n_b
    if va + vb == 0:
        if exact:
            return math.copysign(math.inf, mean_b - mean_a) if mean_a != mean_b else 0.0, float(n_a + n_b - 2)
        # Identical repetitions: cgroup v1 counts CPU in 4 ms ticks, so a cheap phase repeats its
        # value exactly. That is resolution, not certainty: untestable, never "infinitely significant".
        return (0.0, float(n_a + n_b - 2)) if mean_a == mean_b else (float("nan"), float("nan"))
    dof = (va + vb) ** 2 / ((va ** 2 / (n_a - 1) if va else 0.0) + (vb ** 2 / (n_b - 1) if vb else 0.0))
    return (mean_b - mean_a) / math.sqrt(va + vb), dof


def beyond_noise(t: float, dof: float) -> bool | None:
    """Is the difference significant at the 5% level (two-sided)? None when it cannot be tested."""
    if math.isnan(t) or math.isnan(dof):
        return None
    return abs(t) > t_quantile_975(int(dof))


def product_key(engine: str) -> str:
    """The engine key without its version (postgres@15 -> postgres): how runs of different
    versions are paired."""
    return engine.partition("@")[0]


WINDOW_KEYS = ["run_id", "instance_id", "labels", "phase", "repetition"]


def operation_counts(m: pd.DataFrame, store: Store | None = None, *, per_operation: Callable[[str], Any]
                     ) -> pd.Series:
    """How many operations each phase window of `m` (measurement rows of one or more runs) held,
    keyed by WINDOW_KEYS, by each run's workload's `per_operation`: a reading of the window
    (sysbench's transactions), a run parameter (DML's rows) or a window label (the client API's
    objects). NaN where the workload names none or the window lacks it: never a guess.
    `per_operation`: experiment -> its workload's `per_operation` (workloads.per_operation; the
    workloads sit above this layer, so the caller passes it)."""
    phase = m[m["window"] == "phase"]
    windows = phase[WINDOW_KEYS].drop_duplicates()
    counts = pd.Series(float("nan"), index=pd.MultiIndex.from_frame(windows), dtype=float)
    if windows.empty:
        return counts
    runs = (store or Store.default()).query(
        "select run_id, experiment, parameters from runs where run_id in (select unnest(?))",
        [sorted(set(windows["run_id"]))])
    for run_id, experiment, text in zip(runs["run_id"], runs["experiment"], runs["parameters"]):
        per = per_operation(experiment)
        mine = windows[windows["run_id"] == run_id]
        if per is None or mine.empty:
            continue
        index = pd.MultiIndex.from_frame(mine)
        if per.source == "reading":
            read = phase[(phase["metric"] == per.name) & (phase["run_id"] == run_id)]
            values = read.groupby(WINDOW_KEYS)["value"].sum(min_count=1).reindex(index)
        elif per.source == "parameter":
            value = json.loads(text or "{}").get(per.name)
            number = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else float("nan")
            values = pd.Series(number, index=index)
        else:
            labels = mine["labels"].map(lambda t: json.loads(t) if isinstance(t, str) else {})
            values = pd.Series([float(d[per.name]) if d.get(per.name) else float("nan") for d in labels], index=index)
        counts.loc[index] = values.to_numpy()
    return counts.where(counts > 0)


def contrast(base, other, column: str, threshold: float = 0.05, *, exact: bool = False) -> dict:
    """`other` against `base`, two rows of `summarize` output for `column`: both means with CIs,
    the ratio with its 95% CI and Welch's test (`beyond_noise`: does it tell them apart at 5%,
    two-sided; None: untestable). The verdict is findings.judge's, from these (comparison.judged);
    `flagged` here is the test and `threshold` alone, for callers that have no verdict yet.

    Where both means are positive, the test and the CI are one computation on the log scale:
    log(b / a) against its standard error (each mean's relative standard error, the delta method),
    with Welch-Satterthwaite degrees of freedom of those errors. The CI, ratio x exp(±t·se)
    (`ratio_low`, `ratio_high`), is never negative and excludes 1 exactly when the test tells
    the two apart. `ratio_ci95` is half its width, for error bars only: a text prints the
    interval. `exact`: counts that repeat exactly (`welch`). Other signs fall back to Welch's test of b - a and a symmetric delta-method CI."""
    a, b = float(base[column]), float(other[column])
    a_ci, b_ci = float(base[f"{column}_ci95"]), float(other[f"{column}_ci95"])
    sd_a, sd_b, n_a, n_b = float(base[f"{column}_std"]), float(other[f"{column}_std"]), int(base["n"]), int(other["n"])
    ratio = b / a if a else float("nan")
    if a > 0 and b > 0:
        # Welch on the log scale: the relative standard errors stand in for the standard deviations.
        t, dof = welch(math.log(a), sd_a / a, n_a, math.log(b), sd_b / b, n_b, exact=exact)
        se = math.sqrt(sd_a ** 2 / n_a / a ** 2 + sd_b ** 2 / n_b / b ** 2) if n_a > 1 and n_b > 1 else float("nan")
        spread = math.exp(t_quantile_975(int(dof)) * se) if dof == dof and se == se else float("nan")
        low, high = ratio / spread, ratio * spread
    else:
        t, dof = welch(a, sd_a, n_a, b, sd_b, n_b, exact=exact)
        rel_se = math.sqrt(sd_a ** 2 / n_a / a ** 2 + sd_b ** 2 / n_b / b ** 2) if a and b and n_a > 1 and n_b > 1 \
            else float("nan")
        half = abs(ratio) * t_quantile_975(int(dof)) * rel_se if dof == dof else float("nan")
        low, high = ratio - half, ratio + half
    noise = beyond_noise(t, dof)
    return {"mean": b, "ci95": b_ci, "n": n_b, "base_mean": a, "base_ci95": a_ci, "base_n": n_a,
            "ratio": ratio, "ratio_ci95": (high - low) / 2, "ratio_low": low, "ratio_high": high,
            "welch_t": t, "welch_dof": dof, "beyond_noise": noise,
            "flagged": bool(noise) and abs(ratio - 1) > threshold}


def geometric_mean(values: Iterable[float]) -> float:
    logs = [math.log(v) for v in values if v and v > 0 and not math.isnan(v)]
    return math.exp(sum(logs) / len(logs)) if logs else float("nan")


def geometric_mean_ci(values: Iterable[float], lows: Iterable[float] | None = None,
                      highs: Iterable[float] | None = None) -> tuple[float, float, float]:
    """The geometric mean of positive ratios with its 95% CI on the log scale: the wider of the
    ratios' spread (Student t, each a sample of one common shift; NaN under two ratios) and, with
    each ratio's own 95% CI (`lows`, `highs`), their own variance carried into the mean: se_i =
    (log high - log low) / (2 x 1.96), var = sum(se_i^2) / k^2 (hostile read 47, 06: cells 10-60x
    wide gave a mean CI of 0.78-1.27). A ratio whose own CI is unknown leaves the mean's CI NaN."""
    ratios = list(values)
    ends = list(zip(lows, highs)) if lows is not None and highs is not None else [(None, None)] * len(ratios)
    kept = [(v, lo, hi) for v, (lo, hi) in zip(ratios, ends, strict=True) if v and v > 0 and not math.isnan(v)]
    if not kept:
        return float("nan"), float("nan"), float("nan")
    logs = [math.log(v) for v, _, _ in kept]
    k = len(logs)
    mean = sum(logs) / k
    half = ci95_half_width(pd.Series(logs).std(ddof=1), k) if k > 1 else float("nan")
    if lows is not None and highs is not None:
        se = [(math.log(hi) - math.log(lo)) / (2 * 1.96) if lo and hi and lo > 0 and hi > 0 else float("nan")
              for _, lo, hi in kept]
        own = 1.96 * math.sqrt(sum(e * e for e in se)) / k
        if own != own:  # a ratio's own CI unknown: so is the mean's
            half = float("nan")
        elif not half >= own:  # the wider of the two (the spread is NaN under two ratios)
            half = own
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


def reference(name: str, **read_csv) -> pd.DataFrame:
    """A transcribed reference table; `read_csv`: pandas options (dtype=str keeps "11.10" a version)."""
    return pd.read_csv(get_settings().reference_dir / f"{name}.csv", **read_csv)


def ratios_to(df: pd.DataFrame, value: str, base_engine: str = "postgres") -> pd.DataFrame:
    """value / value of `base_engine` for the same phase."""
    base = df[df["engine"] == base_engine].set_index("phase")[value]
    out = df[["engine", "phase"]].copy()
    out["ratio"] = df[value].to_numpy() / df["phase"].map(base).to_numpy()
    return out


PROFILE_KINDS = ("function", "subsystem")


def instruction_profile(run_id: str | list[str], kind: str = "subsystem", store: Store | None = None) -> pd.DataFrame:
    """Where the run's instructions went, window by window (the `profiles` table, long format):
    `kind` 'subsystem' gives each window's self instructions per subsystem (they sum to the
    window's `window_instructions`), 'function' its top functions by self and inclusive
    instructions; each row with its share of the window. Empty when nothing was counted under
    valgrind: a run without profiles has none, which is not zero instructions."""
    if kind not in PROFILE_KINDS:
        raise ParameterError(f"kind must be one of {', '.join(PROFILE_KINDS)}, got {kind!r}")
    ids = [run_id] if isinstance(run_id, str) else list(run_id)
    df = _store(store).query(
        "select * exclude (schema_version), self_instructions / window_instructions as self_share, "
        "inclusive_instructions / window_instructions as inclusive_share from profiles "
        "where run_id in (select unnest(?)) and kind = ? order by seq, \"window\", self_instructions desc", [ids, kind])
    if df.empty and not set(ids) & set(_store(store).run_ids()):
        raise StoreError(f"no run {', '.join(ids)} in {_store(store).where}")
    return df
