"""The star-schema notebook's report, read back from the store by run id: the findings (each column
store against the row store: analysis.findings), the caveats they cite, the headline chart, and the
figures and tables that teach something beyond them; seed 001's figures from
data/reference/seed001_ssb.csv."""
from __future__ import annotations

import dataclasses
import json
from functools import cached_property

import pandas as pd

from ...data import findings as F
from ...data import results
from ...present.plots import bars_by_phase, ratio_chart
from ...engines import engine_order, engine_title
from ...present.report import RunReport, counted, fmt, fmt_ci
from .. import reporting
from . import analysis
from .dialects import FLAT, dialect_for
from .queries import NAMES
from .workload import ANSWER_CHECK, MAINTENANCE, WORKLOAD

SEED_LINEORDERS = 1_997_997_687
# A fixed cost per query is said where it is at least this share of the engine's median hot query.
FLOOR_SHARE = 0.1

PHRASES = F.Phrases(
    templates={
        "better": "**{subject}**, {step} ({regime}){mean_words}: {value} against {base}'s {base_value}, {ratio}, "
                  "{subject} ahead {words}{without}",
        "worse": "**{subject}**, {step} ({regime}){mean_words}: {value} against {base}'s {base_value}, {ratio}, "
                 "{base} ahead {words}{without}",
        "untested": "**{subject}**, {step} ({regime}){mean_words}: {value} against {base}'s {base_value}, {ratio} "
                    "(one each, so no test){without}",
        "not_comparable": "**{subject}**, {step} ({regime}){mean_words}: not compared, an answer differed from the "
                          "reference",
        # A CI over 10x wide says nothing by its point: no ratio printed, as in 01-04.
        F.WIDE: "**{subject}**, {step} ({regime}){mean_words}: {value} against {base}'s {base_value}{mark} ({words}, "
                "CI over 10x wide){without}",
    },
    default="**{subject}**, {step} ({regime}){mean_words}: {value} against {base}'s {base_value}, {ratio}, "
            "{words}{without}",
    seed="seed 001: {seed_ratio:.3g}x, {seed_words}", unit_scale={"bytes": (2 ** 20, "MiB")})


# The answer's rows (each column store over all queries, hot) with each side's `select 1` beside them:
# at a small scale the fixed cost of the client path, not the layout, can be most of a query.
HEADLINE_PHRASES = dataclasses.replace(
    PHRASES, templates={k: v + "; `select 1` alone: {floor} against {base_floor} {shown_unit}"
                        for k, v in PHRASES.templates.items()},
    default=PHRASES.default + "; `select 1` alone: {floor} against {base_floor} {shown_unit}", values=("floor", "base_floor"))

# One note for every engine's fixed cost per query (a `select 1` through the queries' path).
# It is the harness's whole path per query (driver, client, timing), not the engine's round trip alone.
FLOOR_NOTE = ("A `select 1` through this harness's per-query path takes {each} (share of the engine's median hot "
              "query): a fixed cost under every query at this scale.")
FLOOR_EACH = "{engine} {ms:.2g} ms ({share:.0%})"
# The answer's first line where that fixed cost is most of a query: this scale cannot answer.
SCALE_LINE = ("At SF {sf:g} a `select 1` is {share:.0%} of {engine}'s median hot query: fixed per-query cost, not "
              "the layout, sets much of each time; `--set default` (SF {default_sf:g}) answers the question.")
# A fixed cost that is at least this share of an engine's median hot query sets much of its times.
DOMINATES = 0.25

# A size within a few of the engine's allocation units: what its per-row cell says instead of a figure.
ALLOCATION = "allocation ({unit} units), not resolved at this scale"

# The rows-read table's caption: what the sort key skipped, by the table's own column.
SKIPS = ("What ClickHouse's sort key (order date, order key) skips: the filters finer than a year ({queries}) read "
         "{low:.1%}-{high:.1%} of the table, the mechanism seed 001 names for ClickHouse's wins over BigQuery.")
SKIPS_NOTHING = ("At {rows:,} line orders the filters finer than a year ({queries}) still read {span} of "
                 "the table: too few granules for the sort key to skip (seed 001's ClickHouse read {seed:.2%} on Q1.3).")


