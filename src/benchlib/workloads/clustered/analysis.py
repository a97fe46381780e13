"""The arithmetic of the clustered-vs-heap notebook, on plain frames so it is tested with known
answers: per-step figures per operation, seed 003's spreadsheet as findings rows (each engine over
the clustered base, judged by `findings.judge`), the host's speed per pair, regime and step, and seed
001's key-kind table."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
import pandas as pd

from ...data import findings as F
from ...data import results
from .workload import TESTS


@dataclass(frozen=True)
class Column:
    """One ratio column of seed 003's spreadsheet: its name there, the per-step figure, and the
    findings metric and unit it becomes (a counted unit takes no drift band: `findings.COUNTED_UNITS`)."""
    name: str
    figure: str
    metric: str
    unit: str
    higher_is_better: bool
    storage: bool = False  # storage reads: meaningless below STORAGE_FLOOR in both engines
    judged: bool = True


# pages/o and rKB/o are storage reads: what the engine's processes read from storage (read_bytes of
# /proc/<pid>/io, which page-cache hits do not inflate), as the engine's own pages (seed 003's r/o,
# storage reads per operation: a page read directly is one read, so the two agree wherever no
# read-ahead merges pages) and as KiB. rKB/o is pages/o again, weighted by page size (8 KiB against
# 16 KiB): shown, judged once as pages/o (the two coloured the same reads red and green in run
# 20261124T220530Z-501225). The engines' own read counters (PostgreSQL's blks_read counts page-cache
# hits too) are in the absolute table.
COLUMNS = (Column("QPS", "ops_per_s", "QPS", "ops/s", True),
           Column("cpu/o", "cpu_us_per_op", "CPU per operation", "µs", False),
           Column("pages/o", "storage_reads_per_op", "storage pages per operation", "pages", False, storage=True),
           Column("rKB/o", "storage_kb_per_op", "storage KiB per operation", "KiB", False, storage=True, judged=False))
STORAGE_REACHED = 0.5  # storage reads per operation above which a point query went to storage
# Below this many storage reads per operation (one in a hundred operations) in both engines, a
# storage ratio divides two near-zeros (a cached test's stray reads): not comparable, no ratio.
STORAGE_FLOOR = 0.01
# Per-step figures averaged over repetitions (means, with the spread of the ratio figures).
FIGURES = ("ops", "ops_per_s", "p95_ms", "cpu_us_per_op", "reads_per_op", "engine_read_kb_per_op", "read_kb_per_op",
           "storage_kb_per_op", "storage_reads_per_op", "buffer_hits_per_op", "buffer_pool_bytes", "page_bytes",
           "data_bytes", "pk_index_bytes", "wall_s", "client_cpu_us_per_op", "change_buffer_merges_per_op")
# What the answer states, in seed 003's order (its bullets and outliers), then the load (often the
# largest gap, in no bullet of the seed's): per class of test, a column of its first test that ran
# (its first step, before the writes), where that row has a ratio.
CLASSES = (("covered PK reads", "QPS", ("points-covered-pk", "range-covered-pk")),
           ("covered PK reads from storage", "pages/o", ("points-covered-pk", "range-covered-pk")),
           ("reads of a column outside the PK", "QPS", ("points-notcovered-pk", "range-notcovered-pk")),
           ("updates", "QPS", ("update-inlist", "update-nonindex")),
           ("inserts", "QPS", ("insert",)),
           ("loads", "QPS", ("load",)))
SEED_REGIME = "io-bound"  # seed 003 was IO-bound: its figures stand beside this regime's rows only

# Caveat ids: why a findings row's meaning changes. The first five can void a verdict (the two sides
# did different work, or the unit says nothing new: `_voided`); the rest qualify it. Texts: the
# report's caveat_notes.
PAGE_SIZE = "page-size"
BELOW_FLOOR = "storage-floor"
UNEQUAL_CACHE = "unequal-cache"
BINARY_LOG = "binary-log"
DEFERRED_VACUUM = "deferred-vacuum"
DIRECT_IO = "direct-io"
NO_CHECKPOINT = "no-checkpoint"
PK_UNCACHED = "pk-uncached"
ID_ORDER = "id-order"
SEED_CLASS = "seed-class"
SEED_BOUND = "seed-bound"
NO_BINLOG = "no-binlog"
NO_CHANGE_BUFFER = "no-change-buffer"


def from_pool(engine: str) -> str:
    """The caveat id of an IO-bound read test `engine` served from its buffer pool."""
    return f"from-pool:{engine}"


def spill(write: str) -> str:
    """The caveat id of a window that `write`'s leftover work ran into (a settle window after it hit
    its bound, on either side: the note names which)."""
    return f"spill:{write}"


def test_of(step: str) -> str:
    return step.removesuffix(".pre")


def writes(step: str) -> bool:
    """A step of a test that writes (update, insert, delete): its commit work is in its figures."""
    return TESTS.get(test_of(step), ("", {}, ""))[2] in ("write", "insert")


def reads(step: str) -> bool:
    return TESTS.get(test_of(step), ("", {}, ""))[2] == "read"


def leaves_dead_rows(step: str) -> bool:
    """An update or delete: the old row versions it leaves are cleaned up later (vacuum, purge)."""
    test = test_of(step)
    return test.startswith("update") or test == "delete"


def costs_under_direct_io(step: str) -> bool:
    """Where reading and writing data files directly is expected to cost: writes (an evicted dirty
    buffer is written there and then) and ranges (no read-ahead); a point query's single random
    reads lose neither."""
    return writes(step) or test_of(step).startswith("range")


@dataclass(frozen=True)
class Conditions:
    """What the run's starts read that changes what a comparison means, as data (the report reads
    it from the store); each field names the engines it bears on."""
    unequal_cache: bool = False  # IO-bound: not every engine read past the OS page cache
    binlog_base_only: bool = False  # the base alone synced a binary log at every commit
    binary_log_off: bool = False  # binary_log=false: MySQL ran without its default binary log
    defers_dead_rows: frozenset = frozenset()  # engines that leave dead rows to a vacuum no window ran
    direct_io: frozenset = frozenset()  # engines made to read and write directly, IO-bound, by a developer option
    checkpoint_deferred: frozenset = frozenset()  # engines whose data-file writes wait for a checkpoint
    no_change_buffer: frozenset = frozenset()  # engines that read innodb_change_buffering=none (or lack it)
    # (regime, engine, step) -> the writes whose leftover work ran in that step's window
    spills: Mapping[tuple[str, str, str], tuple[str, ...]] = field(default_factory=dict)


def seed_figures() -> dict[tuple[str, str], tuple[float, str]]:
    """Seed 003's figures, (step, column) -> (ratio PostgreSQL / MySQL, its bound: "about", "more than")."""
    ref = results.reference("seed003_direction")
    out = {}
    for step, qps, bound, read in zip(ref["step"], ref["qps_ratio_pg_over_mysql"], ref["ratio_bound"],
                                      ref["reads_per_op_ratio_pg_over_mysql"]):
        if pd.notna(qps):
            out[(step, "QPS")] = (float(qps), bound)
        if pd.notna(read):
            out[(step, "pages/o")] = (float(read), "about")
    return out


