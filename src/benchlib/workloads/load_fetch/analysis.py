"""The arithmetic of the load-insert-fetch notebook, on plain frames so it is tested with known
answers: one row per load, per-repetition operation figures and their means with 95% CIs, the
key-order ratios, the generator's figures, this run beside seed 001's table, and the findings: each
comparison's subject against its base (findings.finding: one noise rule), with the differences
the run saw between the two sides as caveat ids."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ...data import findings as F
from ...data import results
from ..reporting import finite, one_each, settings
from .dialects import STRUCTURE
from .workload import AFTER_LOAD, FETCH, GENERATE, INSERT, LOAD, OPERATIONS

LATENCIES = ("latency_mean", "latency_p50", "latency_p95", "latency_p99")


def _labels(frame: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame([json.loads(x) if isinstance(x, str) else {} for x in frame["labels"]], index=frame.index)


def _readings(m: pd.DataFrame, phase: str, metrics: list[str], scopes=("client", "server", "embedded")) -> pd.DataFrame:
    """Readings of `phase` windows, one column per metric, keyed by engine start, labels and
    repetition (min_count: a reading stored as NULL stays NaN)."""
    rows = m[(m["phase"] == phase) & (m["window"] == "phase") & m["metric"].isin(metrics) & m["scope"].isin(scopes)]
    wide = rows.groupby(["instance_id", "labels", "repetition", "metric"])["value"].sum(min_count=1).unstack("metric")
    return wide.reindex(columns=metrics)


def _costs(m: pd.DataFrame, phase: str, metric: str = "cpu_time") -> pd.DataFrame:
    costs = results.phase_costs(m, metric)
    return costs[(costs["phase"] == phase) & ~costs["is_baseline"]].set_index(["instance_id", "labels", "repetition"])


def _client_cpu(m: pd.DataFrame, phase: str) -> pd.Series:
    rows = m[(m["phase"] == phase) & (m["window"] == "phase") & (m["scope"] == "client") & (m["metric"] == "cpu_time")]
    return rows.groupby(["instance_id", "labels", "repetition"])["value"].sum(min_count=1)


def loads(measurements: pd.DataFrame) -> pd.DataFrame:
    """One row per load: regime, engine, order, bulk path, rows, wall seconds, rows per second,
    the engine's CPU in the load window and after it (settle: flushes, compactions, purge), its
    CPU per row, the client's CPU, the after-load maintenance's CPU, bytes per row by the engine's
    own size functions and by its data directory's growth, and the peak memory growth of this
    process during the load."""
    m = measurements
    if m[m["phase"] == LOAD].empty:
        return pd.DataFrame(columns=["regime", "engine", "order", "method", "main", "rows", "wall_s", "rows_per_s"])
    costs = _costs(m, LOAD)
    keyed = costs[["engine", "value", "wall_s", "settle_value", "settle_wall_s", "net", "net_with_settle"]]
    rows = _readings(m, LOAD, ["operations", "process_peak_rss_growth_bytes"])
    out = keyed.join(rows).join(_client_cpu(m, LOAD).rename("client_cpu_s"))
    # The maintenance window carries the same labels as its load: matched by labels on each start.
    after = _costs(m, AFTER_LOAD).reset_index()[["instance_id", "labels", "value", "wall_s"]]
    after = after.rename(columns={"value": "maintenance_cpu_s", "wall_s": "maintenance_wall_s"})
    sizes = _readings(m, AFTER_LOAD, ["table_bytes", "index_bytes", "datadir_growth_bytes", "memtable_bytes"]
                      ).reset_index()
    sizes = sizes.drop(columns="repetition").merge(after, on=["instance_id", "labels"], how="left")
    out = out.reset_index().merge(sizes, on=["instance_id", "labels"], how="left")
    labels = _labels(out)
    n = out["operations"]
    per_row = n.where(n > 0)
    frame = pd.DataFrame({
        "regime": labels.get("regime"), "engine": out["engine"], "order": labels.get("order"),
        "method": labels.get("method"), "main": labels.get("main"), "table": labels.get("table"), "rows": n,
        "wall_s": out["wall_s"], "rows_per_s": n / out["wall_s"],
        "engine_cpu_s": out["value"], "settle_cpu_s": out["settle_value"], "settle_wall_s": out["settle_wall_s"],
        "engine_cpu_us_per_row": out["net_with_settle"] * 1e6 / per_row,
        "client_cpu_s": out["client_cpu_s"], "maintenance_cpu_s": out["maintenance_cpu_s"],
        "table_bytes_per_row": out["table_bytes"] / per_row, "index_bytes_per_row": out["index_bytes"] / per_row,
        "datadir_bytes_per_row": out["datadir_growth_bytes"] / per_row,
        "peak_rss_growth_mb": out["process_peak_rss_growth_bytes"] / 2 ** 20,
        "memtable_mib": out["memtable_bytes"] / 2 ** 20,
    })
    frame["engine_bytes_per_row"] = frame["table_bytes_per_row"] + frame["index_bytes_per_row"].fillna(0)
    return frame.reset_index(drop=True)


def operations(measurements: pd.DataFrame) -> pd.DataFrame:
    """One row per engine start, operation and repetition: operations, latencies at the client
    (ms), the engine's CPU per operation (idle rate taken away, µs), the client's CPU per
    operation (servers), the engine's own storage reads per operation, rows per fetch."""
    m = measurements
    frames = []
    for phase in OPERATIONS:
        if m[m["phase"] == phase].empty:
            continue
        costs = _costs(m, phase)[["engine", "net", "wall_s"]]
        readings = _readings(m, phase, ["operations", "rows", "engine_reads", *LATENCIES])
        out = costs.join(readings).join(_client_cpu(m, phase).rename("client_cpu_s")).reset_index()
        n = out["operations"].where(out["operations"] > 0)
        labels = _labels(out)
        frames.append(pd.DataFrame({
            "regime": labels.get("regime"), "engine": out["engine"], "operation": phase,
            "repetition": out["repetition"], "operations": out["operations"],
            **{c: out[c] for c in LATENCIES},
            "engine_cpu_us": out["net"] * 1e6 / n, "client_cpu_us": out["client_cpu_s"] * 1e6 / n,
            "reads_per_op": out["engine_reads"] / n, "rows_per_op": out["rows"] / n,
            "ops_per_s": n / out["wall_s"], "plan": labels.get("plan"),
        }))
    if not frames:
        return pd.DataFrame(columns=["regime", "engine", "operation", "repetition", *LATENCIES])
    return pd.concat(frames, ignore_index=True)