def _dialect(key: str):
    return reporting.dialect_of(key, dialect_for)


def structure(key: str) -> str:
    d = _dialect(key)
    return d.structure if d else "?"


def settings_of(reading: str) -> dict[str, str]:
    """A settings reading (`max_threads=2, use_query_condition_cache=0`) as name -> value."""
    return dict(pair.strip().partition("=")[::2] for pair in str(reading or "").split(",") if "=" in pair)


def condition_cache_off(reading: str) -> bool | None:
    """Whether ClickHouse's query condition cache was off by a start's reading; None: not read."""
    value = settings_of(reading).get("use_query_condition_cache")
    return None if value is None else value.lower() in ("0", "false")


def scale_lines(sf: float, shares: dict[str, float], default_sf: float) -> list[str]:
    """SCALE_LINE where an engine's `select 1` is at least DOMINATES of its median hot query
    (`shares`: engine -> that share), naming the engine where it is largest; else nothing."""
    measured = {e: v for e, v in shares.items() if v == v}
    engine = max(measured, key=measured.get, default=None)
    if engine is None or measured[engine] < DOMINATES:
        return []
    return [SCALE_LINE.format(sf=sf, share=measured[engine], engine=engine_title(engine), default_sf=default_sf)]


def split_per_query(found: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The findings rows over several queries (geometric means), loads and sizes; and each query's
    own rows, which repeat the per-query table (hostile read 43, 08 #2) and get a table of their own."""
    if found.empty:
        return found, found
    each = found["step"].isin(NAMES)
    return found[~each], found[each]


# Under the findings table, where each query's own comparisons are in the appendix.
EACH_QUERY = "Each query's own ratio to {base}: the appendix."


def without_unfounded_chance_note(found: pd.DataFrame) -> pd.DataFrame:
    """Many per-query tests make some flag by chance: the note says so only where one flagged."""
    if found.empty or found[found["step"].isin(NAMES)]["verdict"].map(lambda v: F.Verdict(v).decided).any():
        return found
    return found.assign(caveats=[tuple(c for c in cs if c != "many-tests") for cs in found["caveats"]])


def size_table(s: pd.DataFrame):
    """Bytes on disk per engine and table (`s`: SsbReport.sizes); a size within a few of the engine's
    allocation units (analysis.allocation_bound) is the allocation, and its per-row and compression
    cells say so (hostile read 43, 08 #3: DuckDB's 4-row supplier read 65,536 B/row, its 256 KiB block)."""
    if s.empty:
        return None
    bound = analysis.allocation_bound(s)
    unit = s.groupby("engine")["table_bytes"].min()
    coarse = [(e, t) in bound for e, t in zip(s["engine"], s["table"])]
    allocation = [ALLOCATION.format(unit=reporting.size_text(unit[e])) for e in s["engine"]]
    return pd.DataFrame({
        "engine": [engine_title(e) for e in s["engine"]], "table": s["table"], "rows": s["rows"].map(fmt),
        "on disk": [reporting.size_text(v) for v in s["table_bytes"]],
        "bytes per row": [a if c else fmt(v) for a, c, v in zip(allocation, coarse, s["bytes_per_row"])],
        "staged text / on disk": ["" if c else fmt(v) for c, v in zip(coarse, s["compression"])],
    }).style.hide(axis="index").set_caption("Bytes on disk by each engine's own size function, against the "
                                            "staged text (seed 001's ClickHouse: 239 GB of CSV in 55.59 GiB)")


def counted_findings(found: pd.DataFrame) -> pd.DataFrame:
    """The rows the answer's counts count: the findings table's (split_per_query)."""
    return counted(found, split_per_query)


class SsbReport(RunReport):
    workload = WORKLOAD
    notebook = "08-star-schema"
    phrases = PHRASES

    def __init__(self, run_id: str, store=None):
        super().__init__(run_id, store)
        self.engines = engine_order(self.engines)
        self.windows = analysis.windows(self.measurements)
        self.loads = analysis.loads(self.windows)
        self.totals = analysis.load_totals(self.loads)
        self.sizes = analysis.sizes(self.windows)
        self.per_query = analysis.queries(self.windows)
        self.floors = analysis.floors(self.windows).set_index("engine")
        self.sf = float(self.param("scale_factor", float("nan")))
        flat = self.sizes[self.sizes["table"] == FLAT]["rows"]
        self.lineorders = int(flat.max()) if not flat.empty else 0
        self.column_stores = [e for e in self.engines if structure(e) == analysis.COLUMN_STORE]
        self.row_stores = [e for e in self.engines if structure(e) == analysis.ROW_STORE]
        self.base = self.row_stores[0] if self.row_stores else None
        self.seed = results.reference("seed001_ssb")
        maintenance = self.windows[self.windows["phase"] == MAINTENANCE] if not self.windows.empty else self.windows
        self.settings = {e: s for e, s in zip(maintenance.get("engine", []), maintenance.get("settings", [])) if s}

    # -- findings ---------------------------------------------------------------------------------------
    def seed_ratios(self) -> dict[tuple[str, str, str], float]:
        """The seed's ratio where it measured a like pair: ClickHouse's lineorder load rate against
        AlloyDB's (PostgreSQL), beside the engine that stands beside ClickHouse; and the page's own
        question, a query's time in a column store against the row store (AlloyDB's Q1.2 in its
        columnar engine against its row store: `Q1.2_wall_ms_columnar_engine` over
        `Q1.2_wall_ms_row_store`), beside each column store's Q1.2 hot."""
        loads = self.seed[self.seed["metric"] == "lineorder_load_wall_s"].set_index("stands_beside")
        rate = loads["rows"] / loads["value"]
        out = {(e, analysis.LOAD_STEP, analysis.ONE_LOAD): rate[e] / rate[self.base]
               for e in self.column_stores if e in rate.index and self.base in rate.index}
        for query, ratio in analysis.seed_query_ratios(self.seed).items():
            out.update({(e, query, analysis.HOT_RUN): ratio for e in self.column_stores})
        return out

    def seed_line(self, found: pd.DataFrame) -> str:
        """The answer's seed line over the rows that ask the page's question: a query's time in a column
        store against the row store (the Q1.2 rows, in the appendix), never the load rate (hostile read
        46e, 08 #2: 'against the seed's 1 ratio' was ClickHouse's load against AlloyDB's)."""
        return F.seed_line(analysis.seed_question_rows(self.findings()), self.seed_set)

    def wrong_answers(self) -> set[tuple[str, str]]:
        m = self.measurements
        bad = m[(m["check_name"] == ANSWER_CHECK) & m["check_status"].isin(["mismatch", "error"])]
        return {(e, json.loads(lab).get("query")) for e, lab in zip(bad["engine"], bad["labels"])}

    def _hot_median_s(self, engine: str) -> float:
        pq = self.per_query
        return float(pq[(pq["engine"] == engine) & (pq["variant"] == "")]["hot_s"].median())

    def caveats_of(self, engine: str, step: str, regime: str) -> list[str]:
        """The caveat ids that bear on one findings row (their sentences: caveat_notes)."""
        query_row = regime not in (analysis.ONE_LOAD, analysis.AFTER_LOAD)
        ids = []
        if query_row:
            if "max_threads" in settings_of(self.settings.get(engine, "")):
                ids.append(f"threads:{engine}")
            if any(self._floor_share(e) >= FLOOR_SHARE for e in (engine, self.base)):
                ids.append("floor")
            if condition_cache_off(self.settings.get(engine, "")) is not None and regime.startswith(analysis.HOT_RUN):
                ids.append(f"condition-cache:{engine}")
            if step in NAMES:
                ids.append("many-tests")
        if (engine, step, regime) in self.seed_ratios():
            ids.append("seed")
        return list(dict.fromkeys(ids))

    def _floor_share(self, engine: str) -> float:
        """The engine's `select 1` as a share of its median hot query (NaN where it ran none)."""
        if engine not in self.floors.index:
            return float("nan")
        return float(self.floors.at[engine, "floor_s"] / self._hot_median_s(engine))

    @cached_property
    def _findings(self) -> pd.DataFrame:
        if self.base is None or self.per_query.empty:
            return F.table([])
        found = analysis.findings(
            self.windows, self.per_query, self.loads, self.sizes, base=self.base, subjects=self.column_stores,
            host={e: self.host_factor(e, self.base) for e in self.engines},
            seed=self.seed_ratios(), wrong=self.wrong_answers(), caveats=self.caveats_of,
            floors=self.floors["floor_s"].to_dict())
        return without_unfounded_chance_note(found)

    def findings(self) -> pd.DataFrame:
        return self._findings

    def shown_and_left_out(self, found: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The rows over several queries, loads and sizes; each query's own rows are the appendix's."""
        return split_per_query(found)

    def counted_findings(self) -> pd.DataFrame:
        return counted_findings(self.findings())

    def left_out_line(self, out: pd.DataFrame) -> str:
        return EACH_QUERY.format(base=engine_title(self.base))

    def per_query_findings_table(self):
        """Each query's own comparisons, in the findings table's form."""
        each = split_per_query(self.findings())[1]
        return self.table_of(each) if not each.empty else None

    def phrases_of(self, row) -> F.Phrases:
        return HEADLINE_PHRASES if "floor" in row and reporting.finite(row.get("floor")) else self.phrases

    def caveat_notes(self) -> list[F.Caveat]:
        notes = []
        for e in self.engines:
            t, read = engine_title(e), settings_of(self.settings.get(e, ""))
            if "max_threads" in read:
                notes.append(F.Caveat(f"threads:{e}", f"{t} ran its queries with max_threads={read['max_threads']} on "
                                                      f"this host's {self.info.get('cpu_cores')} cores; the seed's "
                                                      "ClickHouse server had 8 vCPU."))
            off = condition_cache_off(self.settings.get(e, ""))
            if off is not None:
                setting = f"use_query_condition_cache={read.get('use_query_condition_cache')}"
                notes.append(F.Caveat(f"condition-cache:{e}", (
                    f"{t}'s query condition cache was off on the querying session ({setting}, read at the start), "
                    "as in the seed's 2022 ClickHouse." if off else
                    f"{t}'s query condition cache was on ({setting}, read at the start): a hot run may skip granules "
                    "an earlier run found empty.")))
        floored = [e for e in self.engines if e in self.floors.index]
        if floored:
            notes.append(F.Caveat("floor", FLOOR_NOTE.format(each=", ".join(
                FLOOR_EACH.format(engine=engine_title(e), ms=self.floors.at[e, "floor_s"] * 1e3,
                                  share=self._floor_share(e)) for e in floored))))
        notes.append(F.Caveat("many-tests", f"{len(NAMES)} per-query tests per engine at 5%: about one may "
                                            "differ by chance alone."))
        notes.append(F.Caveat("seed", f"Seed 001: AlloyDB's Q1.2 in its columnar engine against its row store, and "
                                      f"ClickHouse's load against AlloyDB's, 2 B rows read from disk; here SF "
                                      f"{self.sf:g} ({self.lineorders:,} line orders) in memory."))
        return notes

    def answer_lines(self) -> list[str]:
        """SCALE_LINE first where a fixed cost per query dominates an engine's queries, then the rows."""
        return (self._scale_lines() + super().answer_lines())[:self.answer_limit]

    def answer_support(self) -> list[int]:
        """SCALE_LINE states no comparison: an index shows a comparison's line before it."""
        return ([0] * len(self._scale_lines()) + super().answer_support())[:self.answer_limit]

    def _scale_lines(self) -> list[str]:
        return scale_lines(self.sf, {e: self._floor_share(e) for e in self.engines},
                           self.set_values("scale_factor")["default"])

    def headline_figure(self):
        found = self.findings()
        groups = list(analysis.query_groups(self.per_query["query"])) if not self.per_query.empty else []
        # The row store against itself under a setting (jit=off) answers nothing the chart asks.
        shown = found[found["step"].isin(groups) & (found["engine"] != self.base)]
        if shown.empty:
            return None
        return ratio_chart(
            shown.assign(_o=shown["step"].map({g: i for i, g in enumerate(groups[1:] + groups[:1])})).sort_values(
                "_o", kind="stable"), y=lambda r: r["step"],
            series=lambda r: f"{engine_title(r['engine'])}, {r['regime']}", seed_label="seed 001",
            title=f"Time against {engine_title(self.base)}, geometric means (SF {self.sf:g}, {self.lineorders:,} "
                  "line orders)", name="ssb-ratio-to-row-store", axis_title="time / row store's (< 1: faster)")

    # -- figures and tables -----------------------------------------------------------------------------
    def query_figure(self):
        pq = self.per_query[self.per_query["variant"] == ""]
        if pq.empty:
            return None
        # A CI reaching below 0 (two runs' t-quantile) stops at 0: a time is never negative.
        df = pq.assign(phase=pq["query"], v=pq["hot_s"] * 1e3, e=pq["hot_ci95"] * 1e3,
                       below=(pq["hot_ci95"].clip(upper=pq["hot_s"] * 0.999)) * 1e3)
        # Dots, not bars: on a log axis a bar's height means nothing, and a wide CI hides it.
        fig = bars_by_phase(df, "v", error="e", error_minus="below", unit="ms", name="ssb-hot-query-times",
                            phases=list(NAMES), log_y=True, markers=True,
                            title=f"Each query hot (mean, whiskers: 95% CI), SF {self.sf:g}")
        return fig.update_xaxes(title_text="query")

    def load_figure(self):
        t = self.totals
        if t.empty:
            return None
        parts = [("five tables", "load_wall_s"), ("lineorder_flat", "flat_wall_s"),
                 ("maintenance and background work", "maintenance_wall_s")]
        df = pd.concat([t.assign(phase=label, v=t[col]) for label, col in parts], ignore_index=True)
        return bars_by_phase(df, "v", unit="s", name="ssb-load-seconds", phases=[p for p, _ in parts],
                             title=f"Loading SF {self.sf:g}: the bulk path, the flat table built inside the engine, "
                                   "maintenance (one load each)")

    def query_table(self):
        """Per query and engine: the cold run, what it read from storage, the hot runs' mean ± 95%
        CI, the engine's CPU per hot run and the rows it read where it reports them."""
        pq = self.per_query
        if pq.empty:
            return None
        on_disk = self.sizes.groupby("engine")["table_bytes"].sum().to_dict() if not self.sizes.empty else {}
        pq = pq.assign(_q=pq["query"].map({q: i for i, q in enumerate(NAMES)}),
                       _e=pq["engine"].map({e: i for i, e in enumerate(self.engines)})).sort_values(["_q", "_e", "variant"])
        return pd.DataFrame({
            "query": pq["query"], "engine": [engine_title(e) + (f" ({v})" if v else "")
                                             for e, v in zip(pq["engine"], pq["variant"])],
            "first run ms": [fmt(v * 1e3) for v in pq["cold_s"]],
            # More than the engine's data on disk is its library's pages, not the table's: left blank.
            "first run storage reads": [reporting.size_text(v) if not v > on_disk.get(e, float("inf")) else ""
                                        for e, v in zip(pq["engine"], pq["cold_storage_read_bytes"])],
            "hot ms": [fmt_ci(v * 1e3, h * 1e3) for v, h in zip(pq["hot_s"], pq["hot_ci95"])], "hot runs": pq["n"],
            "engine CPU ms (hot)": [fmt(v * 1e3) for v in pq["hot_cpu_s"]],
            "rows read (first run)": [fmt(v) if v == v else "" for v in pq["cold_rows_read"]],
        }).style.hide(axis="index").set_caption("Each query: its first run (one), the hot runs' mean ± 95% CI; reads "
                                                "blank: more than the engine's data on disk (library pages)")

    def size_table(self):
        return size_table(self.sizes)

    def rows_read_table(self):
        """ClickHouse's rows read per cold run as a share of lineorder_flat: what its sort key skips."""
        engines = [e for e in self.engines if _dialect(e) is not None and _dialect(e).rows_read]
        frames = [analysis.share_read(self.per_query, e, self.lineorders).assign(engine=engine_title(e))
                  for e in engines if self.lineorders]
        frames = [f for f in frames if not f.empty]
        if not frames:
            return None
        d = pd.concat(frames, ignore_index=True)
        if d["share"].round(3).nunique() == 1:  # every query read the same share: a sentence, not a table
            from IPython.display import Markdown

            return Markdown(self.rows_read_caption(d))
        return pd.DataFrame({"engine": d["engine"], "query": d["query"], "rows read (first run)": d["rows_read"].map(fmt),
                             "share of lineorder_flat": d["share"].map(lambda v: f"{v:.1%}")}
                            ).style.hide(axis="index").set_caption(self.rows_read_caption(d))

    def rows_read_caption(self, shares: pd.DataFrame) -> str:
        """What the sort key skipped, as the table's own share column says (SKIPS or SKIPS_NOTHING)."""
        skips = analysis.sort_key_skips(shares)
        finer = shares[shares["query"].isin(analysis.FINER_THAN_A_YEAR)]["share"]
        if skips is None:
            return f"Rows read per first run (seed 001's ClickHouse on Q1.3: {5.89e6 / SEED_LINEORDERS:.2%})"
        return (SKIPS if skips else SKIPS_NOTHING).format(
            queries=", ".join(analysis.FINER_THAN_A_YEAR), low=finer.min(), high=finer.max(), rows=self.lineorders,
            seed=5.89e6 / SEED_LINEORDERS,
            span=" to ".join(dict.fromkeys(f"{v:.0%}" for v in (finer.min(), finer.max()))))

    def seed_table(self):
        """Seed 001's published figures, raw, with their hardware."""
        s = self.seed
        return pd.DataFrame({
            "system": s["system"], "figure": s["metric"], "as written": s["as_written"],
            # The figure as stored, in its unit: ClickHouse's Q1.3 "0.108ms" is read as 0.108 s (the note says why).
            "read as": [f"{fmt(v, digits=6)} {u}" for v, u in zip(s["value"], s["unit"])], "rows": s["rows"].map(
                lambda r: f"{r:,.0f}"), "hardware": [f"{v:.0f} vCPU, {m:.0f} GB" if v == v else "cloud service"
                                                     for v, m in zip(s["vcpus"], s["memory_gib"])],
        }).style.hide(axis="index").set_caption("Seed 001's figures (data/reference/seed001_ssb.csv)")

    # -- the appendix -----------------------------------------------------------------------------------
    def load_table(self):
        d = self.loads
        if d.empty:
            return pd.DataFrame({"": ["no load was measured"]})
        out = pd.DataFrame({"engine": [engine_title(e) for e in d["engine"]], "step": d["step"], "rows": d["rows"],
                            "seconds": d["wall_s"], "rows/s": d["rows_per_s"], "engine CPU s (with settle)": d["cpu_s"],
                            "engine CPU µs/row": d["cpu_us_per_row"]})
        return out.style.format(fmt, subset=list(out.columns[2:])).hide(axis="index")

    def setup_table(self):
        """Each engine's storage, bulk path and the settings read at its start."""
        return pd.DataFrame([{"engine": engine_title(e), "storage": d.layout, "load": d.load_how,
                              "settings read at the start": self.settings.get(e, ""),
                              "fixed cost (select 1) ms": fmt(self.floors.at[e, "floor_s"] * 1e3)
                              if e in self.floors.index else "", "notes": " ".join(d.notes)}
                             for e in self.engines if (d := _dialect(e)) is not None]).style.hide(axis="index")

    def appendix_parts(self):
        each = self.per_query_findings_table()
        return [*super().appendix_parts(), *([(f"Each query against {engine_title(self.base)}", each.data)]
                                             if each is not None else []),
                ("Seed 001's figures, raw", self.seed_table()),
                ("Engines as set up", self.setup_table()),
                ("Every load, flat build and maintenance (one each)", self.load_table())]

