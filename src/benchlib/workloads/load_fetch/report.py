"""The load-insert-fetch notebook's tables, figures and narrative, on the shared report layer.
Every sentence is computed from the run's numbers (read back from the store by run id)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ... import results
from ...engines import find_engine, get_engine, is_server
from ...plots import bars_by_phase, engine_order, engine_title, grouped_bars
from ...report import RunReport, fmt, fmt_ci, fmt_ratio_ci
from . import analysis
from .dialects import PAIRS, dialect_for
from .workload import FETCH, INSERT, OPERATIONS, REGIMES

SEED_ROWS_TEXT = "44 M"  # the article's own figure; 44,951,022 is inferred (data/reference/README.md)
SEED_PK_ORDER_QUOTE = ("\"For MySQL there is almost a 6x improvement (in time) if the records are inserted in PK "
                       "order, not to mention reduced data size (data_length)\"")
SEED_INCONCLUSIVE_QUOTE = ("\"MySQL, AlloyDB, RocksDB and MongoDB perform close to each other and the numbers are "
                           "inconclusive so as to suggest one over the other\"")
# What each regime is, by what the run can show: the limited one shrinks the buffer pool, but its
# tables stay far inside the container's memory and this host cannot count device reads.
REGIME_TITLES = {"cached": "cached", "memory-limited": "small buffer pool"}
LOG_SCALE_SPREAD = 10.0  # a chart whose values span more than this gets a log axis


def regime_title(regime: str) -> str:
    return REGIME_TITLES.get(regime, regime)


def _dialect(key: str):
    engine = find_engine(key)  # None: a reference-only engine, or one a later benchlib dropped
    return dialect_for(engine) if engine is not None else None


def structure(key: str) -> str:
    d = _dialect(key)
    return d.structure if d else "?"


def _datadir_text(value: float) -> str:
    """A data directory's growth per row; a negative one said for what it is (the start's earlier
    tables compacted or purged during this load's windows), never shown as a size."""
    if value != value:
        return "n/a"
    return f"{fmt(value)} (shrank: earlier tables compacted)" if value < 0 else fmt(value)


def _verdict(beyond_noise, n: int | None = None) -> str:
    """Welch's verdict as a reader needs it: a difference not shown is 'not resolved', never 'the same'."""
    if beyond_noise is None or beyond_noise != beyond_noise:
        return "untested"
    return "beyond noise" if beyond_noise else f"not resolved{f' at n={n}' if n else ''}"