def step_contrast(base: pd.Series, other: pd.Series, figure: str) -> dict:
    """`results.contrast` of one step's figure, other against base (n/a where a side is unmeasured;
    two zeros are equal, a tie with nothing to test)."""
    num, den = other.get(figure, np.nan), base.get(figure, np.nan)
    n, base_n = int(other.get(f"{figure}_n", 1) or 0), int(base.get(f"{figure}_n", 1) or 0)
    plain = {"mean": num, "ci95": other.get(f"{figure}_ci95", np.nan), "n": n, "base_mean": den,
             "base_ci95": base.get(f"{figure}_ci95", np.nan), "base_n": base_n, "ratio": np.nan, "ratio_low": np.nan,
             "ratio_high": np.nan, "beyond_noise": None}
    if not (pd.notna(num) and pd.notna(den)):
        return plain
    if den == 0:
        return {**plain, "ratio": 1.0, "beyond_noise": False} if num == 0 else plain

    def summary(row: pd.Series, k: int) -> dict:
        return {figure: row[figure], f"{figure}_ci95": row.get(f"{figure}_ci95", np.nan),
                f"{figure}_std": row.get(f"{figure}_std", np.nan), "n": k}

    return results.contrast(summary(base, base_n), summary(other, n), figure, F.THRESHOLD)