SUMMARY_VALUES = (*LATENCIES, "engine_cpu_us", "client_cpu_us", "reads_per_op", "rows_per_op", "ops_per_s")


def summarize_operations(ops: pd.DataFrame) -> pd.DataFrame:
    """Mean over repetitions per regime, engine and operation, with the standard deviation and
    the 95% CI half width (Student t) of each figure; n repetitions."""
    if ops.empty:
        return pd.DataFrame(columns=["regime", "engine", "operation", "n"])
    g = ops.groupby(["regime", "engine", "operation"], sort=False)
    out = g[list(SUMMARY_VALUES)].mean()
    n = g.size()
    for col in SUMMARY_VALUES:
        sd = g[col].std(ddof=1)
        out[f"{col}_std"] = sd
        out[f"{col}_ci95"] = [results.ci95_half_width(s, k) for k, s in zip(n, sd)]
    out["n"] = n
    if "plan" in ops:  # the access path the engine's plan named, where it reads one
        out["plan"] = g["plan"].agg(lambda p: " / ".join(dict.fromkeys(p.dropna())) or None)
    return out.reset_index()


def contrast(summary: pd.DataFrame, regime: str, operation: str, a: str, b: str, column: str) -> dict | None:
    """Engine b against engine a on one figure: the ratio b / a with its 95% CI and Welch's test
    (results.contrast); None when either was not measured."""
    s = summary[(summary["regime"] == regime) & (summary["operation"] == operation)].set_index("engine")
    if a not in s.index or b not in s.index:
        return None
    rows = [pd.Series({"value": s.at[e, column], "value_ci95": s.at[e, f"{column}_ci95"],
                       "value_std": s.at[e, f"{column}_std"], "n": s.at[e, "n"]}) for e in (a, b)]
    return results.contrast(rows[0], rows[1], "value")


