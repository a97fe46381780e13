"""Changes across runs, listed the way a regression tracker lists them.

Every stored run's cells (engine x phase x labels) become per-repetition figures of every metric
the store holds for them, plus per-operation figures where the window says how many operations it
did; a *series* is one cell of one experiment on one host class with the same measuring
parameters, followed over time. A change is a pair of consecutive finished runs of a series whose
verdict (findings.judge: Welch's test on the repetitions, then a threshold) is better or worse. `benchlib changes` prints the list; the explorer page (`benchlib.compare.explorer`) draws the
same figures."""
from __future__ import annotations

import json
from dataclasses import dataclass

import pandas as pd

from ..data import comparison, results
from ..host.cgroups import NODE_SCOPE
from ..core.errors import ParameterError
from ..data.store import Store
from ..workloads import per_operation

FINISHED = ("ok", "partial")
DEFAULT_THRESHOLD = 0.05  # seed 003's rule, as in notebook 06

# Parameters that only choose which cells a run measures (each cell names its variant in its
# labels) or how many repetitions it takes. Every other parameter (rows, table_size, pk_kind,
# engine_config, idle_seconds, ...) changes what a cell measures: runs differing in one are
# never paired.
CELL_NEUTRAL_PARAMETERS = frozenset({
    "engines", "tests", "threads", "regimes", "layers", "transports", "contended_modes", "key_kinds", "insert_orders",
    "repetitions", "max_repetitions", "ci_target", "p95_goal_ms", "prices_per_hour", "host_class", "until_p95_goal",
    "bisect_steps", "skipped"})

PAIRING_RULE = ("each finished run (ok or partial) is compared with the previous finished run of the same series: "
                "experiment, engine key (a pinned version such as postgres@15 is its own series), phase, labels, "
                "host class (hostname and CPU model) and measuring parameters (all run parameters except "
                + ", ".join(sorted(CELL_NEUTRAL_PARAMETERS)) + ", which only choose cells or repetitions)")

ENGINE, CLIENT = "engine", "client"  # whose resources: the engine (server cgroup or embedded process), the client
OWN_WINDOWS = ("baseline", "phase")  # a phase's own window; an idle baseline phase has only that one
SETTLE = "settle"
OPERATIONS = "transactions"  # sysbench's events, rows a clustered load inserted, lookups it made
# Rates, levels and latencies, not amounts accumulated over the window: never divided by operations.
NOT_PER_OPERATION = frozenset({"tps", "qps", "latency_avg", "latency_p95", "latency_p99", "latency_max",
                               "memory_peak_bytes", "memory_peak_since_start_bytes", "buffer_pool_bytes",
                               "client_elapsed", OPERATIONS})
HIGHER_IS_BETTER = frozenset({"tps", "qps"})
SETTLED_METRICS = tuple(name for name, _ in results.COST_METRICS)  # the engine's deferred work counts for these
# The cost a change list follows by default, first present in both runs of a pair: per operation
# where the window counted them, instructions where perf counted them (as results.cost_metric).
COST_PREFERENCE = tuple(f"{ENGINE}:{name}/op" for name in SETTLED_METRICS) + tuple(
    f"{ENGINE}:{name}" for name in SETTLED_METRICS)
HEADLINE_METRICS = (f"{CLIENT}:tps", f"{CLIENT}:latency_p95")  # also followed by the explorer's change view

TITLES = {
    "cpu_time": "CPU", "cpu_user_time": "user CPU", "cpu_system_time": "system CPU", "wall_time": "wall time",
    "io_read_bytes": "storage read bytes (cgroup)", "io_write_bytes": "storage write bytes (cgroup)",
    "memory_peak_bytes": "peak memory", "memory_peak_since_start_bytes": "peak memory since start",
    "instructions_user": "user-space instructions", "cycles": "cycles", "task_clock": "task clock",
    "maintenance_cpu_time": "maintenance CPU", "tps": "TPS", "qps": "QPS", "latency_avg": "mean latency",
    "latency_p95": "p95 latency", "latency_p99": "p99 latency", "latency_max": "max latency",
    OPERATIONS: "operations", "engine_reads": "storage reads (engine counter)",
    "engine_read_bytes": "storage read bytes (engine counter)", "engine_buffer_hits": "buffer hits",
    "table_bytes": "table bytes", "index_bytes": "index bytes",
}