def _caveats(regime: str, engine: str, base: str, step: str, column: Column, pair: dict[str, pd.Series],
             conditions: Conditions, bound: str | None, ratio: float = float("nan")) -> list[str]:
    """The caveat ids that bear on one row (whether its verdict stands is `_voided`'s to say)."""
    out = []
    io_bound = regime == "io-bound"
    if io_bound and conditions.unequal_cache:
        out.append(UNEQUAL_CACHE)
    if conditions.binlog_base_only and writes(step) and column.name in ("QPS", "cpu/o"):
        out.append(BINARY_LOG)
    if engine in conditions.defers_dead_rows and leaves_dead_rows(step):
        out.append(DEFERRED_VACUUM)
    if io_bound and costs_under_direct_io(step) and conditions.direct_io & {engine, base}:
        out.append(DIRECT_IO)
    if writes(step) and column.name in ("QPS", "cpu/o") and engine in conditions.checkpoint_deferred \
            and not (io_bound and engine in conditions.direct_io):
        out.append(NO_CHECKPOINT)
    if io_bound and reads(step):
        if test_of(step).endswith("-covered-pk") and pair[engine].get("storage_reads_per_op", np.nan) > STORAGE_REACHED \
                and column.name in ("QPS", "pages/o"):
            out.append(PK_UNCACHED)
        out += [from_pool(e) for e in (engine, base) if pair[e].get("storage_reads_per_op", np.nan) <= STORAGE_REACHED]
    out += [spill(w) for e in (engine, base) for w in conditions.spills.get((regime, e, step), ())]
    if column.name == "QPS":
        if test_of(step) == "range-notcovered-pk":
            out.append(ID_ORDER)
        if test_of(step) == "points-notcovered-pk":
            out.append(SEED_CLASS)
        if bound == "more than":
            out.append(SEED_BOUND)
        # Only beside a base's win: it says why the seed's suspected reason for that win was absent.
        if test_of(step) == "insert" and base in conditions.no_change_buffer and not ratio > 1:
            out.append(NO_CHANGE_BUFFER)
    if conditions.binary_log_off and writes(step) and column.name in ("QPS", "cpu/o"):
        out.append(NO_BINLOG)
    return out


def _voided(caveats: list[str], judged: Mapping) -> bool:
    """Whether the row's caveats say the two sides did different work, so its verdict says nothing of
    the layouts: unequal caches void any verdict; the base's binary log a decided one; dead rows left
    to a vacuum no window ran anything but a loss (a loss in spite of that help stands; a win measured
    once is still a win: hostile read 47, 02). `judged` is the row judged without the host's band: a
    win the band withholds is still a win."""
    verdict = judged["verdict"]
    decided = verdict in (F.Verdict.BETTER.value, F.Verdict.WORSE.value, F.Verdict.SAME.value)
    ratio = judged["ratio"]
    lost = verdict == F.Verdict.WORSE.value or (not decided and ratio is not None and ratio == ratio and (
        ratio < 1 if judged["higher_is_better"] else ratio > 1))
    return ((UNEQUAL_CACHE in caveats and verdict != F.Verdict.NA.value)
            or (BINARY_LOG in caveats and decided)
            or (DEFERRED_VACUUM in caveats and verdict != F.Verdict.NA.value and not lost))


