"""Reading results back as tidy DataFrames, so notebooks never write SQL against raw tables."""
from __future__ import annotations

import json

import pandas as pd

from .errors import StoreError
from .settings import get_settings
from .store import Store

# Preferred cost metric first; the first one the run measured on every row stands in.
COST_METRICS = [("instructions_user", "instructions"), ("cpu_time", "s")]


def _store(store: Store | None) -> Store:
    return store or Store.default()


def runs(*, experiment: str | None = None, limit: int = 20, store: Store | None = None) -> pd.DataFrame:
    where = "where experiment = ?" if experiment else ""
    return _store(store).query(
        f"select run_id, experiment, notebook, status, started_at, ended_at, hostname, cpu_model, kernel, "
        f"benchlib_version, git_sha, owner, status_note, error from runs {where} order by started_at desc limit {int(limit)}",
        [experiment] if experiment else [],
    )


def run_info(run_id: str, store: Store | None = None) -> dict:
    df = _store(store).query("select * from runs where run_id = ?", [run_id])
    if df.empty:
        raise StoreError(f"no run {run_id!r} in {_store(store).root}")
    info = df.iloc[0].to_dict()
    info["parameters"] = json.loads(info["parameters"] or "{}")
    info["perf_support"] = json.loads(info["perf_support"] or "{}")
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
        raise StoreError(f"no run {', '.join(ids)} in {_store(store).root}")
    return df


def latest_run_per_engine(experiment: str, store: Store | None = None) -> pd.DataFrame:
    """For each engine, the newest finished-ok run of `experiment` that measured it."""
    return _store(store).query(
        "select engine, arg_max(run_id, r.started_at) as run_id, max(r.started_at) as started_at "
        "from (select distinct run_id, engine from measurements where experiment = ?) m "
        "join runs r using (run_id) where r.status = 'ok' group by engine order by engine", [experiment])


ENGINE_SCOPES = ("server", "embedded")


def engine_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The engine's own rows (its cgroup, or the process of an embedded engine), not the client's."""
    return df[df["scope"].isin(ENGINE_SCOPES)]


def cost_metric(df: pd.DataFrame) -> tuple[str, str, str]:
    """(metric, unit, explanation): user-space instructions where perf counted them in every
    engine window (seed 000's metric), else CPU time from the engine's accounting."""
    df = engine_rows(df)
    counted = df[(df["metric"] == "instructions_user") & (df["window"] != "baseline")]
    if not counted.empty and (counted["status"] == "ok").all():
        return "instructions_user", "instructions", "user-space instructions counted by perf (as in seed 000)"
    statuses = ", ".join(sorted(set(counted["status"]))) or "not recorded"
    sources = ", ".join(sorted(set(df[df["metric"] == "cpu_time"]["source"]))) or "cgroup"
    return ("cpu_time", "s", f"CPU seconds (user+system) from {sources} accounting stand in for instructions: "
            f"perf's instructions:u on this host was {statuses}")


def phase_costs(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per engine start, variant (labels) and phase: the engine's metric in the phase window, in
    the settle window, and both with the engine's idle rate x duration subtracted (the idle rate
    comes from the baseline window of the same engine start). Baseline windows appear as their
    own phase."""
    df = engine_rows(df)
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
    base = wide[is_base].drop_duplicates("instance_id").set_index("instance_id")
    rate = (base[f"baseline_{metric}"] / base["baseline_wall_time"]).rename("idle_rate")
    wide = wide.join(rate, on="instance_id")
    phase_value = wide[f"phase_{metric}"].where(~is_base, wide[f"baseline_{metric}"])
    phase_wall = wide["phase_wall_time"].where(~is_base, wide["baseline_wall_time"])
    # No settle window (embedded engines, baselines) stays NaN in settle columns: not measured is
    # not zero. Sums treat it as nothing to add.
    settle_value = wide[f"settle_{metric}"].where(~is_base)
    settle_wall = wide["settle_wall_time"].where(~is_base)
    total = phase_value + settle_value.fillna(0.0)
    total_wall = phase_wall + settle_wall.fillna(0.0)
    return pd.DataFrame({
        "run_id": wide["run_id"], "engine": wide["engine"], "repetition": wide["repetition"],
        "labels": wide["labels"], "phase": wide["phase"], "is_baseline": is_base,
        "value": phase_value, "wall_s": phase_wall, "settle_value": settle_value, "settle_wall_s": settle_wall,
        "with_settle": total,
        # The baseline itself is the idle cost: its net is zero by definition, not rounding residue.
        "net": (phase_value - wide["idle_rate"] * phase_wall).where(~is_base, 0.0),
        "net_with_settle": (total - wide["idle_rate"] * total_wall).where(~is_base, 0.0),
        "idle_rate": wide["idle_rate"],
    })


def t_quantile_975(dof: int) -> float:
    """Two-sided 95% Student t quantile; a table avoids a SciPy dependency for one number."""
    table = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
             10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 30: 2.042, 60: 2.000}
    if dof < 1:
        return float("nan")
    if dof > 60:
        return 1.96
    return table[max(k for k in table if k <= dof)]  # the next smaller dof: errs on the wide side


def summarize(costs: pd.DataFrame, columns=("value", "wall_s", "settle_value", "settle_wall_s", "with_settle",
                                             "net", "net_with_settle"), by=("engine", "labels", "phase")
              ) -> pd.DataFrame:
    """Mean over repetitions, with standard deviation, coefficient of variation and the half
    width of the 95% confidence interval of the mean (Student t), for the cost columns."""
    grouped = costs.groupby(list(by), sort=False, dropna=False)
    out = grouped[list(columns)].mean()
    n = grouped.size()
    for col in ("value", "with_settle", "net_with_settle"):
        std = grouped[col].std(ddof=1)
        out[f"{col}_std"] = std
        out[f"{col}_cv"] = std / out[col].abs()
        out[f"{col}_ci95"] = [t_quantile_975(int(k) - 1) * sd / k ** 0.5 if k > 1 else float("nan")
                              for k, sd in zip(n, std)]
    out["n"] = n
    return out.reset_index()


def compare_runs(run_a: str, run_b: str, *, metric: str = "cpu_time", window: str = "phase",
                 store: Store | None = None) -> pd.DataFrame:
    """Mean of `metric` per engine and phase in two runs, and the ratio b / a."""
    df = engine_rows(measurements([run_a, run_b], store))
    df = df[(df["metric"] == metric) & (df["window"] == window)]
    means = df.groupby(["engine", "phase", "run_id"])["value"].mean().unstack("run_id")
    for run in (run_a, run_b):
        if run not in means:
            means[run] = float("nan")
    out = pd.DataFrame({"a": means[run_a], "b": means[run_b]})
    out["ratio_b_over_a"] = out["b"] / out["a"]
    return out.reset_index().assign(metric=metric, window=window, run_a=run_a, run_b=run_b)


def reference(name: str = "seed000_dml_instructions") -> pd.DataFrame:
    return pd.read_csv(get_settings().reference_dir / f"{name}.csv")


def ratios_to(df: pd.DataFrame, value: str, base_engine: str = "postgres") -> pd.DataFrame:
    """value / value of `base_engine` for the same phase."""
    base = df[df["engine"] == base_engine].set_index("phase")[value]
    out = df[["engine", "phase"]].copy()
    out["ratio"] = df[value].to_numpy() / df["phase"].map(base).to_numpy()
    return out
