"""The SSB notebook's tables, figures and narrative, on the shared report layer. Every sentence is
computed from the run's numbers (read back from the store by run id) and seed 001's figures in
data/reference/seed001_ssb.csv."""
from __future__ import annotations

import pandas as pd

from ... import results
from ...engines import find_engine
from ...plots import bars_by_phase, engine_order, engine_title
from ...report import RunReport, fmt, fmt_ci, fmt_ratio_ci
from . import analysis
from .dialects import FLAT, dialect_for
from .queries import FINE_GRAINED, NAMES
from .workload import ANSWER_CHECK, MAINTENANCE

SEED_QUOTE_FINE = ("\"the cases when Clickhouse is faster (Q1.2, Q1.3 and Q 3.4) can be attributed to scanning "
                   "through a much smaller subset of the data. In all these cases the query had a where filter which "
                   "was more fine-grained than just the year\"")
SEED_QUOTE_ALLOYDB = ("\"AlloyDB can be very fast (6000x faster!!! for query 1.2 as example when we looked at actual "
                      "execution time 784337 ms vs. 127 ms) but only if the entire columns on which a query depends "
                      "can be fit into its RAM\"")
SEED_LINEORDERS = 1_997_997_687


def _dialect(key: str):
    engine = find_engine(key)
    return dialect_for(engine) if engine is not None else None


def structure(key: str) -> str:
    d = _dialect(key)
    return d.structure if d else "?"


def _verdict(beyond) -> str:
    if beyond is None or beyond != beyond:
        return "untested (one hot run)"
    return "beyond noise" if beyond else "not resolved"