def findings(step_rows: pd.DataFrame, base: str, *, host: Mapping | None = None,
             conditions: Conditions = Conditions(),
             seed: Mapping[tuple[str, str], tuple[float, str]] | None = None) -> pd.DataFrame:
    """Seed 003's spreadsheet as findings rows: per regime, step and engine other than `base`, each
    column of `COLUMNS` as engine / base (QPS > 1: faster than the base; per-operation figures > 1:
    more per operation) with its 95% CI, judged by `findings.judge`; `not_comparable` with the
    caveat ids that say why where the two sides did different work (or the unit is not judged,
    or both read below the storage floor). `host`: `host_factors` (a row takes its step's factor
    where loops ran beside it, else its regime's);
    `seed`: seed 003's figures (`seed_figures`), set beside the IO-bound rows. Extra columns:
    `column` (the spreadsheet's name) and `test_class` (the class a headline row answers for)."""
    host, seed = host or {}, seed or {}
    rows = []
    for regime, df in step_rows.groupby("regime", sort=False):
        b = df[df["engine"] == base].set_index("step")
        for engine in [e for e in dict.fromkeys(df["engine"]) if e != base]:
            e = df[df["engine"] == engine].set_index("step")
            for step in [s for s in b.index if s in e.index]:
                pair = {base: b.loc[step], engine: e.loc[step]}
                floor = below_storage_floor(b.loc[step]) and below_storage_floor(e.loc[step])
                factor = host.get((regime, step, engine), host.get((regime, engine)))
                for column in COLUMNS:
                    contrast = step_contrast(b.loc[step], e.loc[step], column.figure)
                    figure, bound = seed.get((step, column.name), (None, None)) if regime == SEED_REGIME else (None, None)
                    voided = ([PAGE_SIZE] if not column.judged else []) + ([BELOW_FLOOR] if floor and column.storage else [])
                    if BELOW_FLOOR in voided:
                        contrast = {**contrast, "ratio": np.nan, "ratio_low": np.nan, "ratio_high": np.nan}
                    given = dict(engine=engine, base_engine=base, step=step, regime=regime, metric=column.metric,
                                 unit=column.unit, higher_is_better=column.higher_is_better, contrast=contrast,
                                 host_factor=factor, seed_ratio=figure,
                                 # IO-bound QPS moves with the device's latency, which no loop here
                                 # times (hostile read 46b, 02 #1: 3-7x between two runs of one set):
                                 # it tests no seed direction; pages/o, which repeated, does.
                                 seed_comparable=not (regime == SEED_REGIME and column.name == "QPS"))
                    row = F.finding(**given, verdict=F.Verdict.NOT_COMPARABLE if voided else None)
                    cited = voided + _caveats(regime, engine, base, step, column, pair, conditions, bound,
                                              row["ratio"] if row["ratio"] is not None else float("nan"))
                    # Different work voids a row before the host's band is looked at (hostile read 46b,
                    # 02 #2: a win the band withheld kept "opposite to the seed" beside "only a loss
                    # would stand"); rejudged as not comparable, its seed figure is tested by nothing.
                    if _voided(cited, F.finding(**{**given, "host_factor": None})):
                        row = F.finding(**given, verdict=F.Verdict.NOT_COMPARABLE)
                    row["caveats"] = tuple(dict.fromkeys(cited))
                    rows.append({**row, "column": column.name, "test_class": None})
    return _mark_headline(F.table(rows))


def _mark_headline(found: pd.DataFrame) -> pd.DataFrame:
    """Per answer line (`CLASSES`), the row it states: in the seed's regime where it ran (else the
    first regime), of the first engine, where that row has a ratio: the decided one furthest from 1."""
    if found.empty:
        return found
    regimes = list(dict.fromkeys(found["regime"]))
    regime = SEED_REGIME if SEED_REGIME in regimes else regimes[0]
    pool = found[(found["regime"] == regime) & (found["engine"] == found["engine"].iloc[0]) & found["ratio"].notna()]
    found = found.copy()
    decided = pool["verdict"].isin([v.value for v in F.Verdict if v.decided])
    # Decided rows first, then furthest from 1: the class's largest decided difference is never left
    # out for the first step run (hostile read 44, 02 #1: update-nonindex's 0.221x).
    pool = pool.assign(_d=decided, _x=pool["ratio"].map(lambda r: abs(np.log(r)) if r > 0 else 0.0)) \
        .sort_values(["_d", "_x"], ascending=False, kind="stable")
    for label, column, tests in CLASSES:
        hits = pool[(pool["column"] == column) & pool["step"].map(test_of).isin(tests)]
        if not hits.empty:
            found.loc[hits.index[0], ["headline", "test_class"]] = (True, label)
    found["headline"] = found["headline"].fillna(False).astype(bool)
    return found


def geometric_means(found: pd.DataFrame, regime: str) -> dict[str, float]:
    """Per spreadsheet column, the geometric mean of one regime's ratios (seed 003's summary row)."""
    r = found[found["regime"] == regime]
    return {c.name: results.geometric_mean(r.loc[r["column"] == c.name, "ratio"]) for c in COLUMNS}


def spreadsheet(found: pd.DataFrame, regime: str, value: str = "ratio") -> pd.DataFrame:
    """Wide: steps down (in the order they ran), (engine, column) across; for ratios the geometric
    mean as the last row."""
    r = found[found["regime"] == regime]
    if r.empty:
        return pd.DataFrame()
    table = r.pivot_table(index="step", columns=["engine", "column"], values=value, sort=False, dropna=False,
                          aggfunc="first")
    table = table.reindex(index=list(dict.fromkeys(r["step"])))
    cols = [(e, c.name) for e in dict.fromkeys(r["engine"]) for c in COLUMNS if (e, c.name) in table.columns]
    table = table.reindex(columns=pd.MultiIndex.from_tuples(cols))
    table.loc["geometric mean"] = ([results.geometric_mean(table[c]) for c in table.columns] if value == "ratio"
                                   else "")
    return table