def key_order(load_rows: pd.DataFrame) -> pd.DataFrame:
    """Per regime, engine and bulk path: the random-order load against the key-order one (time,
    rows per second, bytes per row). One load each: single measurements, no CI."""
    if load_rows.empty or not {"key", "random"} <= set(load_rows["order"]):
        return pd.DataFrame(columns=["regime", "engine", "method", "time_ratio", "size_ratio"])
    keyed = load_rows.set_index(["regime", "engine", "method", "order"])
    out = []
    for (regime, engine, method), _ in load_rows.groupby(["regime", "engine", "method"], sort=False):
        if (regime, engine, method, "key") not in keyed.index or (regime, engine, method, "random") not in keyed.index:
            continue
        k, r = keyed.loc[(regime, engine, method, "key")], keyed.loc[(regime, engine, method, "random")]
        out.append({"regime": regime, "engine": engine, "method": method,
                    "key_s": k["wall_s"], "random_s": r["wall_s"], "time_ratio": r["wall_s"] / k["wall_s"],
                    "key_bytes_per_row": k["engine_bytes_per_row"], "random_bytes_per_row": r["engine_bytes_per_row"],
                    "size_ratio": r["engine_bytes_per_row"] / k["engine_bytes_per_row"]
                    if k["engine_bytes_per_row"] else np.nan,
                    "key_datadir_per_row": k["datadir_bytes_per_row"],
                    "random_datadir_per_row": r["datadir_bytes_per_row"]})
    return pd.DataFrame(out)


def generator(measurements: pd.DataFrame) -> pd.DataFrame:
    """The generator's windows: rows, wall seconds, rows per second, its CPU, the growth of this
    process's peak memory, and the staging (generate and write the CSV file) of the run's table."""
    m = measurements[(measurements["phase"] == GENERATE) & (measurements["window"] == "phase")]
    if m.empty:
        return pd.DataFrame(columns=["order", "rows", "wall_s", "rows_per_s"])
    wall = m[(m["metric"] == "wall_time") & m["scope"].isin(["server", "embedded"])].groupby("labels")["value"].first()
    metrics = ["rows", "generator_cpu_time", "process_peak_rss_growth_bytes", "staging_wall_time", "staged_bytes"]
    read = m[m["metric"].isin(metrics)].groupby(["labels", "metric"])["value"].first().unstack("metric")
    read = read.reindex(columns=metrics).join(wall.rename("wall_s")).reset_index()
    labels = _labels(read)
    return pd.DataFrame({
        "order": labels["order"], "rows": read["rows"], "wall_s": read["wall_s"],
        "rows_per_s": read["rows"] / read["wall_s"], "cpu_s": read["generator_cpu_time"],
        "peak_rss_growth_mb": read["process_peak_rss_growth_bytes"] / 2 ** 20,
        "staging_rows_per_s": read["rows"] / read["staging_wall_time"],
        "staged_bytes_per_row": read["staged_bytes"] / read["rows"],
    }).sort_values(["rows", "order"]).reset_index(drop=True)