@dataclass(frozen=True)
class Metric:
    """One figure a cell can be read in: `<group>:<store metric>[+settle][/op]`."""

    group: str
    name: str
    settle: bool = False
    per_operation: bool = False

    @property
    def id(self) -> str:
        return f"{self.group}:{self.name}{'+settle' if self.settle else ''}{'/op' if self.per_operation else ''}"

    @classmethod
    def parse(cls, metric_id: str) -> "Metric":
        group, _, rest = metric_id.partition(":")
        per_operation = rest.endswith("/op")
        rest = rest.removesuffix("/op")
        settle = rest.endswith("+settle")
        return cls(group, rest.removesuffix("+settle"), settle, per_operation)

    @property
    def better(self) -> str:
        return "higher" if self.name in HIGHER_IS_BETTER else "lower"

    def unit(self, store_unit: str) -> str:
        if self.per_operation:
            return "µs/op" if store_unit == "s" else f"{store_unit}/op"
        return store_unit

    def title(self, store_unit: str, *, with_group: bool) -> str:
        what = TITLES.get(self.name, self.name.replace("_", " "))
        text = f"{self.group} {what}" if with_group else what
        if self.per_operation:
            text += " per operation"
        if self.settle:
            text += ", phase + settle"
        return f"{text} ({self.unit(store_unit)})"