def host_factors(measurements: pd.DataFrame, base: str) -> dict:
    """Per (regime, engine), each engine's median calibration loop over `base`'s in that regime
    (results.host_factor), and per (regime, step, engine) the same over the loops run beside that
    step's repetitions: a step-major start calibrates beside every step, and all of a step's
    repetitions can fall in one slow stretch, which moves the mean without widening Welch's CI.
    Per regime, since one regime's slow start says nothing of the other's."""
    if "metric" not in measurements:
        return {}
    c = results.calibrations(measurements)
    c = c.assign(regime=c["instance_id"].map(results.start_labels(measurements, "regime")))
    c = c.dropna(subset=["regime", "calibration_s"])
    c = c.assign(step=_calibrated_step(measurements, c))
    out: dict = {}
    for key, g in [*c.groupby(["regime"], sort=False),
                   *c.dropna(subset=["step"]).groupby(["regime", "step"], sort=False)]:
        for engine in set(g["engine"]) - {base}:
            factor = results.loop_factor(g, engine, base)
            if factor == factor:
                out[(*key, engine)] = factor
    return out


def _calibrated_step(m: pd.DataFrame, c: pd.DataFrame) -> list:
    """The step each calibration loop ran beside: the next phase window of its start."""
    if "started_at" not in c:
        return [None] * len(c)
    phases = m[(m["metric"] == "wall_time") & m["window"].isin(["phase", "warmup-phase"])]
    phases = phases.drop_duplicates("seq").sort_values("started_at")
    out = []
    for instance, started in zip(c["instance_id"], c["started_at"]):
        later = phases[(phases["instance_id"] == instance) & (phases["started_at"] > started)]
        out.append(later["phase"].iloc[0] if not later.empty else None)
    return out


def _labels(df: pd.DataFrame) -> pd.DataFrame:
    parsed = [json.loads(x) if isinstance(x, str) else {} for x in df["labels"]]
    return pd.DataFrame(parsed, index=df.index)


KEYS = ["engine", "labels", "phase", "repetition"]


def _wide(m: pd.DataFrame, window: str, metrics: list[str], scopes: tuple[str, ...]) -> pd.DataFrame:
    rows = m[(m["window"] == window) & m["metric"].isin(metrics) & m["scope"].isin(scopes)]
    # min_count=1: a counter stored as NULL stays NaN (not measured), never becomes 0.
    return rows.groupby([*KEYS, "metric"])["value"].sum(min_count=1).unstack("metric")


SERVER_METRICS = ("engine_reads", "engine_read_bytes", "engine_buffer_hits", "io_read_bytes", "buffer_pool_bytes",
                  "storage_read_bytes", "page_bytes", "data_bytes", "pk_index_bytes", "change_buffer_merges")


