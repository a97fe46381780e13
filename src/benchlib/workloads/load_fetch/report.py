"""The load-insert-fetch notebook's tables, figures and narrative, on the shared report layer.
Every sentence is computed from the run's numbers (read back from the store by run id)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ... import results
from ...engines import get_engine
from ...errors import UnknownEngineError
from ...plots import bars_by_phase, engine_color, engine_order, engine_title, grouped_bars
from ...report import RunReport, fmt, fmt_ci
from . import analysis
from .dialects import PAIRS, dialect_for
from .workload import FETCH, INSERT, OPERATIONS, REGIMES

SEED_ROWS_TEXT = "44,951,022"
SEED_PK_ORDER_SPEEDUP = 6.0  # seed 001: "almost a 6x improvement (in time)" loading MySQL in PK order


def _dialect(key: str):
    try:
        return dialect_for(get_engine(key))
    except UnknownEngineError:
        return None


def structure(key: str) -> str:
    d = _dialect(key)
    return d.structure if d else "?"


def _syncs(key: str) -> bool | None:
    d = _dialect(key)
    return d.syncs_commit if d else None


def _ratio_text(ratio: float) -> str:
    """'2.3x faster' style: how many times one figure is the other's."""
    return f"{ratio:.2g}x" if ratio < 10 else f"{ratio:.0f}x"


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
            f"rows/s per core ({self.cores})": d["rows_per_s"] / self.cores,
            "engine CPU s": d["engine_cpu_s"], "after-load CPU s (settle)": d["settle_cpu_s"],
            "settle s": d["settle_wall_s"], "engine CPU µs/row (both, net)": d["engine_cpu_us_per_row"],
            "client CPU s": d["client_cpu_s"], "maintenance CPU s": d["maintenance_cpu_s"],
            "table B/row": d["table_bytes_per_row"], "index B/row": d["index_bytes_per_row"],
            "data dir B/row": d["datadir_bytes_per_row"], "peak RSS growth MiB": d["peak_rss_growth_mb"],
        })
        return out.style.format(fmt, subset=list(out.columns[5:])).hide(axis="index")

    def key_order_table(self):
        o = self.orders
        if o.empty:
            return pd.DataFrame({"": ["this run loaded one order only"]}).style.hide(axis="index")
        out = pd.DataFrame({
            "regime": o["regime"], "engine": [engine_title(e) for e in o["engine"]], "bulk path": o["method"],
            "key order s": o["key_s"], "random order s": o["random_s"], "time random / key": o["time_ratio"],
            "B/row key order": o["key_bytes_per_row"], "B/row random order": o["random_bytes_per_row"],
            "size random / key": o["size_ratio"], "data dir B/row key": o["key_datadir_per_row"],
            "data dir B/row random": o["random_datadir_per_row"],
        })
        return out.style.format(fmt, subset=list(out.columns[3:])).hide(axis="index")

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
        """The B-tree/LSM pairs that share everything else, per regime and figure: both values,
        LSM / B-tree with its 95% CI and Welch's verdict (loads: one each, no test)."""
        rows = []
        for btree, lsm, what in PAIRS:
            for regime in self.regimes:
                main = self.main_loads(regime).set_index("engine")
                if btree in main.index and lsm in main.index:
                    a, b = main.at[btree, "rows_per_s"], main.at[lsm, "rows_per_s"]
                    rows.append({"pair": what, "btree": btree, "lsm": lsm, "regime": regime,
                                 "figure": "load rows/s (one load each)", "btree_value": a, "lsm_value": b,
                                 "ratio": b / a, "ratio_ci95": np.nan, "beyond_noise": None, "lower_is_better": False})
                for operation in OPERATIONS:
                    for column, label in (("latency_mean", "mean latency ms"), ("engine_cpu_us", "engine CPU µs/op")):
                        c = analysis.contrast(self.summary, regime, operation, btree, lsm, column)
                        if c is None:
                            continue
                        rows.append({"pair": what, "btree": btree, "lsm": lsm, "regime": regime,
                                     "figure": f"{operation}: {label}", "btree_value": c["base_mean"],
                                     "lsm_value": c["mean"], "ratio": c["ratio"], "ratio_ci95": c["ratio_ci95"],
                                     "beyond_noise": c["beyond_noise"], "lower_is_better": True})
        return pd.DataFrame(rows, columns=["pair", "btree", "lsm", "regime", "figure", "btree_value", "lsm_value",
                                           "ratio", "ratio_ci95", "beyond_noise", "lower_is_better"])

    def pairs_table(self):
        p = self.pairs_frame()
        if p.empty:
            return pd.DataFrame({"": ["no B-tree/LSM pair ran (MariaDB with MyRocks, SQLite with RocksDB)"]}
                                ).style.hide(axis="index")
        verdict = {True: "beyond noise", False: "within noise", None: "untested"}
        return pd.DataFrame({
            "pair": [f"{engine_title(a)} / {engine_title(b)}" for a, b in zip(p["btree"], p["lsm"])],
            "regime": p["regime"], "figure": p["figure"], "B-tree": [fmt(v) for v in p["btree_value"]],
            "LSM": [fmt(v) for v in p["lsm_value"]],
            "LSM / B-tree": [fmt_ci(r, h) for r, h in zip(p["ratio"], p["ratio_ci95"])],
            "Welch (5%)": [verdict[v if v is None else bool(v)] for v in p["beyond_noise"]],
        }).style.hide(axis="index")

    def regime_table(self) -> pd.DataFrame:
        """Per engine start of the memory-limited regime: how its table compares with its buffer
        pool and with the container's memory (page cache included in the limit)."""
        limited = self.main_loads("memory-limited")
        if limited.empty:
            return pd.DataFrame({"": ["the memory-limited regime did not run"]})
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
        return analysis.beside_seed(results.reference("seed001_load_fetch"), self.loads, self.summary,
                                    cores=self.cores)

    def seed_table(self):
        f = self.seed_frame()
        return pd.DataFrame({
            "system": f["system"], "source": f["source"],
            "engine here": [("none (cloud service)" if not isinstance(e, str) else engine_title(e) if e in self.engines
                             else f"{engine_title(e)}: not in this run") for e in f["engine"]],
            "rows": [f"{r:,.0f}" for r in f["rows"]], "load rows/s": [fmt(v) for v in f["load_rows_per_s"]],
            "rows/s per core": [fmt(v) for v in f["load_rows_per_s_per_core"]],
            "insert one row ms": [("< " if b == "<" else "") + fmt(v) for v, b in zip(f["insert_ms"], f["insert_bound"])],
            "fetch a customer ms": f["fetch_text"], "note": f["note"],
        }).style.hide(axis="index")

    # -- figures -------------------------------------------------------------------------------------
    def load_figure(self):
        d = self.loads
        if d.empty:
            return None
        variants = d.groupby("engine")["method"].nunique().max() > 1
        df = d.assign(phase=[f"{r}, {o} order" + (f", {m}" if variants else "") for r, o, m in
                             zip(d["regime"], d["order"], d["method"])])
        return bars_by_phase(df, "rows_per_s", unit="rows per second", name="load-rows-per-second",
                             title=f"Load rate per engine ({self.rows:,} line orders, each engine's own bulk path)")

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
                             title=f"{what} ({regime}; error bars: 95% CI)")

    def seed_figure(self):
        f = self.seed_frame()
        if f.empty:
            return None
        return grouped_bars(f, x=["system"], group="source", value="load_rows_per_s_per_core",
                            unit="rows/s per core", name="seed001-load-per-core",
                            colors={"seed 001": "#9E9E9E", "this run": "#336791"},
                            title="Load rate per core: seed 001 (8 vCPU, 44.95 M rows) beside this host "
                                  f"({self.cores} cores, {self.rows:,} rows)")

    # -- narrative -------------------------------------------------------------------------------------
    def headline(self) -> str:
        """The seed's three questions answered from this run (cached regime, key-order table)."""
        lines = []
        m = self.main_loads()
        if not m.empty:
            best, worst = m.loc[m["rows_per_s"].idxmax()], m.loc[m["rows_per_s"].idxmin()]
            lines.append(
                f"**Load ({self.rows:,} line orders in primary-key order, each engine's own bulk path):** "
                f"{engine_title(best['engine'])} loaded fastest, {fmt(best['rows_per_s'])} rows/s "
                f"({fmt(best['wall_s'])} s, {best['method']}); {engine_title(worst['engine'])} slowest, "
                f"{fmt(worst['rows_per_s'])} rows/s ({fmt(worst['wall_s'])} s): "
                f"{_ratio_text(best['rows_per_s'] / worst['rows_per_s'])} apart. "
                + self._by_structure(m.set_index("engine")["rows_per_s"], "loaded", "rows/s", higher=True))
        limited = self.main_loads("memory-limited")
        if not limited.empty:
            pool = self.param("limited_buffer_pool_mb")
            lines.append(f"**Load with a {pool} MiB buffer pool or block cache (memory-limited, servers):** "
                         + "; ".join(f"{engine_title(r.engine)} {fmt(r.rows_per_s)} rows/s" for r in limited.itertuples())
                         + ". Shuffled rows: see the key-order findings.")
        for operation, what in ((INSERT["key"], "Insert one row (autocommit, new key after the last)"),
                                (INSERT["random"], "Insert one row at a random place in the key order"),
                                (FETCH, "Fetch all line orders of one customer")):
            s = self._op("cached", operation)
            if s.empty:
                continue
            best, worst = s["latency_mean"].idxmin(), s["latency_mean"].idxmax()
            rows = f" (~{fmt(s['rows_per_op'].mean())} rows each)" if operation == FETCH else ""
            line = (f"**{what}{rows}:** fastest {engine_title(best)} at "
                    f"{fmt_ci(s.at[best, 'latency_mean'], s.at[best, 'latency_mean_ci95'], ' ms')} mean (p99 "
                    f"{fmt(s.at[best, 'latency_p99'])} ms), slowest {engine_title(worst)} at "
                    f"{fmt_ci(s.at[worst, 'latency_mean'], s.at[worst, 'latency_mean_ci95'], ' ms')}. "
                    + self._by_structure(s["latency_mean"], "took", "ms", higher=False))
            if operation != FETCH and _syncs(best) is False:
                synced = [e for e in s.index if _syncs(e)]
                if synced:
                    b2 = s.loc[synced, "latency_mean"].idxmin()
                    line += (f" {engine_title(best)} does not wait for its log to reach the disk at commit here; of the "
                             f"engines that do, {engine_title(b2)} was fastest at {fmt(s.at[b2, 'latency_mean'])} ms.")
            lines.append(line)
        return "\n".join(f"- {line}" for line in lines) or "- nothing was measured"

    def _by_structure(self, values: pd.Series, verb: str, unit: str, *, higher: bool) -> str:
        groups = {}
        for engine, value in values.items():
            groups.setdefault(structure(engine), []).append((engine, value))
        parts = []
        for name in ("B-tree", "LSM", "columnar"):
            if name in groups:
                vals = [v for _, v in groups[name]]
                span = fmt(min(vals)) if len(vals) == 1 else f"{fmt(min(vals))}-{fmt(max(vals))}"
                parts.append(f"{name} engines ({', '.join(engine_title(e) for e, _ in groups[name])}) {verb} {span} {unit}")
        return "; ".join(parts) + "." if parts else ""

    def btree_lsm_findings(self) -> str:
        """Seed 001's reading (B-trees minimise read seeks, LSM trees favour write throughput),
        tested on the pairs that share everything but the storage structure."""
        p = self.pairs_frame()
        if p.empty:
            return "- No B-tree/LSM pair ran in this run (MariaDB with MariaDB MyRocks, or SQLite with RocksDB)."
        lines = []
        tally = {"fetch": {"B-tree": 0, "LSM": 0, "same": 0}, "insert": {"B-tree": 0, "LSM": 0, "same": 0}}
        for (btree, lsm, regime), g in p.groupby(["btree", "lsm", "regime"], sort=False):
            a, b = engine_title(btree), engine_title(lsm)
            parts = []
            for row in g.itertuples():
                if "CPU" in row.figure:
                    continue
                name = row.figure.split(":")[0]
                if not row.lower_is_better:
                    faster = a if row.ratio < 1 else b
                    factor = 1 / row.ratio if row.ratio < 1 else row.ratio
                    parts.append(f"load {fmt(row.btree_value)} against {fmt(row.lsm_value)} rows/s ({faster} "
                                 f"{_ratio_text(factor)} faster; one load each, no CI)")
                    continue
                kind = "fetch" if row.figure.startswith(FETCH) else "insert"
                if row.beyond_noise:
                    winner = "B-tree" if row.ratio > 1 else "LSM"
                    factor = row.ratio if row.ratio > 1 else 1 / row.ratio
                    tally[kind][winner] += 1
                    parts.append(f"{name} {fmt(row.btree_value)} against {fmt(row.lsm_value)} ms "
                                 f"({a if winner == 'B-tree' else b} {_ratio_text(factor)} faster, beyond noise)")
                else:
                    tally[kind]["same"] += 1
                    parts.append(f"{name} {fmt(row.btree_value)} against {fmt(row.lsm_value)} ms (no difference "
                                 "beyond noise)")
            sizes = self.main_loads(regime).set_index("engine")
            if btree in sizes.index and lsm in sizes.index:
                mib = {e: sizes.at[e, "engine_bytes_per_row"] * sizes.at[e, "rows"] / 2 ** 20 for e in (btree, lsm)}
                pool = (f", against a buffer pool / block cache of {self.param('limited_buffer_pool_mb')} MiB"
                        if regime == "memory-limited" else "")
                parts.append(f"tables with their index {fmt(mib[btree])} and {fmt(mib[lsm])} MiB{pool}")
            lines.append(f"**{a} (B-tree) against {b} (LSM), {regime}:** " + "; ".join(parts) + ".")
        for kind, seed_winner, what in (("fetch", "B-tree", "fetching a customer"),
                                        ("insert", "LSM", "inserting one row")):
            t = tally[kind]
            total = t["B-tree"] + t["LSM"] + t["same"]
            if not total:
                continue
            if t[seed_winner] > t["B-tree" if seed_winner == "LSM" else "LSM"] and t[seed_winner] >= t["same"]:
                verdict = "holds here"
            elif t["B-tree"] == t["LSM"] == 0:
                verdict = "is not shown here: no comparison differed beyond noise"
            else:
                verdict = "does not hold across the board here"
            lines.append(f"**Seed 001 says the {seed_winner} side wins at {what}; this run's {total} comparisons "
                         f"(pairs x regimes x orders):** the B-tree faster beyond noise in {t['B-tree']}, the LSM tree in "
                         f"{t['LSM']}, no difference beyond noise in {t['same']}: the seed's reading {verdict}.")
        lines.append("Latency is measured at the client, Python driver included: a pair shares its driver (pymysql for "
                     "MariaDB and MyRocks; the process itself for SQLite and RocksDB, where RocksDB's index scan, "
                     "multi-get and row decoding run in Python while SQLite's run in C).")
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
            lines.append(f"**{engine_title(row.engine)}** ({row.regime}, {row.method}): the shuffled rows took "
                         f"{fmt(row.time_ratio)}x the time of the key-ordered ones ({fmt(row.random_s)} s against "
                         f"{fmt(row.key_s)} s){size}.")
        mysql = o[o["engine"].str.partition("@")[0] == "mysql"]
        for r in mysql.itertuples():
            lines.append(f"Seed 001 saw MySQL load almost {SEED_PK_ORDER_SPEEDUP:g}x faster in primary-key order at "
                         f"{SEED_ROWS_TEXT} rows; here, in the {r.regime} regime at {self.rows:,} rows, key order was "
                         f"{fmt(r.time_ratio)}x as fast as shuffled"
                         + (" (no gain)." if r.time_ratio <= 1 else "."))
        lines.append("One load per order and engine: single measurements without a CI, so a small ratio cannot be "
                     "told from noise.")
        return "\n".join(f"- {line}" for line in lines)

    def seed_findings(self) -> str:
        f = self.seed_frame()
        lines = [f"Seed 001 loaded {SEED_ROWS_TEXT} rows on 8 vCPU / 32 GB machines; this host has {self.cores} "
                 f"cores and {(self.info.get('memory_bytes') or 0) / 2**30:.0f} GiB, and this run loaded "
                 f"{self.rows:,} rows ({self.rows / 44_951_022:.2%} of the seed's). Rates per core are the fairest "
                 "comparison there is, and still not a fair one: the seed's engines had 4x the cores and a table "
                 "that did not fit in the caches the way a small one does."]
        for system, g in f.groupby("system", sort=False):
            seed = g[g["source"] == "seed 001"].iloc[0]
            ours = g[g["source"] == "this run"]
            if ours.empty:
                continue
            o = ours.iloc[0]
            fetch = self._op("cached", FETCH)
            client = fetch.at[o["engine"], "client_cpu_us"] if o["engine"] in fetch.index else float("nan")
            driver = (f" (the Python driver's own CPU {fmt(client / 1000)} ms of it)" if client == client else "")
            lines.append(f"**{system} → {engine_title(o['engine'])}:** load {fmt(seed['load_rows_per_s_per_core'])} "
                         f"rows/s per vCPU in the seed, {fmt(o['load_rows_per_s_per_core'])} per core here; insert "
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
            lines.append(f"The fastest load was {engine_title(fastest['engine'])}'s at {fmt(fastest['rows_per_s'])} "
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

    def caveats(self, extra=()) -> str:
        p = self.param
        notes = [
            f"Scale: {self.rows:,} line orders ({p('rows'):,} asked; SSB's 1-7 lines per order make the exact count), "
            f"seed {p('seed')}; seed 001 loaded {SEED_ROWS_TEXT} rows on 8 vCPU / 32 GB machines, this host has "
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
            "Durability is each engine's default, and it differs: what a commit waits for is listed per engine in "
            "the durability caveat, as each engine reported it when it started. RocksDB through rocksdict writes with sync=false (the "
            "write returns once it is in the WAL's OS buffer), which a single-row latency compares with engines that "
            "flush their log at commit.",
        ]
        if "memory-limited" in self.regimes:
            notes.append(f"Memory-limited regime (servers only): buffer pool or block cache {p('limited_buffer_pool_mb')} "
                         f"MiB and a container memory limit of {p('limited_memory_mb')} MiB, page cache included; the "
                         "regime table gives each table's size against both. Where a table fits the container's memory "
                         "but not the buffer pool, an engine that reads through the OS page cache (PostgreSQL, MyRocks "
                         "unless rocksdb_use_direct_reads) still finds its pages in memory, while InnoDB with "
                         "innodb_flush_method=O_DIRECT (the settings note says which ran) reads the device: the regime "
                         "tests the buffer pool more than the container. Storage reads per operation are the engines' "
                         "own counters (PostgreSQL blks_read, InnoDB buffer-pool reads, MyRocks block-cache misses), "
                         "which count reads the OS page cache may still have served.")
        notes += [f"**{engine_title(e)}:** {n}" for e in self.engines if (d := _dialect(e)) for n in d.notes]
        return super().caveats([*notes, *extra])