class SsbReport(RunReport):
    def __init__(self, run_id: str, store=None):
        super().__init__(run_id, store)
        self.engines = engine_order(self.engines)
        self.windows = analysis.windows(self.measurements)
        self.loads = analysis.loads(self.windows)
        self.totals = analysis.load_totals(self.loads)
        self.sizes = analysis.sizes(self.windows)
        self.per_query = analysis.queries(self.windows)
        self.cores = int(self.info.get("cpu_cores") or 1)
        self.sf = float(self.param("scale_factor", float("nan")))
        flat = self.sizes[self.sizes["table"] == FLAT]["rows"]
        self.lineorders = int(flat.max()) if not flat.empty else 0
        self.column_stores = [e for e in self.engines if structure(e) == analysis.COLUMN_STORE]
        self.row_stores = [e for e in self.engines if structure(e) == analysis.ROW_STORE]
        self.seed = results.reference("seed001_ssb")

    # -- helpers ----------------------------------------------------------------------------------
    def _fastest_column_store(self) -> str | None:
        """The column store with the lowest geometric mean hot time over the queries every engine ran."""
        pq = self.per_query
        means = {e: results.geometric_mean(pq[pq["engine"] == e]["hot_s"]) for e in self.column_stores}
        means = {e: v for e, v in means.items() if v == v}
        return min(means, key=means.get) if means else None

    def _seed(self, system: str, metric: str) -> float:
        row = self.seed[(self.seed["system"] == system) & (self.seed["metric"] == metric)]
        return float(row["value"].iloc[0]) if not row.empty else float("nan")

    def answers(self) -> pd.DataFrame:
        """Per engine: query windows checked, how many matched DuckDB's reference answer."""
        m = self.measurements
        checked = m[(m["check_name"] == ANSWER_CHECK)].drop_duplicates("seq")
        if checked.empty:
            return pd.DataFrame(columns=["engine", "checked", "matched"])
        g = checked.groupby("engine", sort=False)
        return pd.DataFrame({"checked": g.size(), "matched": g["check_status"].apply(lambda s: int((s == "ok").sum()))}
                            ).reset_index()

    # -- tables -----------------------------------------------------------------------------------
    def load_table(self):
        d = self.loads
        if d.empty:
            return pd.DataFrame({"": ["no load was measured"]}).style.hide(axis="index")
        out = pd.DataFrame({
            "engine": [engine_title(e) for e in d["engine"]], "step": d["step"], "rows": d["rows"],
            "seconds": d["wall_s"], "rows/s": d["rows_per_s"],
            "engine CPU s (with settle)": d["cpu_s"], "engine CPU µs/row": d["cpu_us_per_row"],
        })
        return out.style.format(fmt, subset=list(out.columns[2:])).hide(axis="index")

    def load_totals_table(self):
        t = self.totals
        if t.empty:
            return pd.DataFrame({"": ["no load was measured"]}).style.hide(axis="index")
        out = pd.DataFrame({
            "engine": [engine_title(e) for e in t["engine"]], "structure": [structure(e) for e in t["engine"]],
            "bulk path": [_dialect(e).load_how if _dialect(e) else "?" for e in t["engine"]],
            "five tables s": t["load_wall_s"], "lineorder_flat s": t["flat_wall_s"],
            "maintenance and background work s": t["maintenance_wall_s"], "total s": t["total_wall_s"], "engine CPU s": t["total_cpu_s"],
        })
        return out.style.format(fmt, subset=list(out.columns[3:])).hide(axis="index")

    def size_table(self):
        s = self.sizes
        if s.empty:
            return pd.DataFrame({"": ["no size was read"]}).style.hide(axis="index")
        out = pd.DataFrame({
            "engine": [engine_title(e) for e in s["engine"]], "table": s["table"], "rows": s["rows"],
            "bytes on disk": s["table_bytes"], "staged file bytes": s["staged_bytes"],
            "staged / on disk": s["compression"], "bytes per row": s["bytes_per_row"],
            "size function": [_dialect(e).size_source if _dialect(e) else "?" for e in s["engine"]],
        })
        return out.style.format(fmt, subset=["rows", "bytes on disk", "staged file bytes", "staged / on disk",
                                             "bytes per row"], na_rep="n/a").hide(axis="index")

    def query_table(self):
        """Per query and engine: the cold run (one value), the hot runs' mean ± 95% CI, the engine's
        CPU per hot run, rows read where the engine reports them, and the answer's rows."""
        pq = self.per_query
        if pq.empty:
            return pd.DataFrame({"": ["no query was measured"]}).style.hide(axis="index")
        order = {q: i for i, q in enumerate(NAMES)}
        eorder = {e: i for i, e in enumerate(self.engines)}
        pq = pq.assign(_q=pq["query"].map(order), _e=pq["engine"].map(eorder)).sort_values(["_q", "_e"])
        return pd.DataFrame({
            "query": pq["query"], "engine": [engine_title(e) for e in pq["engine"]],
            "cold ms (one run)": [fmt(v * 1e3) + ("" if b > 0 else " (not cold: nothing read from storage)")
                                  for v, b in zip(pq["cold_s"], pq["cold_storage_read_bytes"])],
            "cold storage reads": [_bytes(v) for v in pq["cold_storage_read_bytes"]],
            "hot ms (mean ± 95% CI)": [fmt_ci(v * 1e3, h * 1e3) for v, h in zip(pq["hot_s"], pq["hot_ci95"])],
            "hot runs": pq["n"], "engine CPU ms (hot)": [fmt(v * 1e3) for v in pq["hot_cpu_s"]],
            "rows read (cold)": [fmt(v) if v == v else "not reported" for v in pq["cold_rows_read"]],
            "answer rows": [fmt(v) for v in pq["result_rows"]],
        }).style.hide(axis="index")

    def answers_table(self):
        a = self.answers()
        if a.empty:
            return pd.DataFrame({"": ["no answer was checked"]}).style.hide(axis="index")
        return pd.DataFrame({"engine": [engine_title(e) for e in a["engine"]], "query runs checked": a["checked"],
                             "equal to DuckDB's reference": a["matched"]}).style.hide(axis="index")

    def pairs_table(self):
        """Each pair's per-query ratio of hot times with its 95% CI and Welch's verdict."""
        frames = [analysis.contrast(self.per_query, base, other) for base, other in self._pairs()]
        frames = [f for f in frames if not f.empty]
        if not frames:
            return pd.DataFrame({"": ["no pair of engines ran the same queries"]}).style.hide(axis="index")
        d = pd.concat(frames, ignore_index=True)
        return pd.DataFrame({
            "pair": [f"{engine_title(o)} / {engine_title(b)}" for b, o in zip(d["base"], d["other"])],
            "query": d["query"], "fine-grained filter": ["yes" if q in FINE_GRAINED else "" for q in d["query"]],
            "hot time ratio (95% CI)": [fmt_ratio_ci(r, lo, hi) for r, lo, hi in zip(d["ratio"], d["low"], d["high"])],
            "Welch": [_verdict(b) for b in d["beyond_noise"]],
        }).style.hide(axis="index")

    def _pairs(self) -> list[tuple[str, str]]:
        """(base, other): DuckDB over ClickHouse (two column stores: whose advantage grows with a
        fine filter), and each row store over the fastest column store."""
        pairs = []
        if "chdb" in self.engines and "duckdb" in self.engines:
            pairs.append(("chdb", "duckdb"))
        best = self._fastest_column_store()
        if best:
            pairs += [(best, r) for r in self.row_stores]
        return pairs

    def seed_table(self):
        """Seed 001's figures beside this run's, raw and per row and per core; the cloud services'
        rows stay the seed's."""
        rows = []
        s = self.seed
        for r in s.itertuples():
            rows.append({"side": f"{r.system} (seed 001)", "figure": r.metric, "as written": r.as_written,
                         "value": fmt(r.value), "unit": r.unit, "rows": f"{int(r.rows):,}",
                         "per row": _per_row(r.metric, r.value, r.rows, r.unit),
                         "hardware": (f"{r.vcpus:.0f} vCPU, {r.memory_gib:.0f} GB" if r.vcpus == r.vcpus
                                      else "cloud service"), "note": r.note})
        for line in self._own_seed_rows():
            rows.append(line)
        return pd.DataFrame(rows).style.hide(axis="index")

    @property
    def _hardware(self) -> str:
        return f"{self.cores} cores, {self.info['memory_bytes'] / 2**30:.0f} GiB (this host)"

    def _own_seed_rows(self) -> list[dict]:
        out = []
        lo = self.loads[self.loads["step"] == "load lineorder"]
        for r in lo.itertuples():
            out.append({"side": f"{engine_title(r.engine)} (here)", "figure": "lineorder_load_wall_s",
                        "as written": "", "value": fmt(r.wall_s), "unit": "s", "rows": f"{int(r.rows):,}",
                        "per row": f"{r.wall_s / r.rows * 1e6:.3g} µs wall per row",
                        "hardware": self._hardware,
                        "note": f"engine CPU {r.cpu_us_per_row:.3g} µs per row (the engine's scope, settle included)"})
        s = self.sizes[self.sizes["table"].isin(["lineorder", FLAT])]
        for r in s.itertuples():
            out.append({"side": f"{engine_title(r.engine)} (here)", "figure": f"{r.table}_bytes_on_disk",
                        "as written": "", "value": fmt(r.table_bytes), "unit": "bytes", "rows": f"{int(r.rows):,}",
                        "per row": f"{r.bytes_per_row:.3g} bytes per row", "hardware": self._hardware,
                        "note": (f"staged text / on disk {r.compression:.2f}x" if r.compression == r.compression
                                 else "")})
        pq = self.per_query[self.per_query["query"].isin(["Q1.2", "Q1.3"])]
        for r in pq.itertuples():
            out.append({"side": f"{engine_title(r.engine)} (here)", "figure": f"{r.query}_wall_s (hot mean)",
                        "as written": "", "value": fmt(r.hot_s), "unit": "s", "rows": f"{self.lineorders:,}",
                        "per row": f"{r.hot_s / self.lineorders * 1e9:.3g} ns per line order" if self.lineorders else "",
                        "hardware": self._hardware, "note": (f"rows read (cold run) {r.cold_rows_read:,.0f}"
                                                 if r.cold_rows_read == r.cold_rows_read else "")})
        return out

    # -- figures ----------------------------------------------------------------------------------
    def query_figure(self):
        pq = self.per_query
        if pq.empty:
            return None
        df = pq.assign(phase=pq["query"], v=pq["hot_s"] * 1e3, e=pq["hot_ci95"] * 1e3)
        return bars_by_phase(df, "v", error="e", unit="ms", name="ssb-hot-query-times", phases=list(NAMES),
                             title=f"SSB queries, hot runs (mean ± 95% CI), SF {self.sf:g} "
                                   f"({self.lineorders:,} line orders)")

    def seed_figure(self):
        """Loading lineorder, CPU µs per row: this run's engines (their own scope, settle included)
        beside the one CPU figure the seed gives (clickhouse-client's, which parsed the CSV; the
        server's is not known, AlloyDB's not given)."""
        lo = self.loads[self.loads["step"] == "load lineorder"]
        rows = [{"phase": "seed 001: clickhouse-client only (parsing the CSV), SF 333", "engine": "chdb",
                 "v": self._seed("ClickHouse", "lineorder_load_cpu_s") / SEED_LINEORDERS * 1e6}]
        rows += [{"phase": f"here: the engine's CPU, SF {self.sf:g}", "engine": r.engine, "v": r.cpu_us_per_row}
                 for r in lo.itertuples()]
        return bars_by_phase(pd.DataFrame(rows), "v", unit="CPU µs per row", name="ssb-seed-load-cpu-per-row",
                             title="Loading lineorder, CPU µs per row: this run's engines beside the seed's only CPU "
                                   "figure")

    def load_figure(self):
        t = self.totals
        if t.empty:
            return None
        parts = [("five tables", "load_wall_s"), ("lineorder_flat", "flat_wall_s"),
                 ("maintenance and background work", "maintenance_wall_s")]
        df = pd.concat([t.assign(phase=label, v=t[col]) for label, col in parts], ignore_index=True)
        return bars_by_phase(df, "v", unit="s", name="ssb-load-seconds", phases=[p for p, _ in parts],
                             title=f"Loading SF {self.sf:g}: each engine's bulk path, the flat table built inside the "
                                   "engine, then maintenance (one load each)")

    # -- narrative --------------------------------------------------------------------------------
    def headline(self) -> str:
        lines = []
        pq = self.per_query
        if pq.empty:
            return "No query was measured."
        lines.append(self._row_store_gap())
        lines.append(self._fine_grained())
        lines.append(self._floor_sentence())
        lines.append(self._load_sentence())
        lines.append(self._compression_sentence())
        a = self.answers()
        if not a.empty:
            bad = a[a["matched"] < a["checked"]]
            lines.append(self._answers_sentence() if bad.empty else
                         "**Answers:** " + "; ".join(f"{engine_title(r.engine)}: {r.checked - r.matched} of {r.checked} "
                                                      "query runs returned a different answer" for r in bad.itertuples())
                         + ": their times are shown but do not count (ClickBench's rule).")
        return "\n\n".join(f"- {line}" for line in lines if line)

    def _answers_sentence(self) -> str:
        others = [engine_title(e) for e in self.engines if e != "duckdb"]
        order = self.per_query[self.per_query["order_matches"] < 1]
        known = self.per_query["order_matches"].notna().any()
        order_text = ("the order of the rows was not recorded" if not known else
                      "every answer's rows also came in the reference's order" if order.empty else
                      f"{len(order)} engine-query answer(s) came in another order than the reference's ("
                      + ", ".join(f"{engine_title(r.engine)} {r.query}" for r in order.itertuples())
                      + "): rows equal on the ORDER BY keys may come in any order")
        names = " and ".join([", ".join(others[:-1]), others[-1]] if len(others) > 1 else others)
        return (f"**Answers:** every query run of {names or 'no other engine'} returned the rows of "
                "the reference answer (row count and a checksum of the rows as a set), computed by an in-memory "
                "DuckDB from the staged files, so DuckDB's own runs are checked against the same engine, not "
                f"independently; {order_text}.")

    def _floor_sentence(self) -> str:
        f = analysis.floors(self.windows)
        if f.empty:
            return ""
        return ("**Fixed cost per query** (`select 1` through the same path, once per repetition): "
                + "; ".join(f"{engine_title(r.engine)} {r.floor_s * 1e3:.3g} ms" for r in f.itertuples())
                + ". It sits under every query time above: a ratio between two engines' fast queries is partly a "
                  "ratio of these floors.")

    def _row_store_gap(self) -> str:
        best = self._fastest_column_store()
        if not best or not self.row_stores:
            return "**Row store against column store:** not measured (this run lacks one side)."
        out = []
        for row in self.row_stores:
            c = analysis.contrast(self.per_query, best, row)
            if c.empty:
                continue
            resolved = c[c["beyond_noise"] == True]  # noqa: E712
            gm = results.geometric_mean(c["ratio"])
            worst = c.loc[c["ratio"].idxmax()]
            least = c.loc[c["ratio"].idxmin()]
            out.append(f"**Row store against column store:** {engine_title(row)}'s hot runs took {gm:.3g}x "
                       f"{engine_title(best)}'s (geometric mean over {len(c)} queries), from {least['ratio']:.3g}x on "
                       f"{least['query']} to {worst['ratio']:.3g}x on {worst['query']}; {len(resolved)} of {len(c)} "
                       f"ratios are beyond noise (Welch, 95%); Q1.2 is {self._ratio_text(c, 'Q1.2')}. Seed 001's "
                       f"row-store figure is AlloyDB's own row store against its own columnar engine: Q1.2 in 784,337 "
                       f"ms against 127 ms ({SEED_QUOTE_ALLOYDB}), at 2 B rows (250 GB) on 64 GB of RAM, so from "
                       f"disk. Here the hot runs read from memory ({self._flat_size_text(row)} of lineorder_flat on "
                       f"this host's {self.info['memory_bytes'] / 2**30:.0f} GiB) and compare two engines, at "
                       f"{self._scale_text()}: the two gaps are not the same measurement, and their sizes do not "
                       "compare.")
        return " ".join(out)

    def _scale_text(self) -> str:
        return (f"{self.lineorders:,} line orders, {SEED_LINEORDERS / self.lineorders:,.0f}x fewer than the seed's "
                f"{SEED_LINEORDERS:,}" if self.lineorders else "an unknown scale")

    def _flat_size_text(self, engine: str) -> str:
        row = self.sizes[(self.sizes["engine"] == engine) & (self.sizes["table"] == FLAT)]
        return _bytes(float(row["table_bytes"].iloc[0])) if not row.empty else "an unread size"

    def _ratio_text(self, c: pd.DataFrame, query: str) -> str:
        row = c[c["query"] == query]
        if row.empty:
            return "not run"
        r = row.iloc[0]
        return f"{fmt_ratio_ci(r['ratio'], r['low'], r['high'])}x ({_verdict(r['beyond_noise'])})"

    def _fine_grained(self) -> str:
        if not ("chdb" in self.engines and "duckdb" in self.engines):
            return ("**ClickHouse on fine-grained filters:** not measured (the run needs ClickHouse and DuckDB, a column "
                    "store without ClickHouse's sort key on the date).")
        c = analysis.contrast(self.per_query, "chdb", "duckdb")
        adv = analysis.fine_grained_advantage(c)
        read = analysis.share_read(self.per_query, "chdb", self.lineorders) if self.lineorders else pd.DataFrame()
        read_fine = read[read["query"].isin(FINE_GRAINED)] if not read.empty else read
        read_rest = read[~read["query"].isin(FINE_GRAINED)] if not read.empty else read
        if adv["separated"] is None:
            return "**ClickHouse on fine-grained filters:** the run has no fine-grained query or no other query to compare."
        skips = (not read_fine.empty and not read_rest.empty
                 and read_fine["share"].max() < read_rest["share"].median())
        # ClickHouse faster: DuckDB's time over ClickHouse's above 1, beyond noise.
        faster = c[(c["beyond_noise"] == True) & (c["ratio"] > 1)]["query"].tolist()  # noqa: E712
        slower = c[(c["beyond_noise"] == True) & (c["ratio"] < 1)]["query"].tolist()  # noqa: E712
        unresolved = c[c["beyond_noise"] != True]["query"].tolist()  # noqa: E712
        fine_wins = [q for q in faster if q in FINE_GRAINED]
        other_wins = [q for q in faster if q not in FINE_GRAINED]
        ran_fine = [q for q in FINE_GRAINED if q in set(c["query"])]
        pairs = analysis.matched_pairs(c)
        grows = bool(len(pairs)) and pairs["apart"].all()
        if fine_wins and skips and grows:
            verdict = "reproduces" if len(fine_wins) == len(ran_fine) else \
                f"reproduces on {len(fine_wins)} of its {len(ran_fine)} queries"
        elif skips and (fine_wins or pairs["grows"].any() if len(pairs) else fine_wins):
            verdict = "reproduces in part"
        else:
            verdict = "does not reproduce"
        pair_text = "; ".join(
            f"{p.coarse} {p.coarse_ratio:.3g}x against {p.fine} {p.fine_ratio:.3g}x"
            f" ({'larger, CIs apart' if p.apart else 'larger, CIs overlapping' if p.grows else 'not larger'})"
            for p in pairs.itertuples())
        sentence = (f"**ClickHouse on fine-grained filters** (the seed's finding {verdict} here): seed 001 wrote "
                    f"{SEED_QUOTE_FINE}, against BigQuery, a cloud service with no engine here (its table partitioned "
                    "by year; the seed suspected its fan-out over thousands of workers won the other queries). The "
                    "comparison here is with DuckDB, a column store whose lineorder_flat is in the order the join "
                    "produced it (no sort key or partition on the date). ClickHouse (chDB) was faster than DuckDB "
                    f"beyond noise on {_list(faster)} ({len(fine_wins)} of the seed's {len(ran_fine)} fine-grained "
                    f"queries{', and ' + _list(other_wins) if other_wins else ', and no other'}); DuckDB was faster "
                    f"beyond noise on {_list(slower)}{'; not resolved on ' + _list(unresolved) if unresolved else ''}. "
                    "Other differences between the two engines (string types, threads, the answer's path to Python) "
                    "weigh on every query alike, so the test is each fine-grained query against the query of the "
                    "same shape filtered by year only, DuckDB's time over ClickHouse's: "
                    f"{pair_text or 'no matched pair ran'}.")
        if not read_fine.empty and not read_rest.empty:
            sentence += (f" In its cold runs (no cache of an earlier run) ClickHouse read "
                         f"{read_fine['share'].min():.1%}-{read_fine['share'].max():.1%} of lineorder_flat's rows on the "
                         f"fine-grained queries against {read_rest['share'].median():.1%} (median) on the others: its "
                         "sort key (order date, order key) and year partitions skip the rest, the mechanism the seed "
                         f"names. The seed's ClickHouse read 5.89 M of {SEED_LINEORDERS:,} rows on Q1.3 "
                         f"({5.89e6 / SEED_LINEORDERS:.2%}); here {self._share_text(read, 'Q1.3')}: ClickHouse reads "
                         "whole granules of 8,192 rows, which weigh more in a smaller table.")
        return sentence

    @staticmethod
    def _share_text(read: pd.DataFrame, query: str) -> str:
        row = read[read["query"] == query]
        if row.empty:
            return f"{query} did not run"
        return f"{row['rows_read'].iloc[0]:,.0f} rows ({row['share'].iloc[0]:.2%})"

    def _load_sentence(self) -> str:
        lo = self.loads[self.loads["step"] == "load lineorder"]
        if lo.empty:
            return ""
        parts = [f"{engine_title(r.engine)} {r.rows_per_s:,.0f} rows/s ({r.cpu_us_per_row:.3g} µs of engine CPU per "
                 "row)" for r in lo.sort_values("rows_per_s", ascending=False).itertuples()]
        seed_rate = SEED_LINEORDERS / self._seed("ClickHouse", "lineorder_load_wall_s")
        seed_alloy = 2e9 / self._seed("AlloyDB", "lineorder_load_wall_s")
        seed_cpu = self._seed("ClickHouse", "lineorder_load_cpu_s") / SEED_LINEORDERS * 1e6
        t = self.totals.set_index("engine")
        flat = [f"{engine_title(e)} {r.flat_wall_s:.3g} s (then {r.maintenance_wall_s:.3g} s of maintenance)"
                for e, r in t.iterrows() if r.flat_wall_s == r.flat_wall_s]
        return (f"**Loading lineorder** ({self.lineorders:,} rows, one load each, so no CI): {'; '.join(parts)}. "
                f"Seed 001, raw: ClickHouse {seed_rate:,.0f} rows/s (one 8 vCPU server; {seed_cpu:.3g} µs of CPU per row "
                f"in clickhouse-client, which parsed the CSV: the server's CPU is not known) and AlloyDB "
                f"{seed_alloy:,.0f} rows/s (8 vCPU); rates per vCPU are not given, as a COPY is one backend whatever "
                f"the cores. Building lineorder_flat took {', '.join(flat)}; the seed's AlloyDB: 10.5 hours at 2 B rows.")

    def _compression_sentence(self) -> str:
        s = self.sizes[self.sizes["table"] == "lineorder"]
        if s.empty:
            return ""
        parts = [f"{engine_title(r.engine)} {r.compression:.2f}x ({r.bytes_per_row:.3g} bytes per row on disk)"
                 for r in s.itertuples() if r.compression == r.compression]
        staged = s["staged_bytes"].iloc[0] / s["rows"].iloc[0]
        csv = self._seed("ClickHouse", "lineorder_csv_bytes")
        seed_disk = self._seed("ClickHouse", "lineorder_bytes_on_disk")
        return (f"**Compression** (staged text over bytes on disk, lineorder): {'; '.join(parts)}. Seed 001: "
                f"ClickHouse {csv / seed_disk:.2f}x (239,234,458,925 bytes of CSV to 55.59 GiB: "
                f"{seed_disk / SEED_LINEORDERS:.3g} bytes per row), BigQuery "
                f"{csv / self._seed('BigQuery', 'lineorder_bytes_on_disk'):.2f}x. The ratios differ in their numerator: "
                f"the text here is {staged:.3g} bytes per row against the seed's {csv / SEED_LINEORDERS:.3g} (keys have "
                "more digits at SF 333); bytes per row on disk compare, and ClickHouse's here also follow other column "
                "types than the SSB page's (see the caveats).")

    def cold_findings(self) -> str:
        pq = self.per_query.dropna(subset=["cold_s"])
        if pq.empty:
            return "No cold run was measured."
        lines = []
        for engine in self.engines:
            e = pq[pq["engine"] == engine]
            if e.empty:
                continue
            reads = e["cold_storage_read_bytes"]
            read_any = (reads > 0).sum()
            known = reads.notna().sum()
            slower = (e["cold_s"] > e["hot_s"] + e["hot_ci95"].fillna(0)).sum()
            d = _dialect(engine)
            dropped = e["dropped"].dropna().iloc[0] if e["dropped"].notna().any() else "nothing"
            text = (f"**{engine_title(engine)}:** before each cold run: {dropped} dropped. "
                    f"{read_any} of {known} cold runs read from storage (the engine's processes' read_bytes: page-cache "
                    f"hits are not in it; {_bytes(reads.sum())} in all); {slower} of {len(e)} cold runs took longer "
                    "than the hot runs' mean and CI.")
            if read_any < len(e):
                text += (" A cold run that read nothing from storage is not cold: its data was still in the engine's "
                         "memory")
                text += f" ({d.cold_note})." if d is not None and d.cold_note else "."
            lines.append(text)
        return "\n\n".join(f"- {line}" for line in lines)

    def caveats(self, extra=()) -> str:
        pq = self.per_query
        runs = "; ".join(f"{engine_title(e)} {int(n)}" for e, n in pq.groupby("engine", sort=False)["n"].min().items())
        tests = sum(len(analysis.contrast(pq, b, o)) for b, o in self._pairs())
        notes = [f"**Scale:** SF {self.sf:g}: {self._scale_text()}. At this scale every table fits in memory and a "
                 "query's fixed costs (planning, starting threads, sending the answer) weigh more than at the seed's; "
                 "per-row figures are what travel, not seconds.",
                 "**Data:** generated by benchlib.datagen.ssb from a seed: SSB's cardinalities and distributions, not "
                 "dbgen's rows.",
                 "**Queries:** ClickHouse's flat variant of the SSB text on lineorder_flat (its SSB page, seed 001's "
                 "\"[1]\"); ClickHouse runs it with toYear/toYYYYMM/toISOWeek, the others with extract(), seed 001's "
                 "adaptation for BigQuery. Q1.3's week is the ISO week there, not SSB's d_weeknuminyear.",
                 f"**Hot and cold:** ClickBench's protocol: per query one cold run then one hot run in the first "
                 f"repetition, one more hot run in each later one (hot runs per query: {runs or 'none'}); the times "
                 "are the client's wall clock around the query and the fetch of its answer. The repetition count "
                 "targets CPU windows of 0.2 s or more; the ratios compare wall times.",
                 f"**Many tests:** the pairs table holds {tests} Welch tests at 95%: about {tests * 0.05:.1f} of them "
                 "would read \"beyond noise\" by chance alone if no engine differed."]
        settings = self.windows[self.windows["phase"] == MAINTENANCE][["engine", "settings"]].dropna()
        if not settings.empty:
            notes.append("**Settings read at each start:** " + "; ".join(
                f"{engine_title(r.engine)} {r.settings}" for r in settings.itertuples() if r.settings) + ".")
        if not self.param("drop_page_cache", True):
            notes.append("**Cold runs** did not drop the host's page cache (drop_page_cache = False): a cold run read "
                         "whatever the page cache still held.")
        for engine in self.engines:
            d = _dialect(engine)
            if d is None:
                continue
            notes.append(f"**{engine_title(engine)}** ({d.structure}): {d.layout}; load: {d.load_how}."
                         + "".join(f" {n}" for n in d.notes))
        if "chdb" in self.engines:
            notes.append("**ClickHouse here is chDB:** the ClickHouse engine as a library in the notebook's process "
                         "(no server, no network, no clickhouse-client parsing the CSV as in the seed): its CPU is "
                         "this process's, which also holds the Python driver that fetches each answer.")
        return super().caveats(extra=[*notes, *extra])


def _list(queries: list[str]) -> str:
    return ", ".join(queries) if queries else "no query"


def _bytes(value: float) -> str:
    if value != value:
        return "unknown"
    for unit, size in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if value >= size:
            return f"{value / size:.3g} {unit}"
    return f"{value:.0f} B"


def _per_row(metric: str, value: float, rows: float, unit: str) -> str:
    if unit == "bytes":
        return f"{value / rows:.3g} bytes per row"
    if metric.endswith("_wall_s") and ("load" in metric or "build" in metric):
        return f"{value / rows * 1e6:.3g} µs wall per row"
    if metric == "lineorder_load_cpu_s":
        return f"{value / rows * 1e6:.3g} µs CPU per row (client)"
    return ""