def repetitions(measurements: pd.DataFrame) -> pd.DataFrame:
    """One row per engine, regime, battery step and repetition: operations (sysbench events; rows
    for the load), throughput, and per operation the engine's CPU (phase + settle windows, in µs),
    the engine's own reads and read bytes, and what its processes read from storage (phase window):
    KB, and reads of the engine's page size."""
    m = measurements[measurements["labels"].str.contains('"step"', na=False)]
    if "repetition" not in m:
        m = m.assign(repetition=1)
    if m.empty:
        return pd.DataFrame(columns=["engine", "regime", "step", "test", "repetition", *FIGURES])
    engine = results.engine_rows(m)
    client = _wide(m, "phase", ["transactions", "tps", "latency_p95", "cpu_time"], ("client",))
    server = _wide(m, "phase", list(SERVER_METRICS), ("server",))
    cpu = engine[(engine["metric"] == "cpu_time") & engine["window"].isin(["phase", "settle"])]
    cpu = cpu.groupby(KEYS)["value"].sum(min_count=1).rename("engine_cpu_s")
    wall = m[(m["metric"] == "wall_time") & (m["window"] == "phase")].groupby(KEYS)["value"]
    out = client.join(server, how="outer").join(cpu).join(wall.first().rename("wall_s")).reset_index()
    for col in ("transactions", "tps", "latency_p95", "cpu_time", *SERVER_METRICS):
        if col not in out:
            out[col] = np.nan
    labels = _labels(out)
    ops = out["transactions"].where(out["transactions"] > 0)
    frame = pd.DataFrame({
        "engine": out["engine"], "regime": labels["regime"], "step": labels["step"], "test": labels["test"],
        "repetition": out["repetition"],
        "ops": out["transactions"], "ops_per_s": out["tps"], "p95_ms": out["latency_p95"],
        "cpu_us_per_op": out["engine_cpu_s"] * 1e6 / ops,
        "reads_per_op": out["engine_reads"] / ops,
        "engine_read_kb_per_op": out["engine_read_bytes"] / 1024 / ops,
        "read_kb_per_op": out["io_read_bytes"] / 1024 / ops,
        # What the engine's processes read from storage: page-cache hits are not in it.
        "storage_kb_per_op": out["storage_read_bytes"] / 1024 / ops,
        "storage_reads_per_op": out["storage_read_bytes"] / out["page_bytes"] / ops,
        "buffer_hits_per_op": out["engine_buffer_hits"] / ops,
        "buffer_pool_bytes": out["buffer_pool_bytes"], "page_bytes": out["page_bytes"],
        "data_bytes": out["data_bytes"], "pk_index_bytes": out["pk_index_bytes"], "wall_s": out["wall_s"],
        # sysbench's own CPU (children of the harness: its run, or its prepare for the load), which seed
        # 003's cpu/o may include (its article does not say).
        "client_cpu_us_per_op": out["cpu_time"] * 1e6 / ops,
        "change_buffer_merges_per_op": out["change_buffer_merges"] / ops,
    })
    order = (m.drop_duplicates(["engine", "labels"]).reset_index(drop=True).reset_index()
             .set_index(["engine", "labels"])["index"])
    frame["seq"] = [order.get((e, lab), 0) for e, lab in zip(out["engine"], out["labels"])]
    return frame.sort_values(["regime", "engine", "seq", "repetition"]).drop(columns="seq").reset_index(drop=True)


def steps(measurements: pd.DataFrame) -> pd.DataFrame:
    """One row per engine, regime and battery step: the mean of each figure over the step's
    repetitions, `n` of them, and for the ratio figures their standard deviation and 95% CI half
    width (what seed 003's ratios are tested against)."""
    reps = repetitions(measurements)
    keys = ["engine", "regime", "step", "test"]
    stats = [f"{c.figure}_{x}" for c in COLUMNS for x in ("std", "n", "ci95")]
    if reps.empty:
        return pd.DataFrame(columns=[*keys, "n", *FIGURES, *stats])
    grouped = reps.groupby(keys, sort=False, dropna=False)
    out = grouped[list(FIGURES)].mean()
    out["n"] = grouped.size()
    for c in COLUMNS:
        n = grouped[c.figure].count()
        std = grouped[c.figure].std(ddof=1)
        out[f"{c.figure}_std"] = std
        out[f"{c.figure}_n"] = n
        out[f"{c.figure}_ci95"] = [results.ci95_half_width(sd, k) for k, sd in zip(n, std)]
    return out.reset_index()


def below_storage_floor(step: pd.Series) -> bool:
    """Fewer than STORAGE_FLOOR storage reads per operation (in the engine's pages; in 16 KiB
    units where the engine has no fixed page): a storage ratio against it means nothing."""
    reads = step.get("storage_reads_per_op", np.nan)
    if not pd.notna(reads):
        kb = step.get("storage_kb_per_op", np.nan)
        reads = kb / 16 if pd.notna(kb) else np.nan
    return bool(pd.notna(reads) and reads < STORAGE_FLOOR)


def storage_read_us(step_rows: pd.DataFrame) -> pd.Series:
    """Per step row, the time per storage read (an estimate, not a device counter): wall time per
    operation less the engine's and sysbench's CPU, over its storage pages; NaN where the step read
    no more than STORAGE_REACHED pages per operation. Meaningful with one thread only."""
    wall = 1e6 / step_rows["ops_per_s"]
    per_read = (wall - step_rows["cpu_us_per_op"] - step_rows["client_cpu_us_per_op"]).clip(lower=0) \
        / step_rows["storage_reads_per_op"]
    return per_read.where(step_rows["storage_reads_per_op"] > STORAGE_REACHED)