# -- seed 001 ------------------------------------------------------------------------------------------
def beside_seed(reference: pd.DataFrame, load_rows: pd.DataFrame, summary: pd.DataFrame, *,
                regime: str = "cached") -> pd.DataFrame:
    """Seed 001's row per system beside this run's engine that stands for it (its `engine` column):
    load rows/s as each side measured it (the seed's published, or derived as rows / load time:
    `rate_source`), this run's rows per engine CPU second (the seed gives no CPU, so it has none),
    insert and fetch latency (mean, ms), a server's fetch also less its client driver's CPU. No per-core figure: the seed's engines' CPU use is not
    known, and Datastore is serverless. Systems with no engine here (cloud services) keep the
    seed's figures only."""
    main = load_rows[(load_rows["regime"] == regime) & (load_rows["main"] == True)]  # noqa: E712 (labels are bools)
    main = main.set_index("engine")
    ops = summary[summary["regime"] == regime].set_index(["engine", "operation"])
    rows = []
    for ref in reference.itertuples():
        fetch = (ref.fetch_ms_low + ref.fetch_ms_high) / 2  # "1-2 ms": its middle
        rows.append({"system": ref.system, "source": "seed 001", "engine": ref.engine if isinstance(ref.engine, str)
                     else None, "rows": ref.rows, "load_rows_per_s": ref.load_rows_per_s,
                     "rate_source": "published" if ref.load_rate_source == "published"
                     else "derived: inferred rows / load time",
                     "rows_per_engine_cpu_s": np.nan,
                     "insert_ms": ref.insert_ms, "insert_bound": ref.insert_bound, "fetch_ms": fetch,
                     "fetch_driver_ms": np.nan, "stand_in": False,
                     "fetch_text": f"{ref.fetch_ms_low:g}-{ref.fetch_ms_high:g}" if ref.fetch_ms_low != ref.fetch_ms_high
                     else f"{ref.fetch_ms_low:g}", "note": ref.note if isinstance(ref.note, str) else ""})
        engine = ref.engine if isinstance(ref.engine, str) else None
        if engine is None or engine not in main.index:
            continue
        load = main.loc[engine]
        insert = ops.loc[(engine, INSERT["key"]), "latency_mean"] if (engine, INSERT["key"]) in ops.index else np.nan
        fetch = ops.loc[(engine, FETCH), "latency_mean"] if (engine, FETCH) in ops.index else np.nan
        # A server's fetch latency holds its client driver's CPU (PyMySQL decodes ~300 rows in Python:
        # 10.5 of MariaDB's 12.0 ms; psycopg 1.0 of PostgreSQL's 1.6): the seed's clients were not this
        # one, so the latency less it stands beside (hostile read 44, 07 #1).
        driver = ops.loc[(engine, FETCH), "client_cpu_us"] / 1e3 if (engine, FETCH) in ops.index else np.nan
        cpu = load["engine_cpu_s"] + (0.0 if load["settle_cpu_s"] != load["settle_cpu_s"] else load["settle_cpu_s"])
        rows.append({"system": ref.system, "source": "this run", "engine": engine, "rows": load["rows"],
                     "load_rows_per_s": load["rows_per_s"], "rate_source": "measured",
                     "rows_per_engine_cpu_s": load["rows"] / cpu if cpu > 0 else np.nan,
                     # An engine that is not the seed's system (FerretDB for MongoDB) is its stand-in.
                     "stand_in": results.product_key(engine) != ref.system.lower(),
                     "insert_ms": insert, "insert_bound": "=", "fetch_ms": fetch, "fetch_driver_ms": driver,
                     "fetch_text": f"{fetch:.3g}" + (f" ({fetch - driver:.3g} less driver CPU)" if driver == driver
                                                     else ""),
                     "note": ""})
    return pd.DataFrame(rows)


def not_comparable(found: pd.DataFrame) -> set[tuple[str, str]]:
    """(engine, operation) of the findings rows whose two sides did different work: "insert" (either
    order) or "fetch". A seed table's cell of that engine and operation is not set beside the seed's
    (hostile read 46e, 07 #4: RocksDB's sync=false insert beside MySQL's)."""
    kind = {**{step: "insert" for step in INSERT.values()}, FETCH: "fetch"}
    out = found[found["verdict"] == F.Verdict.NOT_COMPARABLE.value] if not found.empty else found
    return {(e, kind[s]) for e, s in zip(out["engine"], out["step"]) if s in kind}


# -- what a B-tree/LSM pair shares besides its structure ---------------------------------------------------
# Settings a start's durability reading may hold, and what each value means for a commit: does it
# wait for the log on disk? Keyed by setting, not by engine: a reading is data, whichever engine.
_COMMIT_SYNC = {
    "innodb_flush_log_at_trx_commit": {"1": True, "0": False, "2": False},
    "rocksdb_flush_log_at_trx_commit": {"1": True, "0": False, "2": False},
    "synchronous_commit": {"on": True, "remote_write": True, "remote_apply": True, "local": True, "off": False},
    "fsync": {"off": False},
    "synchronous": {"0": False, "1": True, "2": True, "3": True},  # SQLite (NORMAL in WAL mode: commit_waits)
    "sync": {"false": False, "true": True},  # RocksDB WriteOptions
}
# The page cache: does a read bypass it?
_DIRECT_READS = {"innodb_flush_method": lambda v: "O_DIRECT" in v.upper(), "rocksdb_use_direct_reads": lambda v: v in ("1", "ON"),
                 "debug_io_direct": lambda v: "data" in v.lower()}