def observations(run_ids: list[str], store: Store | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(samples, metrics). samples: one row per run, engine, labels, phase, sample (an engine start's
    repetition) and metric id, with its value; metrics: id, title, unit and which way is better,
    for the metric ids present. Per operation: divided by the operations each workload declares
    for its windows (`Workload.per_operation`, through results.operation_counts), as notebook 06."""
    # Not results.measurements: its every column and provenance join for each row take most of
    # the explorer's time over a store of hundreds of runs; these are the columns a figure needs.
    m = (store or Store.default()).query(
        "select run_id, instance_id, engine, labels, phase, repetition, \"window\", scope, metric, unit, value "
        "from measurements where run_id in (select unnest(?)) and \"window\" in (select unnest(?)) "
        # The harness's own waits are not a figure; a cluster node's own rows are not either: its
        # cluster's summed rows already carry the engine's cost.
        "and value is not null and scope not in ('harness', ?)",
        [list(run_ids), list(OWN_WINDOWS + (SETTLE,)), NODE_SCOPE])
    keys = ["run_id", "instance_id", "engine", "labels", "phase", "repetition"]
    frame = m.assign(group=m["scope"].isin(results.ENGINE_SCOPES).map({True: ENGINE, False: CLIENT}),
                     own=m["window"].isin(OWN_WINDOWS), baseline=m["window"] == "baseline")
    units = frame.drop_duplicates("metric").set_index("metric")["unit"].to_dict()
    # sort=False: cells keep the order they were measured in (a DML run's sleep, insert, ...).
    wide = frame.pivot_table(index=keys, columns=["own", "group", "metric"], values="value", aggfunc="sum",
                             sort=False)
    baseline = frame.groupby(keys)["baseline"].any().reindex(wide.index)
    counts = results.operation_counts(m, store, per_operation=per_operation)  # each workload's own operation (results.WINDOW_KEYS)
    operations = pd.Series(counts.reindex(wide.index.droplevel("engine").reorder_levels(results.WINDOW_KEYS))
                           .to_numpy(), index=wide.index, dtype=float).where(~baseline)

    figures: dict[str, pd.Series] = {}
    for own, group, name in wide.columns:
        if not own:
            continue
        value = wide[(own, group, name)]
        variants = [(Metric(group, name), value)]
        if group == ENGINE and name in SETTLED_METRICS:
            # No settle window (embedded engines) adds nothing, as in results.phase_costs.
            settle = wide[(False, group, name)].fillna(0.0) if (False, group, name) in wide else 0.0
            variants.append((Metric(group, name, settle=True), value + settle))
        for metric, series in variants:
            figures[metric.id] = series
            if name not in NOT_PER_OPERATION:
                scale = 1e6 if units.get(name) == "s" else 1.0
                figures[Metric(group, name, metric.settle, True).id] = series * scale / operations
    if not figures:
        empty = pd.DataFrame(columns=["run_id", "engine", "labels", "phase", "sample", "metric", "value"])
        return empty, pd.DataFrame(columns=["id", "title", "unit", "better"])
    samples = pd.DataFrame(figures).rename_axis(columns="metric").stack(future_stack=True).dropna()
    samples = samples.rename("value").reset_index()
    samples["sample"] = samples["instance_id"] + "#" + samples["repetition"].astype(str)
    samples = samples[["run_id", "engine", "labels", "phase", "sample", "metric", "value"]]
    return samples, metric_catalogue(sorted(set(samples["metric"])), units)


def metric_catalogue(metric_ids: list[str], units: dict[str, str]) -> pd.DataFrame:
    parsed = [Metric.parse(i) for i in metric_ids]
    groups_of: dict[str, set[str]] = {}
    for metric in parsed:
        groups_of.setdefault(metric.name, set()).add(metric.group)
    return pd.DataFrame([{
        "id": metric.id, "unit": metric.unit(units.get(metric.name, "")), "better": metric.better,
        # A client figure is named so only where the engine has the same one (CPU of both):
        # TPS and latencies are what the client saw, without saying it.
        "title": metric.title(units.get(metric.name, ""),
                              with_group=metric.group == ENGINE or len(groups_of[metric.name]) > 1),
    } for metric in parsed], columns=["id", "title", "unit", "better"])


def summaries(samples: pd.DataFrame) -> pd.DataFrame:
    """Mean, standard deviation, 95% CI and n per run, engine, labels, phase and metric."""
    return results.summarize(samples, columns=("value",), by=("run_id", "engine", "labels", "phase", "metric"))


def run_table(store: Store | None = None, run_ids: list[str] | None = None) -> pd.DataFrame:
    """Runs with what pairs them (host class, measuring parameters) and their provenance."""
    where = "where run_id in (select unnest(?))" if run_ids is not None else ""
    runs = (store or Store.default()).query(
        "select run_id, experiment, notebook, status, started_at, hostname, cpu_model, cpu_cores, git_sha, git_dirty, "
        f"benchlib_version, parameters, host_class as declared_class, host_fingerprint from runs {where} "
        "order by started_at, run_id",
        [list(run_ids)] if run_ids is not None else [])
    parameters = [json.loads(p or "{}") for p in runs["parameters"]]
    runs["parameters"] = parameters
    runs["measuring"] = [json.dumps({k: v for k, v in p.items() if k not in CELL_NEUTRAL_PARAMETERS}, sort_keys=True,
                                    default=str) for p in parameters]
    # Like with like: hosts of one declared class pair with each other as long as their fingerprints
    # (CPU, cores, memory, kernel, cgroups, PMU) agree; an undeclared host is its own class.
    runs["host_class"] = [f"{d} [{f}]" if isinstance(d, str) and d and isinstance(f, str) else f"{h} ({c})"
                          for h, c, d, f in zip(runs["hostname"], runs["cpu_model"], runs["declared_class"],
                                                runs["host_fingerprint"])]
    return runs


def versions(store: Store | None = None, run_ids: list[str] | None = None) -> pd.DataFrame:
    """Per run and engine: the server version and image that ran (the first start's)."""
    where = "where run_id in (select unnest(?))" if run_ids is not None else ""
    return (store or Store.default()).query(
        "select run_id, engine, arg_min(server_version, started_at) as server_version, "
        "arg_min(image_ref, started_at) as image_ref, arg_min(image_source, started_at) as image_source "
        f"from instances {where} group by run_id, engine", [list(run_ids)] if run_ids is not None else [])


SERIES = ["experiment", "engine", "phase", "labels", "host_class", "measuring"]
CHANGE_COLUMNS = SERIES + [
    "metric", "from_run", "to_run", "from_started", "to_started", "from_version", "to_version", "from_git", "to_git",
    # No host band between a series' runs here (a summary holds no calibration loops): no host_factor.
    "better", "direction", *(c for c in comparison.COMPARISON_COLUMNS[8:] if c != "host_factor")]


def pairs(summary: pd.DataFrame, runs: pd.DataFrame, engine_versions: pd.DataFrame, metric_ids: list[str], *,
          threshold: float = DEFAULT_THRESHOLD, latest: bool = False) -> pd.DataFrame:
    """Every consecutive pair of finished runs in each series, in each of `metric_ids`, tested with
    results.contrast: ratio of the later run to the earlier with its 95% CI, Welch's t, its
    `verdict` (findings.judge with `threshold`; `flagged`: better or worse), and `direction`
    (regression or improvement, by which way the metric is better). With several metric ids, a
    pair is kept in the first that both runs have (COST_PREFERENCE). `latest`: each series' newest
    pair only (what a gate on the newest run wants)."""
    finished = runs[runs["status"].isin(FINISHED)]
    cells = summary[summary["metric"].isin(metric_ids)].merge(
        finished[["run_id", "experiment", "started_at", "host_class", "measuring", "git_sha", "git_dirty"]],
        on="run_id").merge(engine_versions[["run_id", "engine", "server_version"]], on=["run_id", "engine"], how="left")
    cells = cells.sort_values(["started_at", "run_id"], kind="stable").reset_index(drop=True)
    previous = cells.groupby(SERIES + ["metric"], sort=False, dropna=False).shift(1)  # the series' run before
    paired = previous["run_id"].notna()
    found = [_pair(before, after, threshold) for before, after in
             zip(previous[paired].to_dict("records"), cells[paired].to_dict("records"))]
    if not found:
        return pd.DataFrame(columns=CHANGE_COLUMNS)
    out = pd.DataFrame(found)
    if len(metric_ids) > 1:
        out["_rank"] = out["metric"].map({m: i for i, m in enumerate(metric_ids)})
        out = (out.sort_values("_rank", kind="stable").drop_duplicates(SERIES + ["from_run", "to_run"])
               .drop(columns="_rank"))
    if latest:
        out = out.sort_values("to_started", kind="stable").drop_duplicates(SERIES, keep="last")
    return out.sort_values(["to_started", "experiment", "engine", "phase"], kind="stable").reset_index(drop=True)[
        CHANGE_COLUMNS]


def _pair(before: dict, after: dict, threshold: float) -> dict:
    metric = Metric.parse(after["metric"])
    tested = comparison.judged(results.contrast(before, after, "value", threshold),
                            higher_is_better=metric.better == "higher", threshold=threshold)
    worse = tested["ratio"] < 1 if metric.better == "higher" else tested["ratio"] > 1
    return {
        **{k: after[k] for k in SERIES}, "metric": metric.id,
        "from_run": before["run_id"], "to_run": after["run_id"],
        "from_started": before["started_at"], "to_started": after["started_at"],
        "from_version": before["server_version"], "to_version": after["server_version"],
        "from_git": git_label(before), "to_git": git_label(after), "better": metric.better,
        "direction": "regression" if worse else "improvement", **tested,
    }


def git_label(run: dict) -> str:
    """The run's benchlib commit, short, marked when the tree had uncommitted changes."""
    # Outside a git checkout both are missing (NULL in the store, pandas NA here): not "dirty".
    sha, dirty = run["git_sha"], run["git_dirty"]
    sha = "unknown" if sha is None or pd.isna(sha) else str(sha)[:10]
    return f"{sha}+dirty" if dirty is not None and not pd.isna(dirty) and bool(dirty) else sha


@dataclass(frozen=True)
class ChangeList:
    """Every tested pair, the metric catalogue they were read in, and the threshold."""

    pairs: pd.DataFrame
    metrics: pd.DataFrame
    threshold: float

    @property
    def flagged(self) -> pd.DataFrame:
        return self.pairs[self.pairs["flagged"].astype(bool)]

    @property
    def regressions(self) -> pd.DataFrame:
        return self.flagged[self.flagged["direction"] == "regression"]


def find_changes(*, experiment: str | None = None, metric: str | None = None, threshold: float = DEFAULT_THRESHOLD,
                 latest: bool = False, store: Store | None = None) -> ChangeList:
    """The change list of the store (or of one experiment) in `metric` (default: the engine's cost,
    COST_PREFERENCE)."""
    store = store or Store.default()
    runs = run_table(store)
    if experiment is not None:
        runs = runs[runs["experiment"] == experiment]
    run_ids = list(runs[runs["status"].isin(FINISHED)]["run_id"])
    if not run_ids:
        return ChangeList(pd.DataFrame(columns=CHANGE_COLUMNS), metric_catalogue([], {}), threshold)
    samples, metrics = observations(run_ids, store)
    if metric is not None and metric not in set(metrics["id"]):
        raise ParameterError(f"metric {metric!r} is not in the store for these runs; known: "
                             + ", ".join(metrics["id"]))
    metric_ids = [metric] if metric else list(COST_PREFERENCE)
    found = pairs(summaries(samples), runs, versions(store, run_ids), metric_ids, threshold=threshold, latest=latest)
    return ChangeList(found, metrics, threshold)


def describe(changes: ChangeList) -> list[str]:
    """The change list as text lines: the rule, then one line per flagged change, newest last."""
    titles = changes.metrics.set_index("id")["title"].to_dict() if not changes.metrics.empty else {}
    tested = changes.pairs[changes.pairs["beyond_noise"].notna()]
    lines = [f"Pairing: {PAIRING_RULE}.",
             f"Listed: pairs judged better or worse (findings.judge: Welch's t test on the repetitions, "
             f"two-sided 5%, and a change of more than {changes.threshold:.0%}); {len(changes.pairs)} pairs "
             f"compared, {len(tested)} testable "
             f"(>= 2 repetitions each), {len(changes.flagged)} listed, "
             f"of which {len(changes.regressions)} regression(s)."]
    for c in changes.flagged.itertuples():
        labels = "" if c.labels in (None, "{}") else f" {c.labels}"
        params = "" if c.measuring == "{}" else f" {c.measuring}"
        lines.append(
            f"{c.direction.upper():11} {c.experiment} {c.engine} {c.phase}{labels} on {c.host_class}{params}: "
            f"{titles.get(c.metric, c.metric)} x{c.ratio:.3f} ({c.ratio_low:.3f}-{c.ratio_high:.3f}) "
            f"({c.base_mean:.4g} -> {c.mean:.4g}; Welch t={c.welch_t:.2f}, {c.welch_dof:.1f} dof) "
            f"from {c.from_run} ({c.from_version or 'version unknown'}, git {c.from_git}) "
            f"to {c.to_run} ({c.to_version or 'version unknown'}, git {c.to_git})")
    return lines