def start_settings(measurements: pd.DataFrame, regime: str | None = None) -> dict[str, dict[str, str]]:
    """Per engine, the server settings its starts read (the battery windows' `settings` label,
    "name=value, ..."), every distinct value of a setting joined by " / "; `regime`: only that
    regime's starts."""
    out: dict[str, dict[str, list[str]]] = {}
    m = measurements[measurements["labels"].str.contains('"settings"', na=False)].drop_duplicates(["engine", "labels"])
    for engine, labels in zip(m["engine"], m["labels"]):
        found = json.loads(labels)
        if regime is not None and found.get("regime") != regime:
            continue
        for pair in str(found.get("settings", "")).split(", "):
            name, eq, value = pair.partition("=")
            if eq and value not in out.setdefault(engine, {}).setdefault(name, []):
                out[engine][name].append(value)
    return {e: {k: " / ".join(v) for k, v in found.items()} for e, found in out.items()}


def key_kinds(measurements: pd.DataFrame) -> pd.DataFrame:
    """Seed 001's table: per engine, layout, key kind and insert order, what a row cost to insert
    (engine CPU µs, phase + settle), rows per second, bytes per row of table and indexes (the
    engine's own size functions), and the engine CPU of a lookup by secondary index."""
    m = measurements[measurements["labels"].str.contains('"key_kind"', na=False)]
    if m.empty:
        return pd.DataFrame()
    if "repetition" not in m:
        m = m.assign(repetition=1)
    engine = results.engine_rows(m)
    keys = ["engine", "labels", "phase"]

    def per_repetition_mean(rows: pd.DataFrame, by: list[str], how: str) -> pd.Series:
        # Each repetition's own figure (a window's phase + settle CPU summed), then their mean.
        one = rows.groupby([*by, "repetition"])["value"].agg(how) if how == "first" else \
            rows.groupby([*by, "repetition"])["value"].sum(min_count=1)
        return one.groupby(level=list(range(len(by)))).mean()

    cpu = engine[(engine["metric"] == "cpu_time") & engine["window"].isin(["phase", "settle"])]
    cpu = per_repetition_mean(cpu, keys, "sum").unstack("phase")
    wall = per_repetition_mean(m[(m["metric"] == "wall_time") & (m["window"] == "phase")], keys, "first").unstack("phase")
    n = per_repetition_mean(m[(m["metric"] == "transactions") & (m["window"] == "phase")], keys, "first").unstack("phase")
    size = m[m["metric"].isin(["table_bytes", "index_bytes"]) & (m["window"] == "phase")]
    size = per_repetition_mean(size, ["engine", "labels", "metric"], "first").unstack("metric")
    out = pd.DataFrame(index=cpu.index)
    rows = n.get("key-insert")
    out["rows"] = rows
    out["insert_cpu_us_per_row"] = cpu.get("key-insert") * 1e6 / rows
    out["rows_per_s"] = rows / wall.get("key-insert")
    out["table_bytes_per_row"] = size.get("table_bytes") / rows
    out["index_bytes_per_row"] = size.get("index_bytes") / rows
    out["bytes_per_row"] = out["table_bytes_per_row"] + out["index_bytes_per_row"].fillna(0)
    out["lookup_cpu_us"] = cpu.get("key-lookup") * 1e6 / n.get("key-lookup")
    out = out.reset_index()
    labels = _labels(out)
    for col in ("layout", "key_kind", "order"):
        out.insert(1, col, labels[col])
    out["regime"] = labels["regime"] if "regime" in labels else None
    out = out.drop(columns="labels")[["engine", "regime", "layout", "key_kind", "order", "rows", "insert_cpu_us_per_row",
                                      "rows_per_s", "table_bytes_per_row", "index_bytes_per_row", "bytes_per_row",
                                      "lookup_cpu_us"]]
    # Relative to the same engine and layout's sequential bigint in key order, where it ran.
    base = out[(out["key_kind"] == "bigint") & (out["order"] == "key")].set_index(["engine", "layout"])
    idx = list(zip(out["engine"], out["layout"]))
    for col, ref in (("insert_cost_vs_bigint", "insert_cpu_us_per_row"), ("size_vs_bigint", "bytes_per_row")):
        out[col] = [v / base[ref].get(k, np.nan) if k in base.index else np.nan for v, k in zip(out[ref], idx)]
    return out