def commit_waits(reading: str) -> bool | None:
    """Does a commit wait for its log on disk, by the start's own reading? None: not readable."""
    found = settings(reading)
    verdicts = [table[v] for k, v in found.items() if (table := _COMMIT_SYNC.get(k)) and v in table]
    if found.get("journal_mode") == "wal" and found.get("synchronous") == "1":
        return False  # SQLite's NORMAL in WAL mode syncs at checkpoints, not at each commit
    if False in verdicts:
        return False
    return True if verdicts else None


def binlog_synced(reading: str) -> bool:
    """A binary log written and synced at every commit: a second fsync per commit (or group of commits)."""
    found = settings(reading)
    return found.get("log_bin") in ("1", "on") and found.get("sync_binlog") not in (None, "0")


def commit_text(reading: str) -> str:
    """What a commit waits for by a start's reading, in words: its log on disk, and a binary log
    (synced at commit or not) where one is written."""
    wait = commit_waits(reading)
    # What the settings ask for: whether the device honours a flush is not measured.
    text = "a commit " + ("waits for its log flush (by its settings)" if wait else "does not wait for its log flush"
                          if wait is False else "waits for what its settings do not say")
    found = settings(reading)
    if found.get("log_bin") in ("1", "on"):
        text += (" and also writes a binary log" + (f", synced at every commit (sync_binlog={found['sync_binlog']}: "
                                                    "a second fsync per commit, or per group of commits)"
                                                    if binlog_synced(reading) else ", not synced at commit"))
    return text


def direct_read_settings(reading: str) -> str:
    """The settings of a reading that say whether reads bypass the OS page cache ("" if none)."""
    return ", ".join(f"{k}={v}" for k, v in settings(reading).items() if k in _DIRECT_READS)


def reads_direct(reading: str) -> bool | None:
    """Do the start's reads bypass the OS page cache, by its own reading? None: not readable."""
    found = [test(v) for k, v in settings(reading).items() if (test := _DIRECT_READS.get(k))]
    return any(found) if found else None


# -- findings: each comparison's subject against its base, per regime ----------------------------------
@dataclass(frozen=True)
class Side:
    """What a run read of one engine of a comparison in one regime: its durability reading, its
    main table with indexes on disk (MiB), its memtable (MiB; NaN but for an LSM engine), the cache
    this workload gave it (MiB; NaN where it set none) and whether a fetch's index scan and row
    decoding run in this workload's Python rather than in the engine."""

    reading: str = ""
    mib: float = float("nan")
    memtable_mib: float = float("nan")
    cache_mib: float = float("nan")
    lookup_in_python: bool = False


@dataclass(frozen=True)
class Differences:
    """What two sides of a comparison differed in besides what the comparison is about, from the
    run's own readings: what a commit waits for; reads past the page cache where a table outgrows
    its cache; an LSM side whose data fits one memtable (no compaction, no level below the first);
    one table inside its cache and the other not; a lookup done in Python on one side only."""

    durability: bool = False
    direct_reads: bool = False
    below_memtable: bool = False
    cache_pressure: bool = False
    lookup: bool = False

    def flags(self) -> list[str]:
        return [name for name, on in vars(self).items() if on]


# The steps each difference changes the meaning of, and the differences that make the two sides do
# different work there (their rows are not comparable). An LSM side inside one memtable changes the
# run's whole question, not a row: the answer says so once (the report's SCALE_LINE), no row cites it.
LOAD_STEP = "load"
CHANGES = {"durability": tuple(INSERT.values()), "direct_reads": (FETCH,), "below_memtable": (),
           "cache_pressure": (FETCH,), "lookup": (FETCH,)}