class LoadFetchReport(RunReport):
    def __init__(self, run_id: str, store=None):
        super().__init__(run_id, store)
        self.engines = engine_order(self.engines)
        self.loads = analysis.loads(self.measurements)
        self.ops = analysis.operations(self.measurements)
        self.summary = analysis.summarize_operations(self.ops)
        self.orders = analysis.key_order(self.loads)
        self.generator = analysis.generator(self.measurements)
        seen = set(self.loads["regime"].dropna()) | set(self.summary["regime"].dropna())
        self.regimes = [r for r in REGIMES if r in seen]
        self.cores = int(self.info.get("cpu_cores") or 1)
        self.rows = int(self.loads["rows"].max()) if not self.loads.empty else 0
        self.readings = self.durability()  # per engine: what a commit waits for, as read at its start
        self.host = results.host_speed(self.measurements)

    # -- helpers -------------------------------------------------------------------------------------
    def main_loads(self, regime: str = "cached") -> pd.DataFrame:
        df = self.loads[(self.loads["regime"] == regime) & (self.loads["main"] == True)]  # noqa: E712
        return df.set_index("engine").reindex([e for e in self.engines if e in set(df["engine"])]).reset_index()

    def _op(self, regime: str, operation: str) -> pd.DataFrame:
        s = self.summary
        return s[(s["regime"] == regime) & (s["operation"] == operation)].set_index("engine")

    # -- tables --------------------------------------------------------------------------------------
    def load_table(self):
        """Every load: its regime, order and bulk path, time and rate, the engine's CPU in the load
        window and in the settle window after it (flushes, compactions, purge), per row, the
        after-load maintenance (ANALYZE, VACUUM, a flush or checkpoint), and bytes per row."""
        d = self.loads
        if d.empty:
            return pd.DataFrame({"": ["no load was measured"]}).style.hide(axis="index")
        out = pd.DataFrame({
            "regime": d["regime"], "engine": [engine_title(e) for e in d["engine"]],
            "structure": [structure(e) for e in d["engine"]], "order": d["order"], "bulk path": d["method"],
            "rows": d["rows"], "seconds": d["wall_s"], "rows/s": d["rows_per_s"],
            "rows per engine CPU s": d["rows"] / (d["engine_cpu_s"] + d["settle_cpu_s"].fillna(0)),
            "engine CPU s": d["engine_cpu_s"], "after-load CPU s (settle)": d["settle_cpu_s"],
            "settle s": d["settle_wall_s"], "engine CPU µs/row (both, net)": d["engine_cpu_us_per_row"],
            "client CPU s": d["client_cpu_s"], "maintenance CPU s": d["maintenance_cpu_s"],
            "table B/row": d["table_bytes_per_row"], "index B/row": d["index_bytes_per_row"],
            "data dir B/row": [_datadir_text(v) for v in d["datadir_bytes_per_row"]],
            "peak RSS growth MiB": d["peak_rss_growth_mb"],
        })
        out["regime"] = out["regime"].map(regime_title)
        numeric = [c for c in out.columns[5:] if c != "data dir B/row"]
        return out.style.format(fmt, subset=numeric).hide(axis="index")

    def key_order_table(self):
        o = self.orders
        if o.empty:
            return pd.DataFrame({"": ["this run loaded one order only"]}).style.hide(axis="index")
        out = pd.DataFrame({
            "regime": o["regime"].map(regime_title), "engine": [engine_title(e) for e in o["engine"]],
            "bulk path": o["method"], "key order s": o["key_s"], "random order s": o["random_s"], "time random / key": o["time_ratio"],
            "B/row key order": o["key_bytes_per_row"], "B/row random order": o["random_bytes_per_row"],
            "size random / key": o["size_ratio"],
            "data dir B/row key": [_datadir_text(v) for v in o["key_datadir_per_row"]],
            "data dir B/row random": [_datadir_text(v) for v in o["random_datadir_per_row"]],
        })
        return out.style.format(fmt, subset=list(out.columns[3:9])).hide(axis="index")

    def operations_table(self, regime: str = "cached"):
        """Insert and fetch per engine: latency at the client (mean over repetitions ± 95% CI of
        each repetition's percentile), the engine's CPU per operation (idle rate taken away), the
        client's, the engine's own storage reads per operation, rows per fetch."""
        s = self.summary[self.summary["regime"] == regime]
        if s.empty:
            return pd.DataFrame({"": [f"no operation measured in regime {regime!r}"]}).style.hide(axis="index")
        order = {e: i for i, e in enumerate(self.engines)}
        s = s.assign(_e=s["engine"].map(order), _o=s["operation"].map({o: i for i, o in enumerate(OPERATIONS)}))
        s = s.sort_values(["_o", "_e"])

        def ci(col: str, unit: str = "") -> list[str]:
            return [fmt_ci(v, h, unit) for v, h in zip(s[col], s[f"{col}_ci95"])]

        return pd.DataFrame({
            "operation": s["operation"], "engine": [engine_title(e) for e in s["engine"]],
            "p50 ms": ci("latency_p50"), "p95 ms": ci("latency_p95"), "p99 ms": ci("latency_p99"),
            "mean ms": ci("latency_mean"), "engine CPU µs/op": ci("engine_cpu_us"),
            "client CPU µs/op": [fmt(v) for v in s["client_cpu_us"]],
            "engine reads/op": [fmt(v) for v in s["reads_per_op"]], "rows/op": [fmt(v) for v in s["rows_per_op"]],
            "repetitions": s["n"],
        }).style.hide(axis="index")

    def pairs_frame(self) -> pd.DataFrame:
        """The B-tree/LSM pairs per regime and figure: both values, LSM / B-tree with its 95% CI
        and Welch's verdict (one test on the log scale: results.contrast; loads: one each, no
        test), and what else the pair differed in this run (`confounders`)."""
        rows = []
        for btree, lsm, what in PAIRS:
            for regime in self.regimes:
                main = self.main_loads(regime).set_index("engine")
                others = "; ".join(self.confounders(btree, lsm, regime))
                base = {"pair": what, "btree": btree, "lsm": lsm, "regime": regime, "confounders": others}
                if btree in main.index and lsm in main.index:
                    a, b = main.at[btree, "rows_per_s"], main.at[lsm, "rows_per_s"]
                    rows.append({**base, "figure": "load rows/s (one load each)", "btree_value": a, "lsm_value": b,
                                 "ratio": b / a, "ratio_low": np.nan, "ratio_high": np.nan, "beyond_noise": None,
                                 "n": 1, "lower_is_better": False})
                for operation in OPERATIONS:
                    for column, label in (("latency_mean", "mean latency ms"), ("engine_cpu_us", "engine CPU µs/op")):
                        c = analysis.contrast(self.summary, regime, operation, btree, lsm, column)
                        if c is None:
                            continue
                        rows.append({**base, "figure": f"{operation}: {label}", "btree_value": c["base_mean"],
                                     "lsm_value": c["mean"], "ratio": c["ratio"], "ratio_low": c["ratio_low"],
                                     "ratio_high": c["ratio_high"], "beyond_noise": c["beyond_noise"],
                                     "n": min(c["n"], c["base_n"]), "lower_is_better": True})
        return pd.DataFrame(rows, columns=["pair", "btree", "lsm", "regime", "confounders", "figure", "btree_value",
                                           "lsm_value", "ratio", "ratio_low", "ratio_high", "beyond_noise", "n",
                                           "lower_is_better"])

    def pairs_table(self):
        p = self.pairs_frame()
        if p.empty:
            return pd.DataFrame({"": ["no B-tree/LSM pair ran (MariaDB with MyRocks, SQLite with RocksDB)"]}
                                ).style.hide(axis="index")
        return pd.DataFrame({
            "pair": [f"{engine_title(a)} / {engine_title(b)}" for a, b in zip(p["btree"], p["lsm"])],
            "regime": p["regime"].map(regime_title), "figure": p["figure"],
            "B-tree": [fmt(v) for v in p["btree_value"]], "LSM": [fmt(v) for v in p["lsm_value"]],
            "LSM / B-tree (95% CI)": [fmt_ratio_ci(r, lo, hi) for r, lo, hi in
                                      zip(p["ratio"], p["ratio_low"], p["ratio_high"])],
            "Welch (5%)": [_verdict(v, n) for v, n in zip(p["beyond_noise"], p["n"])],
        }).style.hide(axis="index")

    def _cache_mib(self, engine: str, regime: str) -> float:
        """The buffer pool or block cache this workload set on a server in `regime`; NaN where it
        set none (embedded engines keep their library's default)."""
        d = _dialect(engine)
        pool = self.param("limited_buffer_pool_mb" if regime == "memory-limited" else "cached_buffer_pool_mb")
        return float(pool) if pool and d and d.buffer_setting(get_engine(engine), pool) else float("nan")

    def confounders(self, btree: str, lsm: str, regime: str) -> list[str]:
        """What the pair differed in besides its storage structure in this run (analysis.confounders
        on the starts' durability readings, the tables' sizes against memtable and cache, the load's
        settle CPU and where a fetch's lookup ran)."""
        main = self.main_loads(regime).set_index("engine")
        mib = {e: main.at[e, "engine_bytes_per_row"] * main.at[e, "rows"] / 2 ** 20
               for e in (btree, lsm) if e in main.index}
        settle = {e: main.at[e, "settle_cpu_s"] for e in (btree, lsm) if e in main.index}
        if "memtable_mib" not in main:  # a run stored before the memtable was read: nothing to compare
            main = main.assign(memtable_mib=float("nan"))
        dialects = {e: _dialect(e) for e in (btree, lsm)}
        return analysis.confounders(
            btree, lsm, reading=self.readings, mib=mib,
            memtable_mib={e: main.at[e, "memtable_mib"] for e in (btree, lsm) if e in main.index},
            settle_cpu_s=settle, python_side={e: getattr(d, "lookup_runs", "") for e, d in dialects.items()},
            cache_mib={e: self._cache_mib(e, regime) for e in (btree, lsm)},
            titles={e: engine_title(e) for e in (btree, lsm)})

    def regime_table(self) -> pd.DataFrame:
        """Per engine start of the memory-limited regime: how its table compares with its buffer
        pool and with the container's memory (page cache included in the limit)."""
        limited = self.main_loads("memory-limited")
        if limited.empty:
            return pd.DataFrame({"": [f"the {regime_title('memory-limited')} regime did not run"]})
        pool, memory = self.param("limited_buffer_pool_mb"), self.param("limited_memory_mb")
        table_mb = limited["engine_bytes_per_row"] * limited["rows"] / 2 ** 20
        return pd.DataFrame({
            "engine": [engine_title(e) for e in limited["engine"]], "table + indexes MiB": table_mb.round(1),
            "buffer pool / cache MiB": [pool if _dialect(e) and _dialect(e).buffer_setting(get_engine(e), pool)
                                        else "image default" for e in limited["engine"]],
            "table / buffer pool": (table_mb / pool).round(2), "container memory MiB": memory,
            "table / container memory": (table_mb / memory).round(2),
        })

    def seed_frame(self) -> pd.DataFrame:
        return analysis.beside_seed(results.reference("seed001_load_fetch"), self.loads, self.summary)

    def _seed_label(self, system: str, engine) -> str:
        """Both sides of a seed row by name: the seed's system and the engine measured beside it."""
        if not isinstance(engine, str):
            return f"{system} (seed only)"
        here = engine_title(engine)
        if engine not in self.engines:
            return f"{system} (seed only; {here} not in this run)"
        return system if here == system else f"{system} (seed) / {here} (here)"

    def seed_table(self):
        f = self.seed_frame()
        return pd.DataFrame({
            "system": [self._seed_label(s, e) for s, e in zip(f["system"], f["engine"])], "source": f["source"],
            "engine here": [("none (cloud service)" if not isinstance(e, str) else engine_title(e) if e in self.engines
                             else f"{engine_title(e)}: not in this run") for e in f["engine"]],
            "rows": [SEED_ROWS_TEXT if src == "seed 001" else f"{r:,.0f}" for r, src in zip(f["rows"], f["source"])],
            "load rows/s": [fmt(v) for v in f["load_rows_per_s"]], "load rate": f["rate_source"],
            "rows per engine CPU s": [fmt(v) if v == v else "not known" for v in f["rows_per_engine_cpu_s"]],
            "insert one row ms": [("< " if b == "<" else "") + fmt(v) for v, b in zip(f["insert_ms"], f["insert_bound"])],
            "fetch a customer ms": f["fetch_text"], "note": f["note"],
        }).style.hide(axis="index")

    # -- figures -------------------------------------------------------------------------------------
    def load_figure(self):
        """Load rates grouped by engine (one bar per regime, order and bulk path), on a log axis
        where they span more than LOG_SCALE_SPREAD."""
        d = self.loads
        if d.empty:
            return None
        own = d[d["main"] == True].groupby("engine")["method"].first()  # noqa: E712 (labels are bools)
        df = d.assign(engine_name=[engine_title(e) for e in d["engine"]],
                      load=[f"{regime_title(r)}, {o} order" + ("" if m == own.get(e) else f", variant: {m}")
                            for e, r, o, m in zip(d["engine"], d["regime"], d["order"], d["method"])])
        df = df.assign(_v=df["load"].str.contains("variant"), _r=df["regime"].map({r: i for i, r in enumerate(REGIMES)}),
                       _o=df["order"] != "key", _e=df["engine"].map({e: i for i, e in enumerate(self.engines)})
                       ).sort_values(["_v", "_r", "_o", "_e"], kind="stable")
        positive = df["rows_per_s"][df["rows_per_s"] > 0]
        return grouped_bars(df, x=["engine_name"], group="load", value="rows_per_s", unit="rows per second",
                            name="load-rows-per-second", log_y=bool(len(positive)) and
                            positive.max() / positive.min() > LOG_SCALE_SPREAD,
                            title=f"Load rate per engine ({self.rows:,} line orders, each engine's own bulk path; "
                                  "one load each)")

    def size_figure(self):
        m = self.main_loads()
        if m.empty:
            return None
        df = pd.concat([m.assign(phase="table + indexes (engine's size functions)", v=m["engine_bytes_per_row"]),
                        m.assign(phase="data directory growth", v=m["datadir_bytes_per_row"])])
        return bars_by_phase(df, "v", unit="bytes per row", name="load-bytes-per-row",
                             title="Bytes on disk per line order after the load (cached regime, key order)")

    def operation_figure(self, value: str = "latency_mean", regime: str = "cached"):
        """Bars per operation and engine with 95% CIs: `latency_mean` (ms at the client) or
        `engine_cpu_us` (the engine's CPU per operation, idle rate taken away)."""
        s = self.summary[self.summary["regime"] == regime]
        if s.empty:
            return None
        unit, what, name = {"latency_mean": ("ms per operation", "Mean latency per operation at the client", "latency"),
                            "engine_cpu_us": ("engine CPU µs per operation", "Engine CPU per operation (idle rate "
                                              "taken away)", "cpu")}[value]
        return bars_by_phase(s.assign(phase=s["operation"]), value, error=f"{value}_ci95", unit=unit,
                             phases=OPERATIONS, name=f"operation-{name}-{regime}",
                             title=f"{what} ({regime_title(regime)}; error bars: 95% CI)")

    def seed_figure(self):
        """Load rates as each side measured them, raw (no per-core figure: the seed's CPU use is
        not known), each bar group named for both sides."""
        f = self.seed_frame()
        if f.empty:
            return None
        f = f.assign(label=[self._seed_label(s, e) for s, e in zip(f["system"], f["engine"])])
        positive = f["load_rows_per_s"][f["load_rows_per_s"] > 0]
        return grouped_bars(f, x=["label"], group="source", value="load_rows_per_s", unit="rows per second",
                            name="seed001-load-rows-per-second", colors={"seed 001": "#9E9E9E", "this run": "#336791"},
                            log_y=bool(len(positive)) and positive.max() / positive.min() > LOG_SCALE_SPREAD,
                            title=f"Load rate: seed 001 ({SEED_ROWS_TEXT} rows, 8 vCPU machines) beside this host "
                                  f"({self.rows:,} rows, {self.cores} cores); not normalised")

    # -- narrative -------------------------------------------------------------------------------------
    def _drift(self) -> float:
        """How far apart this host's own speed was between repetitions (slowest / fastest
        calibration); 1.0 where the run has none."""
        return float(self.host["max_over_min"]) if self.host else 1.0

    def _lowest(self, s: pd.DataFrame, column: str, unit: str, what: str) -> str:
        """The lowest `column` named only with the engines not told apart from it at this n."""
        best = s[column].idxmin()
        ties = analysis.not_told_apart(s, column, best)
        n = int(s["n"].min())
        head = (f"lowest {what}: {engine_title(best)} at {fmt_ci(s.at[best, column], s.at[best, f'{column}_ci95'], unit)}")
        if not ties:
            return head + f", beyond noise against each of the others (Welch, n={n})"
        return (head + f", not told apart at n={n} from " + ", ".join(
            f"{engine_title(e)} ({fmt_ci(s.at[e, column], s.at[e, f'{column}_ci95'], unit)})" for e in ties))

    def _waits(self, engine: str) -> bool | None:
        return analysis.commit_waits(self.readings.get(engine, ""))

    def headline(self) -> str:
        """The seed's three questions answered from this run (cached regime, key-order table)."""
        lines = []
        m = self.main_loads()
        drift = self._drift()
        if not m.empty:
            best, worst = m.loc[m["rows_per_s"].idxmax()], m.loc[m["rows_per_s"].idxmin()]
            near = [e for e in m["engine"] if e != best["engine"] and
                    m.set_index("engine").at[e, "rows_per_s"] * drift >= best["rows_per_s"]]
            line = (f"**Load ({self.rows:,} line orders in primary-key order, each engine's own bulk path; one load "
                    f"each, so single measurements without a CI):** highest rate {engine_title(best['engine'])}, "
                    f"{fmt(best['rows_per_s'])} rows/s ({fmt(best['wall_s'])} s, {best['method']}); lowest "
                    f"{engine_title(worst['engine'])}, {fmt(worst['rows_per_s'])} rows/s ({fmt(worst['wall_s'])} s). ")
            variants = self.loads[(self.loads["regime"] == "cached") & (self.loads["engine"] == worst["engine"])
                                  & (self.loads["order"] == "key") & (self.loads["main"] != True)]  # noqa: E712
            for v in variants.itertuples():
                line += (f"{engine_title(worst['engine'])} through its other bulk path ({v.method}) loaded the same "
                         f"rows at {fmt(v.rows_per_s)} rows/s ({fmt(v.wall_s)} s). ")
            if self.host:
                line += (f"This host's own speed varied {fmt(drift)}x between its slowest and fastest calibration "
                         "in this run, so loads within that factor of each other are not told apart"
                         + (f": {', '.join(engine_title(e) for e in near)} within it of the highest." if near else "."))
            lines.append(line)
        limited = self.main_loads("memory-limited")
        if not limited.empty:
            pool = self.param("limited_buffer_pool_mb")
            lines.append(f"**Load with a buffer pool or block cache of {pool} MiB ({regime_title('memory-limited')}, "
                         "servers; one load each):** "
                         + "; ".join(f"{engine_title(r.engine)} {fmt(r.rows_per_s)} rows/s" for r in limited.itertuples())
                         + ". Shuffled rows: see the key-order findings.")
        for operation, what in ((INSERT["key"], "Insert one row (autocommit, new key after the last)"),
                                (INSERT["random"], "Insert one row at a random place in the key order"),
                                (FETCH, "Fetch all line orders of one customer")):
            s = self._op("cached", operation)
            if s.empty:
                continue
            rows = f" (~{fmt(s['rows_per_op'].mean())} rows each)" if operation == FETCH else ""
            # A server's engine CPU leaves its driver out, an embedded engine's holds it: ranked apart.
            servers = s[[is_server(e) for e in s.index]]
            by_cpu = (f"{self._lowest(servers, 'engine_cpu_us', ' µs', 'server CPU per operation among the servers')} "
                      "(their drivers' CPU left out, so servers of different drivers compare); "
                      if len(servers) > 1 else "")
            line = (f"**{what}{rows}:** {by_cpu}"
                    f"{self._lowest(s, 'latency_mean', ' ms', 'mean latency at the client')}.")
            heavy = [e for e in s.index if s.at[e, "client_cpu_us"] == s.at[e, "client_cpu_us"]
                     and s.at[e, "client_cpu_us"] / 1000 > 0.5 * s.at[e, "latency_mean"]]
            if heavy:
                line += (" Latency includes the driver: the driver's own CPU was " + "; ".join(
                    f"{fmt(s.at[e, 'client_cpu_us'] / 1000)} ms of {engine_title(e)}'s {fmt(s.at[e, 'latency_mean'])} ms"
                    for e in heavy) + ".")
            if operation != FETCH:
                waits = {e: self._waits(e) for e in s.index}
                no_wait = [e for e, w in waits.items() if w is False]
                unknown = [e for e, w in waits.items() if w is None]
                if no_wait:
                    line += (f" {', '.join(engine_title(e) for e in no_wait)} did not sync to disk at commit by "
                             "its own reading (the durability caveat)")
                    synced = [e for e, w in waits.items() if w]
                    if synced:
                        line += "; among the engines that did, " + self._lowest(s.loc[synced], "engine_cpu_us", " µs",
                                                                               "engine CPU")
                    line += "."
                if unknown:
                    line += f" What a commit waits for is not readable for {', '.join(engine_title(e) for e in unknown)}."
            lines.append(line)
        return "\n".join(f"- {line}" for line in lines) or "- nothing was measured"

    def btree_lsm_findings(self) -> str:
        """Seed 001's reading (B-trees minimise read seeks, LSM trees favour write throughput),
        tried on each pair; a pair that differed in more than its structure in this run says what,
        and is not counted as a test of the reading."""
        p = self.pairs_frame()
        if p.empty:
            return "- No B-tree/LSM pair ran in this run (MariaDB with MariaDB MyRocks, or SQLite with RocksDB)."
        lines = []
        tally = {"fetch": {"B-tree": 0, "LSM": 0, "same": 0}, "insert": {"B-tree": 0, "LSM": 0, "same": 0}}
        untested = 0
        for (btree, lsm, regime), g in p.groupby(["btree", "lsm", "regime"], sort=False):
            a, b = engine_title(btree), engine_title(lsm)
            others = g["confounders"].iloc[0]
            parts = []
            for row in g.itertuples():
                if "CPU" in row.figure:
                    continue
                name = row.figure.split(":")[0]
                if not row.lower_is_better:
                    parts.append(f"load {fmt(row.btree_value)} against {fmt(row.lsm_value)} rows/s (one load each, "
                                 "no CI)")
                    continue
                kind = "fetch" if row.figure.startswith(FETCH) else "insert"
                ratio = fmt_ratio_ci(row.ratio, row.ratio_low, row.ratio_high, "x")
                parts.append(f"{name} {fmt(row.btree_value)} against {fmt(row.lsm_value)} ms (LSM / B-tree {ratio}, "
                             f"{_verdict(row.beyond_noise, row.n)})")
                if others:
                    untested += 1
                elif row.beyond_noise:
                    tally[kind]["B-tree" if row.ratio > 1 else "LSM"] += 1
                else:
                    tally[kind]["same"] += 1
            sizes = self.main_loads(regime).set_index("engine")
            if btree in sizes.index and lsm in sizes.index:
                mib = {e: sizes.at[e, "engine_bytes_per_row"] * sizes.at[e, "rows"] / 2 ** 20 for e in (btree, lsm)}
                parts.append(f"tables with their index {fmt(mib[btree])} and {fmt(mib[lsm])} MiB")
            head = f"**{a} (B-tree) against {b} (LSM), {regime_title(regime)}:** "
            if others:
                head += f"not a test of the structure at this scale: {others}. Measured: "
            lines.append(head + "; ".join(parts) + ".")
        for kind, seed_winner, what in (("fetch", "B-tree", "fetching a customer"),
                                        ("insert", "LSM", "inserting one row")):
            t = tally[kind]
            total = t["B-tree"] + t["LSM"] + t["same"]
            if not total:
                lines.append(f"**Seed 001 reads its table as the {seed_winner} side winning at {what}** (while calling "
                             f"its own numbers inconclusive: {SEED_INCONCLUSIVE_QUOTE}): this run does not test that "
                             "reading, since every pair above differed in more than its structure.")
                continue
            loser = "B-tree" if seed_winner == "LSM" else "LSM"
            verdict = ("agree with it" if t[seed_winner] > t[loser] and t[seed_winner] >= t["same"] else
                       "do not resolve it" if t["B-tree"] == t["LSM"] == 0 else "do not agree across the board")
            lines.append(f"**Seed 001 reads its table as the {seed_winner} side winning at {what}** (while calling its "
                         f"own numbers inconclusive: {SEED_INCONCLUSIVE_QUOTE}); this run's {total} comparisons of "
                         f"pairs that differed in nothing else it can see: the B-tree faster beyond noise in "
                         f"{t['B-tree']}, the LSM tree in {t['LSM']}, not resolved in {t['same']}: they {verdict}"
                         + (f" ({untested} more comparisons left out: their pairs differed in more than the "
                            "structure)." if untested else "."))
        lines.append("Latency is measured at the client, driver included: MariaDB and MariaDB MyRocks share PyMySQL; "
                     "SQLite and RocksDB run in this process.")
        return "\n".join(f"- {line}" for line in lines)

    def key_order_findings(self) -> str:
        """Seed 001's key-order question per engine: the shuffled load's time and size against the
        key-ordered one's (one load each: single measurements)."""
        o = self.orders
        if o.empty:
            return "- This run loaded one order only: no key-order comparison."
        lines = []
        for row in o.sort_values("time_ratio", ascending=False).itertuples():
            size = (f"; bytes per row {fmt(row.random_bytes_per_row)} shuffled against {fmt(row.key_bytes_per_row)} "
                    f"in key order ({fmt(row.size_ratio)}x)" if row.size_ratio == row.size_ratio else "")
            lines.append(f"**{engine_title(row.engine)}** ({regime_title(row.regime)}, {row.method}): the shuffled "
                         f"rows took {fmt(row.time_ratio)}x the time of the key-ordered ones ({fmt(row.random_s)} s "
                         f"against {fmt(row.key_s)} s){size}.")
        mysql = o[o["engine"].str.partition("@")[0] == "mysql"].set_index("regime")
        if not mysql.empty:
            pools = {"cached": self.param("cached_buffer_pool_mb"), "memory-limited": self.param("limited_buffer_pool_mb")}
            here = "; ".join(f"{fmt(r.time_ratio)}x with the buffer pool at {pools.get(regime, '?')} MiB"
                             for regime, r in mysql.iterrows())
            lines.append(f"Seed 001 ({SEED_ROWS_TEXT} rows, no load-time figure for the shuffled load): "
                         f"{SEED_PK_ORDER_QUOTE}. Here MySQL's shuffled load took {here}, one load each: the gain "
                         "depends on the buffer pool, and single loads neither confirm nor refute the seed's figure.")
        lines.append("One load per order, engine and regime: single measurements without a CI"
                     + (f"; this host's own speed varied {fmt(self._drift())}x over the run, so a ratio inside that "
                        "factor cannot be told from noise." if self.host else ", so a small ratio cannot be told from noise."))
        return "\n".join(f"- {line}" for line in lines)

    def seed_findings(self) -> str:
        f = self.seed_frame()
        biggest = self.main_loads()
        largest = (biggest["engine_bytes_per_row"] * biggest["rows"]).max() / 2 ** 20 if not biggest.empty else np.nan
        lines = [f"Seed 001 loaded {SEED_ROWS_TEXT} rows on 8 vCPU / 32 GB machines (Datastore serverless); this host "
                 f"has {self.cores} cores and {(self.info.get('memory_bytes') or 0) / 2**30:.0f} GiB, and this run "
                 f"loaded {self.rows:,} rows (about {self.rows / 44e6:.2%} of 44 M)"
                 + (f"; its largest table with its indexes was {fmt(largest)} MiB against a "
                    f"{self.param('cached_buffer_pool_mb')} MiB buffer pool" if largest == largest else "")
                 + ". The figures stand side by side raw: the seed gives no CPU figures, so no per-core or per-CPU "
                 "rate can be put beside it; rows per engine CPU second are this run's only. The seed's own reading "
                 f"of its table: {SEED_INCONCLUSIVE_QUOTE}."]
        for system, g in f.groupby("system", sort=False):
            seed = g[g["source"] == "seed 001"].iloc[0]
            ours = g[g["source"] == "this run"]
            if ours.empty:
                continue
            o = ours.iloc[0]
            fetch = self._op("cached", FETCH)
            client = fetch.at[o["engine"], "client_cpu_us"] if o["engine"] in fetch.index else float("nan")
            driver = (f" (the Python driver's own CPU {fmt(client / 1000)} ms of it)" if client == client else "")
            lines.append(f"**{self._seed_label(system, o['engine'])}:** load {fmt(seed['load_rows_per_s'])} rows/s in "
                         f"the seed ({seed['rate_source']}), {fmt(o['load_rows_per_s'])} rows/s here "
                         f"({fmt(o['rows_per_engine_cpu_s'])} rows per engine CPU second); insert "
                         f"{'< ' if seed['insert_bound'] == '<' else ''}{fmt(seed['insert_ms'])} ms there, "
                         f"{fmt(o['insert_ms'])} ms here; fetch {seed['fetch_text']} ms there, {fmt(o['fetch_ms'])} ms "
                         f"here{driver}.")
        return "\n".join(f"- {line}" for line in lines)

    def generator_findings(self) -> str:
        g = self.generator
        if g.empty:
            return "- The generator was not measured in this run."
        lines = []
        table = g[g["rows"] == self.rows] if self.rows in set(g["rows"]) else g[g["rows"] == g["rows"].max()]
        for row in table.itertuples():
            staged = (f", {fmt(row.staging_rows_per_s)} rows/s generated and written as CSV "
                      f"({fmt(row.staged_bytes_per_row)} bytes per row)" if row.staging_rows_per_s == row.staging_rows_per_s
                      else "")
            lines.append(f"**The run's table, {row.order} order, {row.rows:,.0f} rows:** {fmt(row.rows_per_s)} rows/s "
                         f"generated ({fmt(row.cpu_s)} s of CPU){staged}.")
        if not self.loads.empty:
            fastest = self.loads.loc[self.loads["rows_per_s"].idxmax()]
            slowest = table["rows_per_s"].min()
            verdict = "faster" if slowest > fastest["rows_per_s"] else "NOT faster"
            lines.append(f"The highest load rate was {engine_title(fastest['engine'])}'s, {fmt(fastest['rows_per_s'])} "
                         f"rows/s: the generator alone ({fmt(slowest)} rows/s in its slower order) is {verdict} than "
                         "that. The file-based paths (COPY, LOAD DATA) read the CSV file staged before the first "
                         "start, so generation is outside their windows"
                         + (f"; {', '.join(engine_title(e) for e in self._from_generator())} take rows from the "
                            "generator inside their load window, and their CPU holds its "
                            f"{fmt(table['cpu_s'].max() / table['rows'].max() * 1e6)} µs per row."
                            if self._from_generator() else "."))
        key = g[g["order"] == "key"].sort_values("rows")
        if len(key) >= 2:
            small, large = key.iloc[0], key.iloc[-1]
            a, b = small["peak_rss_growth_mb"], large["peak_rss_growth_mb"]
            flat = b == b and a == a and b <= max(2 * a, a + 8)
            lines.append(f"**Peak memory against the row count:** this process's peak grew by {fmt(a)} MiB while "
                         f"generating {small['rows']:,.0f} rows and by {fmt(b)} MiB for {large['rows']:,.0f} "
                         f"({large['rows'] / small['rows']:.0f}x the rows): "
                         + ("flat (the larger table raised it by less than twice the smaller's, or 8 MiB more): rows "
                            "are made ~65,000 at a time, never held whole." if flat else
                            "it grew with the row count, beyond twice the smaller table's peak and 8 MiB."))
        return "\n".join(f"- {line}" for line in lines)

    def _from_generator(self) -> list[str]:
        """Engines of this run whose bulk path takes rows from the generator, not the staged file."""
        return [e for e in self.engines if (d := _dialect(e)) and not d.methods[0].reads_file]

    def _driver_share(self) -> str:
        """How much of a fetch the client's driver spent against the server, per server engine (cached)."""
        s = self._op("cached", FETCH)
        s = s[s["client_cpu_us"].notna() & (s["engine_cpu_us"] > 0)]
        if s.empty:
            return ""
        parts = [f"{engine_title(e)} {fmt(r.client_cpu_us / 1000)} ms against {fmt(r.engine_cpu_us / 1000)} ms"
                 for e, r in s.iterrows()]
        return ("Per fetch, the client's CPU against the server's (cached): " + "; ".join(parts) + ". ")

    def _durability_note(self) -> str:
        """What a single-row insert waited for, per engine, from each start's own durability
        reading (the base caveat 'Durability as each engine started' lists the readings)."""
        groups: dict[str, list[str]] = {"waited": [], "did not wait": [], "not readable": []}
        for engine in self.engines:
            wait = self._waits(engine)
            groups["waited" if wait else "did not wait" if wait is False else "not readable"].append(engine)
        parts = [f"{', '.join(engine_title(e) for e in engines)} {verb}" for verb, engines in
                 (("synced to disk at each commit", groups["waited"]),
                  ("did not (a commit returned before its log reached the disk)", groups["did not wait"])) if engines]
        text = ("Durability is each engine's default and differs: by each start's own reading (the durability "
                "caveat lists them), " + "; ".join(parts) + ".") if parts else \
            "Durability is each engine's default; no start's reading says what a commit waits for."
        if groups["not readable"]:
            text += (f" For {', '.join(engine_title(e) for e in groups['not readable'])} it is not readable as a "
                     "setting (the durability caveat quotes what each declares).")
        binlog = [e for e in self.engines if analysis.settings(self.readings.get(e, "")).get("log_bin") in ("1", "on")]
        if binlog:
            synced = [e for e in binlog if analysis.settings(self.readings[e]).get("sync_binlog") not in (None, "0")]
            text += "".join(f" {engine_title(e)} also wrote a binary log"
                            + (" and synced it at commit" if e in synced else "") for e in binlog) \
                + "; no other reading here shows one."
        return text

    def caveats(self, extra=()) -> str:
        p = self.param
        notes = [
            f"Scale: {self.rows:,} line orders ({p('rows'):,} asked; SSB's 1-7 lines per order make the exact count), "
            f"seed {p('seed')}; seed 001 loaded {SEED_ROWS_TEXT} rows (the article's figure; the 44,951,022 of the "
            "seed-like set is the count its published rates imply) on 8 vCPU / 32 GB machines, this host has "
            f"{self.cores} cores shared by the engine, the Python client and the harness. Absolute rates and "
            "latencies do not travel; ratios between engines measured here do, within this host.",
            "The table: SSB's lineorder (17 columns) from benchlib.datagen.ssb, SSB's distributions (1-7 lines per "
            "order, customers uniform but off multiples of 3 as dbgen's, sparse order keys) from a counter-based "
            "generator, not dbgen's rows. Primary key (lo_orderkey, lo_linenumber) and an index on lo_custkey, both "
            "created before the load, so every load maintains both (as a loader that keeps its keys does).",
            "Loads: each one is a single measurement (no repetitions, no CI): the load rows and the key-order ratios "
            "are one value each. The main table (key order, the engine's own path) is loaded first on its start; "
            "other loads go into tables of their own on the same start after it, so their data directory growth "
            "also holds the earlier tables' compactions (an LSM engine's can even shrink). A load's settle window "
            f"(at most {p('max_settle_seconds'):g} s) holds the work after the statement returned; where 'settle s' "
            "reached that bound, compaction or flushing went on into later windows.",
            "After each load, outside the load window: the maintenance its size functions need (PostgreSQL VACUUM "
            "ANALYZE, MySQL/MariaDB ANALYZE TABLE, MyRocks a memtable flush and ANALYZE TABLE, SQLite ANALYZE, DuckDB "
            "CHECKPOINT, RocksDB a memtable flush), measured as its own window. Data directory growth is read from "
            "this host (overlay2's merged view of the container, or the embedded engine's folder): logs, binary "
            "logs, undo and preallocated files included.",
            f"Operations: every repetition inserts {p('inserts')} rows in key order (new orders after the last key), "
            f"{p('inserts')} at random places in the key order (new orders in the gaps dbgen's sparse keys leave, "
            f"where its refresh inserts go) and fetches all line orders of {p('fetches')} random customers (the same "
            "customers on every engine, drawn afresh each repetition); each operation is its own autocommit "
            "statement timed at the client. Insert and fetch windows have no settle window: deferred work after them "
            "(a memtable flush) is not in their CPU.",
            "Latency is timed at the client and includes the Python driver: psycopg (C) for PostgreSQL, PyMySQL "
            "(pure Python) for MySQL, MariaDB and MyRocks, pymongo for FerretDB; SQLite, DuckDB and RocksDB run in "
            "this process. " + self._driver_share() + "Compare engines of one driver by latency, engines of "
            "different drivers by engine CPU.",
            self._durability_note(),
            "Compression: RocksDB (embedded) writes Snappy-compressed blocks (its engine note); MyRocks keeps "
            "RocksDB's default compression of its build, which this run does not read; InnoDB, PostgreSQL and SQLite "
            "store these rows uncompressed at their defaults. Bytes per row compare layouts and compression together.",
        ]
        if "memory-limited" in self.regimes:
            limited = self.main_loads("memory-limited")
            share = (limited["engine_bytes_per_row"] * limited["rows"] / 2 ** 20 / p("limited_memory_mb"))
            notes.append(f"The '{regime_title('memory-limited')}' regime (servers only; its parameter name is "
                         f"memory-limited): buffer pool or block cache {p('limited_buffer_pool_mb')} MiB and a "
                         f"container memory limit of {p('limited_memory_mb')} MiB, page cache included. Its tables "
                         + (f"were {share.min():.1%}-{share.max():.1%} of that limit" if not share.empty else
                            "were not measured")
                         + ": they fit the container's memory, so the regime tests the buffer pool, not storage. Whether "
                         "a page missing from the pool came from the device (InnoDB's O_DIRECT reads bypass the page "
                         "cache) cannot be shown here: cgroup v1 blkio reports 0 "
                         "bytes read for every container on this host, and the engines' own counters (PostgreSQL "
                         "blks_read, InnoDB buffer-pool reads, MyRocks block-cache misses) count reads the OS page "
                         "cache may have served.")
        notes += [f"**{engine_title(e)}:** {n}" for e in self.engines if (d := _dialect(e)) for n in d.notes]
        return super().caveats([*notes, *extra])