DIFFERENT_WORK = frozenset({"durability", "lookup"})
# The figures compared per operation: (summary column, metric, unit). A fetch's answer rows are the
# same on both sides, so its engine CPU compares the engines with each side's driver left out.
METRICS = (("latency_mean", "latency", "ms"), ("engine_cpu_us", "engine CPU", "µs"))
# One metric across the answer's operations: the engine's CPU, which the chart's bars compare
# (hostile read 46e, 07 ferretdb #4: the insert in latency beside the fetch in engine CPU).
HEADLINE = {(LOAD_STEP, "load rate"), (INSERT["key"], "engine CPU"), (FETCH, "engine CPU")}


def differences(base: Side, subject: Side) -> Differences:
    sides = (base, subject)
    wait = [commit_waits(s.reading) for s in sides]
    direct = [reads_direct(s.reading) for s in sides]
    sized = all(finite(s.mib) and finite(s.cache_mib) for s in sides)
    outgrown = [s.mib > s.cache_mib for s in sides] if sized else [False, False]
    return Differences(
        durability=None not in wait and wait[0] != wait[1],
        direct_reads=None not in direct and direct[0] != direct[1] and any(outgrown),
        below_memtable=any(finite(s.mib) and finite(s.memtable_mib) and s.mib < s.memtable_mib for s in sides),
        cache_pressure=sized and outgrown[0] != outgrown[1],
        lookup=base.lookup_in_python != subject.lookup_in_python)


def caveat_id(flag: str, comparison, regime: str) -> str:
    return f"{flag}:{comparison.base}/{comparison.subject}:{regime}"


SEED_CAVEAT = "seed"


def seed_ratios(reference: pd.DataFrame, comparison) -> dict[tuple[str, str], float]:
    """The seed's subject over base for each (step, metric) it measured, for a comparison with
    seed systems: load rate, and latency where both sides give a figure (not a bound): a fetch's
    "1-2 ms" is taken at its middle."""
    if comparison.seed is None:
        return {}
    ref = reference.set_index("system")
    base, subject = (ref.loc[s] for s in comparison.seed)
    fetch = ((subject.fetch_ms_low + subject.fetch_ms_high) / 2) / ((base.fetch_ms_low + base.fetch_ms_high) / 2)
    out = {(LOAD_STEP, "load rate"): subject.load_rows_per_s / base.load_rows_per_s, (FETCH, "latency"): fetch}
    if base.insert_bound == subject.insert_bound == "=":
        out[(INSERT["key"], "latency")] = subject.insert_ms / base.insert_ms
    return out


def answer_loads(loads: pd.DataFrame, bulk_modes: set[str]) -> pd.DataFrame:
    """Per regime and engine, the loads its findings state: its main load (`main` True) and a
    key-order load through the engine's bulk-load mode (`bulk_modes`: method names) where the run
    has one, a variant (`main` False)."""
    if loads.empty:
        return loads
    bulk = loads[loads["method"].isin(bulk_modes) & (loads["order"] == "key")].drop_duplicates(["regime", "engine"])
    main = loads[loads["main"] == True]  # noqa: E712 (object column)
    return pd.concat([main, bulk.assign(main=False)]).sort_index()


def load_pairs(loads: pd.DataFrame, base: str, subject: str) -> list[tuple[pd.Series, pd.Series, bool]]:
    """A pair's load rows in one regime as (base's load, subject's load, answered): the main loads,
    then each side's variant (a bulk-load mode) against the other's main load. The answer states
    the load whose path is the same on both sides where the pair has one (hostile read 46e, 07 #1:
    MyRocks's rocksdb_bulk_load, which skips the memtable and the unique checks, against InnoDB's
    plain LOAD DATA), else the main loads."""
    main = loads["main"] if "main" in loads else pd.Series(True, index=loads.index)
    by = {(e, bool(m)): r for (_, r), e, m in zip(loads.iterrows(), loads["engine"], main == True)}  # noqa: E712
    if (base, True) not in by or (subject, True) not in by:
        return []
    pairs = [(by[(base, True)], by[(subject, True)])]
    pairs += [(by[(base, False)], by[(subject, True)])] if (base, False) in by else []
    pairs += [(by[(base, True)], by[(subject, False)])] if (subject, False) in by else []

    def same(p) -> bool:
        return p[0].get("method") == p[1].get("method")

    answered = next((i for i, p in enumerate(pairs) if same(p)), 0)
    return [(b, s, i == answered) for i, (b, s) in enumerate(pairs)]


def load_step(base: pd.Series, subject: pd.Series) -> str:
    """A load row's step: the path where both sides took the same one, else both (subject's first)."""
    b, s = base.get("method"), subject.get("method")
    if not isinstance(b, str) or not isinstance(s, str):
        return LOAD_STEP
    return f"{LOAD_STEP} ({s})" if b == s else f"{LOAD_STEP} ({s} against {b})"


def findings(main_loads: pd.DataFrame, summary: pd.DataFrame, comparisons, regimes, *,
             differences_of: Mapping[tuple[Any, str], Differences], host: Mapping[Any, float],
             seed: Mapping[Any, Mapping[tuple[str, str], float]], headline_regime: str = "cached",
             plans: Mapping[tuple[str, str], str] | None = None) -> pd.DataFrame:
    """Each comparison's subject against its base, per regime: the main load's rate (one load each),
    then per operation its latency at the client and the engine's CPU, with the caveat ids of the
    differences that change each row; a row a difference makes different work is not comparable.
    `main_loads`: regime, engine, rows_per_s, and where read method and main (`answer_loads`: a
    variant load is a row of its own, load_pairs); `summary`: summarize_operations; `host`: per (comparison,
    regime), or per comparison, its subject's calibration loop over its base's (results.loop_factor); `seed`: per comparison, seed_ratios;
    `plans`: (engine, regime) -> the words for a fetch plan that uses no index, as the engine's own
    explain names it: a fetch row carries its sides' in `plan_note` (hostile read 46e, 07 ferretdb #1: a
    ratio that measures a Seq Scan says so beside it), every other row ""."""
    rows = []
    # The answer is the notebook's question: B-tree against LSM where the run has such a pair.
    asked = STRUCTURE if any(c.kind == STRUCTURE for c in comparisons) else None
    for c in comparisons:
        for regime in regimes:
            diff = differences_of.get((c, regime), Differences())

            def row(step: str, metric: str, unit: str, contrast: dict, higher_is_better: bool = False,
                    label: str | None = None, answered: bool = True) -> dict:
                flags = [f for f in diff.flags() if step in CHANGES[f]]
                seed_ratio = seed.get(c, {}).get((step, metric))
                cited = [caveat_id(f, c, regime) for f in flags] + ([SEED_CAVEAT] if seed_ratio else [])
                different = bool(DIFFERENT_WORK & set(flags))
                # The answer states comparisons: two sides that did different work are not one.
                return F.finding(engine=c.subject, base_engine=c.base, step=label or step, metric=metric, unit=unit,
                                 contrast=contrast, regime=regime, higher_is_better=higher_is_better,
                                 # A load is one each: no test for the host's band to move, so its row
                                 # names no host speed (hostile read 46e, 07 #3: the one shown row of a
                                 # pair otherwise hidden named its hosts' 1.31x on the first screen).
                                 host_factor=None if step == LOAD_STEP else host.get((c, regime), host.get(c)),
                                 seed_ratio=seed_ratio,
                                 caveats=cited,
                                 headline=answered and regime == headline_regime and (step, metric) in HEADLINE
                                 and c.kind == (asked or c.kind) and not different,
                                 verdict=F.Verdict.NOT_COMPARABLE if different else None) | {
                    "plan_note": "".join(f" ({p})" for e in (c.subject, c.base)
                                    if step == FETCH and (p := (plans or {}).get((e, regime))))}

            mine = main_loads[main_loads["regime"] == regime]
            for base, subject, answered in load_pairs(mine, c.base, c.subject):
                rows.append(row(LOAD_STEP, "load rate", "rows/s", one_each(base["rows_per_s"], subject["rows_per_s"]),
                                True, label=load_step(base, subject), answered=answered))
            for operation in OPERATIONS:
                for column, metric, unit in METRICS:
                    measured = contrast(summary, regime, operation, c.base, c.subject, column)
                    if measured is not None:
                        rows.append(row(operation, metric, unit, measured))
    return F.table(rows)
