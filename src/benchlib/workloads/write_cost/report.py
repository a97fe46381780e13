"""The write-cost notebook's report: findings first (per engine, whether the sweep separates the
parts of a one-row insert; the server engines against PostgreSQL in seed 000's corner; with
clusters, what replication adds to the same writes), then the figures, and the facts every cell
shares in the appendix. Costs are in the run's cost metric (`results.cost_metric`); only their
unit, and so how they are shown, changes with it."""
from __future__ import annotations

import dataclasses

import pandas as pd

from ...data import findings as F
from ...data import results
from ...engines import get_engine, is_cluster, is_server
from ...core.errors import UnknownEngineError
from ...run.measure import cluster_instance_of
from ...present.plots import bars_by_phase, heatmaps, stacked_bars
from ...engines import engine_color, engine_order, engine_title
from ...present.report import RunReport, fmt, fmt_ci
from . import analysis
from ..dml.dialects import key_note
from .. import reporting
from ..reporting import settings
from .analysis import BINARY_LOG, COUNTS_NO_WAITS, DECOMPOSITION, EMBEDDED_DRIVER, PARTS, SEED_CORNER, SEED_METRIC, SHARED_CORES
from .dialects import ARCHITECTURES, DIALECTS, NOT_REPORTED, ROW_BYTES, WITHOUT_DIALECT, dialect_for
from .workload import CLIENT_VALUES, SERVER_GENERATOR, WORKLOAD

SEED_KEYS = "uuid"  # seed 000's primary keys: gen_random_uuid(), UUID_TO_BIN(UUID())
SEED_ROWS = 2_000_000  # seed 000 inserted 2M rows in two transactions of 1M, each one insert ... select
SERVER_LABEL = "server-generated"  # heatmap column of the one-statement-per-transaction cells
# The heatmaps' x axis holds what a statement is, not a count: a client statement by its rows, or the
# server generating them (hostile read 43, 05 #4: "rows per statement" held "server-generated").
STATEMENT_AXIS = "statement"


def _statement(rows_per_stmt: int) -> str:
    return f"{int(rows_per_stmt):,}-row VALUES"

# The parts' caveat: CPU work (a commit's flush wait is not in it), or where the cost is counted in
# instructions (valgrind), user space only, so a commit's kernel CPU (write, fdatasync) is not in it and
# the parts' order can differ from the CPU set's; said once, under the findings table, and pointing to
# the set that counts that CPU with how its sweep differs (hostile read 46c, 05 instructions #1, #4).
CPU_NOTE = "The parts are CPU work only: a commit's wait for its log flush (fsync) costs wall time, not CPU."
COUNTED_NOTE = ("The parts are user-space instructions: a commit's kernel CPU (write, fdatasync) is not in them; "
                "the CPU-seconds set counts it{differs}.")
CPU_SET = "default"  # the parameter set that measures this sweep in CPU seconds (papermill_params/05-write-cost/)
# How a parameter of the CPU set and this run reads where they differ, in a few words.
DIFFERS = {"pk_kind": "{} keys", "rows": "{:,} rows"}
# Seed 000 ran mysql:latest with its defaults (`select version()`: the reference's version); MySQL 8.4's
# defaults write and sync a binary log (log_bin=ON, sync_binlog=1), as this run's MySQL does.
SEED_MYSQL = "mysql"
SINGLE_NODE_QUESTION = "Where does an insert's cost go: to the commit, the statement or the row?"
CLUSTER_QUESTION = "What does replication add to a row write?"

# A part whose CI reaches 0 or below: a difference of two cells (or a cost net of an idle rate) not told
# from nothing, which is not "no cost" (hostile read 44, 05 #1).
NOT_RESOLVED = "not resolved"

# A side's work after the commit not above its idle rate: as the table's empty cell and the settle chart say
# (hostile read 47, 05: "111 vs not resolved" beside the table's n/a).
NONE_ABOVE_IDLE = "none above idle"

# Engines against a base (bulk, replication): one sentence per row.
# A row measured once says nothing of its own certainty: the answer's count line says it once for all.
EACH = "{subject} vs {base}, {step}: {value} vs {base_value} per row, {ratio}"
COMPARISON = F.Phrases(default=EACH + " ({words})", templates={F.Verdict.UNTESTED.value: EACH},
                       seed="seed 000: {seed_ratio:.2f}x, {seed_words}", unit_scale=analysis.UNIT_SCALE)
# A cluster's line: its cost, and the wall time per row beside it (what a synchronous replica adds).
WALL = "; wall {wall_us} vs {base_wall_us} µs per row"
REPLICATION_PHRASES = dataclasses.replace(COMPARISON, default=EACH + " ({words})" + WALL,
                                          templates={F.Verdict.UNTESTED.value: EACH + WALL})
# A pair whose hosts ran apart (findings.host_named): which way that moves its ratio (hostile read 46d, 05 clusters #1).
HOST_BIAS = "; {host_bias}"
REPLICATION_HOST_PHRASES = dataclasses.replace(
    COMPARISON, default=EACH + " ({words})" + WALL + HOST_BIAS, templates={F.Verdict.UNTESTED.value: EACH + WALL + HOST_BIAS})
# The bulk row: the cell's engine cost against the base's, as its table shows it, and the part of
# each that came after the commit (settle) where resolved above the idle rate's noise.
AFTER = "; of which after the commit: {after} vs {base_after}"
BULK_PHRASES = dataclasses.replace(
    COMPARISON, default=EACH + " ({words})" + AFTER, templates={F.Verdict.UNTESTED.value: EACH + AFTER},
    values=("after", "base_after"),
    missing=NONE_ABOVE_IDLE)  # not above zero, or within the idle rate's noise (analysis.bulk_findings)


# One line per engine: its one-row insert's parts in one order, then the pair its findings lead with
# (analysis.decomposition_findings): two parts of one cost are told apart or not, never better or
# worse. A pair against the row says how far the row is below the other part (the larger over the
# smaller: never below 1); the largest against the next says which is largest. `{unit_mark}`: the
# row's caveat marks, beside its unit (a count's scope is said once, in its caveat).
def _parts_phrases(subject: str, pair: str = analysis.LARGEST) -> F.Phrases:
    each = (subject + ", one-row insert, {shown_unit} per row{unit_mark}: commit {commit}, statement {statement}, "
            "row {row}")
    apart = ("; {base_part} {ratio} below the {part} ({words})" if pair == analysis.VS_ROW
             else "; {part} largest, separable ({words})")
    return F.Phrases(templates={
        F.Verdict.WORSE.value: each + apart,
        F.Verdict.BETTER.value: each + apart,
        F.Verdict.SAME.value: each + "; {part} and {base_part} about equal ({words})",
        F.Verdict.NOISE.value: each + "; {part} and {base_part} not separable ({words})",
        F.Verdict.NA.value: each,
        F.Verdict.UNTESTED.value: each,  # measured once: said once, by the answer's count line
    }, default=each + " ({words})", unit_scale=analysis.UNIT_SCALE, values=PARTS,
        missing=NOT_RESOLVED, directed=False)


PARTS_PHRASES = _parts_phrases("{subject}")
# An embedded engine's count holds its Python driver (it runs in the notebook's process): said in its line.
EMBEDDED_PARTS_PHRASES = _parts_phrases("{subject} (with its Python driver)")
ROW_PARTS_PHRASES = _parts_phrases("{subject}", analysis.VS_ROW)
EMBEDDED_ROW_PARTS_PHRASES = _parts_phrases("{subject} (with its Python driver)", analysis.VS_ROW)
WITH_DRIVER = "{engine} + driver"  # its legend entry where a chart sets it beside servers without theirs
# The question's second half, where no cluster ran: said in the method, not above the answer.
NO_CLUSTER = "**Replication:** not measured here (no cluster ran); `--set clusters` measures it."


class Note(str):
    """What a figure method returns when there is nothing to draw: the reason, shown in its place."""

    def show(self) -> None:
        from IPython.display import Markdown, display

        display(Markdown(self._repr_markdown_()))

    def _repr_markdown_(self) -> str:
        return f"*{self}*"


def _binlog_settings(reading: str) -> str:
    """`log_bin=1, sync_binlog=1`: the binary log's settings of a durability reading."""
    return ", ".join(f"{k}={v}" for k, v in settings(reading).items() if "bin" in k)


def _dialect(key: str):
    return reporting.dialect_of(key, dialect_for)


def _architecture(key: str):
    dialect = _dialect(key)
    if dialect is not None:
        return ARCHITECTURES[dialect.architecture]
    try:
        name = get_engine(key).lookup(WITHOUT_DIALECT)
    except UnknownEngineError:
        name = WITHOUT_DIALECT.get(key.partition("@")[0])
    return ARCHITECTURES.get(name) if name else None


class WriteCostReport(RunReport):
    workload = WORKLOAD
    notebook = "05-write-cost"
    phrases = COMPARISON
    # One line per engine (six with a dialect) and the bulk line beside the seed; with clusters,
    # REPLICATION_LINES.
    answer_limit = 8

    def __init__(self, run_id: str, store=None):
        super().__init__(run_id, store)
        self.row_bytes = ROW_BYTES[self.param("pk_kind", "uuid")]
        self.scale, self.shown_unit = analysis.UNIT_SCALE.get(self.metric_unit, (1.0, self.metric_unit))
        self.cells = analysis.cells(self.measurements, self.row_bytes, self.metric)
        self.summary = analysis.summarize(self.cells)
        self.summary["statement"] = [SERVER_LABEL if f == SERVER_GENERATOR else _statement(s) for f, s in
                                     zip(self.summary["rows_from"], self.summary["rows_per_stmt"])]
        self.engines = engine_order(self.engines)
        single = self.cells[[not is_cluster(e) for e in self.cells["engine"]]] if not self.cells.empty else self.cells
        self.parts = self._in_order(analysis.decompose(single) if not single.empty else pd.DataFrame())
        servers = single[single["client_per_row"].notna()] if not single.empty else single
        self.driver_parts = analysis.decompose(servers, value="client_per_row") if not servers.empty else pd.DataFrame()
        # Clusters beside their single node: what replication adds, and where it lands.
        self.replication = analysis.replication(self.cells)
        self.node_rows = analysis.node_cells(self.measurements, self.instances, self.metric)
        self.nodes = analysis.node_summary(self.node_rows)
        self._findings = analysis.findings(
            self.cells, self.summary, self.replication, self.host_factor, metric=self.metric, unit=self.metric_unit,
            seed=analysis.seed_ratios(results.reference("seed000_dml_instructions")),
            answer_limit=self.answer_limit, readings=self.durability(),
            # Under valgrind wall time is valgrind's: no wall-time verdict (hostile read 44, 05i #3).
            timed=not results.counted_by_valgrind(self.measurements, self.metric))

    def _in_order(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Rows of a per-engine frame in the catalog's engine order."""
        if frame.empty:
            return frame
        rank = {e: i for i, e in enumerate(self.engines)}
        return frame.sort_values("engine", key=lambda e: e.map(lambda k: rank.get(k, len(rank))), kind="stable")

    # -- findings ------------------------------------------------------------------------------------
    def findings(self) -> pd.DataFrame:
        return self._findings

    @property
    def clusters(self) -> list[str]:
        """The clusters this run measured beside their single node."""
        return list(dict.fromkeys(self.replication["cluster"])) if not self.replication.empty else []

    @property
    def asks_replication(self) -> bool:
        return bool(self.param("clusters")) or bool(self.clusters)

    @property
    def question(self) -> str:
        """What this run answers: a run with clusters asks what replication adds."""
        return CLUSTER_QUESTION if self.asks_replication else SINGLE_NODE_QUESTION

    def ask(self) -> None:
        """A run with clusters says it asks the replication question (the title asks both); one
        without says nothing here: its method notes say replication was not measured."""
        from IPython.display import Markdown, display

        if self.asked():
            display(Markdown(self.asked()))

    def asked(self) -> str:
        return f"**This run asks:** {self.question}" if self.asks_replication else ""

    def phrases_of(self, row) -> F.Phrases:
        if row["kind"] == analysis.BULK and row["metric"] == self.metric:
            # Neither side's after-commit work resolved: no clause (hostile read 44, 05 #3).
            after = [row.get(k) for k in ("after", "base_after")]
            return BULK_PHRASES if any(v == v and v is not None for v in after) else self.phrases
        if row["kind"] == analysis.REPLICATION:
            return REPLICATION_HOST_PHRASES if F.host_named(row.get("host_factor")) else REPLICATION_PHRASES
        if row["kind"] != DECOMPOSITION:
            return self.phrases
        if row.get("pair") == analysis.VS_ROW:
            return EMBEDDED_ROW_PARTS_PHRASES if row.get("embedded") else ROW_PARTS_PHRASES
        return EMBEDDED_PARTS_PHRASES if row.get("embedded") else PARTS_PHRASES

    def render(self, row, marks: dict[str, int] | None = None) -> str:
        """One findings row in words, with the phrase table of its kind; `marks`: its ratio (a part
        line: its unit) carries the findings table's footnote marks (a binary log beside the bulk ratio)."""
        mark = self.footnote(row, marks or {})
        if row["kind"] == DECOMPOSITION:  # a part line's marks sit beside its unit, not its ratio
            return F.render(row | {"unit_mark": mark}, self.phrases_of(row), with_seed=True)
        return F.render(row, self.phrases_of(row), with_seed=True, mark=mark)

    def answer_lines(self) -> list[str]:
        """The headline rows, each rendered with the phrase table of its kind, the bulk row's ratio and
        the part lines' unit with their footnote marks (a caveat said once, under the table)."""
        marks = self.answer_marks()
        return [self.render(row, marks if row["kind"] in (analysis.BULK, DECOMPOSITION) else None)
                for row in F.headline(self.findings(), self.answer_limit).to_dict("records")]

    def caveat_notes(self) -> list[F.Caveat]:
        corner = analysis.seed_cell(self.summary)
        where = analysis.cell_label(corner.iloc[0]) if not corner.empty else "not run"
        return [
            F.Caveat(EMBEDDED_DRIVER, "An embedded engine runs in the notebook's process: its cost includes the "
                                      "Python driver's."),
            F.Caveat(COUNTS_NO_WAITS, COUNTED_NOTE.format(differs=self._cpu_set_differs())
                     if self.metric_unit in F.COUNTED_UNITS else CPU_NOTE),
            F.Caveat(SEED_CORNER, f"Seed 000 wrote {SEED_ROWS:,} rows in two 1,000,000-row `insert ... select`; this "
                                  f"run's nearest cell is {where}."),
            F.Caveat(SEED_METRIC, "Seed 000 counted the server's user-space instructions; this run's cost metric is "
                                  f"{F.METRIC_WORDS.get(self.metric, self.metric)}."),
            *self._binary_log_notes(),
            F.Caveat(SHARED_CORES, f"A cluster's nodes and the client share this host's {self.info['cpu_cores']} cores "
                                   "and a local bridge network: what a cluster adds includes contention for them."),
        ]

    def _cpu_set_differs(self) -> str:
        """` (uuid keys, 3,000 rows; here sequential keys, 300 rows)`: where the CPU-seconds set's
        sweep differs from this run's, from both sets' parameters; "" where it does not."""
        there, here = [], []
        for key, words in DIFFERS.items():
            other = self.set_values(key).get(CPU_SET)
            if other is not None and other != self.param(key):
                there.append(words.format(other))
                here.append(words.format(self.param(key)))
        return f" ({', '.join(there)}; here {', '.join(here)})" if there else ""

    def _binary_log_notes(self) -> list[F.Caveat]:
        """Which engines wrote a binary log beside their redo log, with their settings, where a row cites it."""
        readings = self.durability()
        logging = [e for e, reading in readings.items() if analysis.writes_binary_log(reading)]
        if not logging:
            return []
        named = "; ".join(f"{engine_title(e)}: {_binlog_settings(readings[e])}" for e in logging)
        ref = results.reference("seed000_dml_instructions").drop_duplicates("engine").set_index("engine")["version"]
        seed = f"seed 000's MySQL {ref[SEED_MYSQL]} ran its defaults, binary log on" if SEED_MYSQL in ref else \
            "seed 000's MySQL settings are not given"
        return [F.Caveat(BINARY_LOG, f"A commit here also writes and syncs a binary log ({named}); PostgreSQL has "
                                     f"none; {seed}.")]

    def headline_figure(self):
        return self.replication_ratio_figure() if self.asks_replication else self.parts_figure()

    # -- figures ------------------------------------------------------------------------------------
    def parts_figure(self):
        """Each engine's one-row insert by part (commit, statement, row), engine cost per row with
        its 95% CI: where the cost goes."""
        p = self.parts
        if p.empty:
            return Note("No one-row and many-row cells of client statements in this run: no part to draw.")
        p = analysis.positive_parts(p)
        long = pd.DataFrame([{"engine": r["engine"], "phase": part, "value": r[part] / self.scale,
                              "ci": r[f"{part}_ci95"] / self.scale} for r in p.to_dict("records") for part in PARTS])
        fig = bars_by_phase(long, "value", error="ci", phases=list(PARTS), name="write-cost-parts",
                            unit=f"{self.shown_unit} per row", markers=True,
                            title=f"Where a one-row insert's engine cost goes ({self.shown_unit} per row)<br><sup>"
                                  f"{self.spread_words()}; a part not resolved above 0 is not drawn</sup>")
        # An embedded engine's bars hold its Python driver; a server's driver is not in them.
        embedded = {engine_title(e) for e in p["engine"] if not is_server(e)}
        fig.for_each_trace(lambda t: t.update(name=WITH_DRIVER.format(engine=t.name)) if t.name in embedded else None)
        return fig.update_xaxes(title_text="part of a one-row insert")

    def spread_words(self) -> str:
        """What the bars and ± around a mean are: a 95% CI, or nothing with one repetition."""
        return "95% CI" if int(self.cells["repetition"].nunique() if "repetition" in self.cells else 1) > 1 \
            else "one repetition, no CI"

    def replication_ratio_figure(self):
        """Each cluster's engine cost per row over its single node's, per cell, with the 95% CI."""
        r = self.replication
        if r.empty:
            return Note("No cluster ran beside its single node in this run: nothing to compare.")
        df = r.assign(engine=r["cluster"], phase=[analysis.cell_label(row) for row in r.to_dict("records")],
                      above=r["ratio_high"] - r["ratio"], below=r["ratio"] - r["ratio_low"])
        fig = bars_by_phase(df, "ratio", error="above", error_minus="below", unit="× single node",
                            name="write-cost-replication-ratio",
                            title="What replication adds: each cluster's engine cost per row over its single node's "
                                  "(95% CI; > 1: costlier)")
        fig.add_hline(y=1.0, line_dash="dot", line_color="#555")
        return fig.update_xaxes(title_text="cell (rows per transaction · per statement)")

    def _heatmap(self, frame: pd.DataFrame, value: str, *, title: str, unit: str, name: str, log_color: bool = False,
                 fmt_=fmt, why_empty: str, grid: str | None = None, ratio: bool = False):
        """`grid`: a column whose values decide which cells make the grid (those of `value` by default),
        so that a cell without a value is drawn empty rather than left out."""
        s = frame.dropna(subset=[grid or value])
        if s[value].isna().all():
            return Note(why_empty)
        order = [_statement(v) for v in sorted(set(s[s["rows_from"] == CLIENT_VALUES]["rows_per_stmt"]))]
        order += [SERVER_LABEL] if (s["rows_from"] == SERVER_GENERATOR).any() else []
        return heatmaps(s, x="statement", y="rows_per_txn", value=value, facet="engine", title=title, name=name,
                        unit=unit, x_title=STATEMENT_AXIS, y_title="rows per transaction",
                        log_color=log_color, text_format=fmt_, x_order=order, ratio=ratio)

    def cost_figure(self):
        return self._heatmap(self.summary.assign(shown=self.summary["engine_per_row"] / self.scale), "shown",
                             unit=f"{self.shown_unit}/row", name="write-cost-cpu", log_color=True,
                             title=f"Engine cost per row ({self.shown_unit}; idle subtracted, after-commit work "
                                   "included where resolved)", why_empty="No cell measured.")

    def ratio_figure(self):
        base = analysis.base_of(self.summary["engine"])
        s = self.summary[self.summary["engine"] != base]
        return self._heatmap(s, "ratio_to_postgres", unit="× PostgreSQL", name="write-cost-ratio", ratio=True,
                             title="Engine + driver cost per row over PostgreSQL's in the same cell (> 1: costlier)",
                             fmt_=lambda v: fmt(v, digits=2), why_empty=self._no_ratio_reason(base, s))

    def _no_ratio_reason(self, base: str | None, others: pd.DataFrame) -> str:
        """Why no engine + driver ratio is drawn: only the reason that applies (hostile read 46c, 05
        instructions #5: three were printed where one did)."""
        if base is None:
            return "No ratio to draw: PostgreSQL, the base, did not run."
        if others.empty:
            return "No ratio to draw: no engine beside PostgreSQL ran."
        return (f"No engine + driver ratio to draw: a server's Python driver is not counted in "
                f"{F.METRIC_WORDS.get(self.metric, self.metric)}.")

    def after_shares(self) -> pd.DataFrame:
        """The after-commit share per engine and cell where the work after the commit is resolved
        above the idle rate (its 95% CI above zero; with one repetition, above zero), else NaN:
        a cost net of an idle rate can come out below zero, and is then no share of anything."""
        s = self.summary
        shown = s["after_share"].where(s["after_resolved"]) if "after_resolved" in s else s["after_share"] * float("nan")
        return s.assign(after_shown=shown)

    def after_figure(self):
        s = self.after_shares()
        # An engine with no cell above the idle rate would be a blank panel: it is named in the one
        # sentence under the chart instead (hostile read 46c, 05 #6: "21 empty cells", three blank panels).
        blank = [e for e, g in s.groupby("engine", sort=False)
                 if g["after_share"].notna().any() and g["after_shown"].isna().all()] \
            if s["after_shown"].notna().any() else []
        drawn = s[~s["engine"].isin(blank)]
        hidden = int((drawn["after_share"].notna() & drawn["after_shown"].isna()).sum())
        fig = self._heatmap(drawn, "after_shown", unit="share", name="write-cost-after-commit", fmt_=".0%",
                            grid="after_share",
                            title="Share of the engine's cost after the statements returned (settle window)",
                            why_empty="No work after the commit above the idle rate in any cell"
                                      + (f" ({hidden} cells measured it within the idle rate's noise)" if hidden else
                                         ": no engine here works after a call returns") + ".")
        if isinstance(fig, Note):
            return fig
        fig.update_layout(coloraxis=dict(cmin=0.0, cmax=max(float(s["after_shown"].max()), 0.05)))
        said = ([f"{', '.join(engine_title(e) for e in blank)} in no cell (not drawn)"] if blank else []) + (
            [f"{hidden} empty cells"] if hidden else [])
        if said:
            fig.add_annotation(text=f"Work after the commit not above the idle rate: {'; '.join(said)}.",
                               showarrow=False, xref="paper", yref="paper", x=0, y=-0.12, xanchor="left")
        return fig

    def amplification_figure(self):
        return self._heatmap(self.summary, "log_amplification", unit="log B / row B", name="write-cost-amplification",
                             log_color=True, title=f"Engine log bytes per byte of row ({self.row_bytes}-byte rows)",
                             why_empty="No engine in this run reports the bytes of its log (the appendix has the I/O "
                                       "bytes of each scope).")

    def replication_figure(self):
        """Per cluster and cell: the cluster's engine cost per row stacked by node (the entry node,
        where the client writes, and the other nodes), the single node's as a marker."""
        split = self._node_split()
        if split.empty:
            return None if not self.asks_replication else Note(
                "No cluster ran beside its single node in this run: no node to draw.")
        split = split.assign(cluster_title=[engine_title(c) for c in split["cluster"]],
                             cell=[analysis.cell_label(r) for r in split.to_dict("records")])
        return stacked_bars(split, x=["cluster_title", "cell"], name="write-cost-replication",
                            segments={"entry": ("entry node (the client writes here)", engine_color(self.clusters[0])),
                                      "others": ("the other nodes", "#BBBBBB")},
                            marker=("single", "single node"), unit=f"engine {self.shown_unit}/row",
                            title="Where a cluster's cost lands: the entry node (the client writes there) and the others, against its "
                  "single node")

    def _node_split(self) -> pd.DataFrame:
        """Per cluster and cell: the entry node's and the other nodes' cost per row (display unit),
        beside the single node's."""
        if self.nodes.empty or self.replication.empty:
            return pd.DataFrame()
        entry_roles = {c: get_engine(c).cluster.entry_role for c in self.clusters}
        rows = []
        for (engine, *cell), df in self.nodes.groupby(["engine", *analysis.CELL], sort=False):
            match = self.replication[(self.replication["cluster"] == engine)
                                     & (self.replication[analysis.CELL] == pd.Series(cell, index=analysis.CELL)).all(1)]
            if match.empty:
                continue
            first = df[df["role"] == entry_roles.get(engine)].head(1)
            rows.append({"cluster": engine, **dict(zip(analysis.CELL, cell)),
                         "entry": first["engine_per_row"].sum() / self.scale,
                         "others": df.drop(first.index)["engine_per_row"].sum() / self.scale,
                         "single": match["base_mean"].iloc[0] / self.scale})
        return pd.DataFrame(rows)

    # -- tables ------------------------------------------------------------------------------------
    def _ci(self, value: float, half: float) -> str:
        return fmt_ci(value / self.scale, half / self.scale)

    def decomposition_table(self) -> pd.DataFrame:
        """Each part of a one-row insert with its 95% CI: the engine's own cost (an embedded
        engine's holds its driver), and for a server its driver's beside it."""
        rows = []
        driver = (analysis.positive_parts(self.driver_parts, raw=True).set_index("engine") if not self.driver_parts.empty
                  else pd.DataFrame())
        # The engine's parts read the findings' rows: which part is resolved, and whether the largest
        # is told from the next (hostile read 46d, 05 clusters #4: the two tables disagreed).
        found = self.findings()
        # An engine's pairs are several rows: the table names the one its answer line states (`lead`).
        tested = (found[(found["kind"] == DECOMPOSITION) & (found["lead"] == True)].set_index("engine")  # noqa: E712
                  if not found.empty and "lead" in found else pd.DataFrame())
        for p in analysis.positive_parts(self.parts).to_dict("records") if not self.parts.empty else []:
            arch = _architecture(p["engine"])
            row = tested.loc[p["engine"]].to_dict() if p["engine"] in tested.index else {}
            p = {**p, **{part: float("nan") for part in PARTS if part in row and row[part] != row[part]}}
            sides = [("engine", p)] + ([("driver", driver.loc[p["engine"]].to_dict())]
                                       if p["engine"] in driver.index else [])
            for side, values in sides:
                rows.append({"engine": engine_title(p["engine"]), "side": side,
                             "architecture": arch.name if arch and side == "engine" else "",
                             **{f"{title} ({self.shown_unit}/row)": self._ci(values[name], values[f"{name}_ci95"])
                                if values[name] == values[name] else NOT_RESOLVED
                                for name, title in (("one_row_txn", "one-row txn"), *((part, part) for part in PARTS))},
                             "pair tested": f"{row['step']}: {F.verdict_words(row)}" if row and row.get("pair") and side == "engine"
                             else "",
                             "n": int(values["n"])})
        return pd.DataFrame(rows).style.hide(axis="index").set_caption(
            f"The parts of a one-row insert ({self.spread_words()}); a server's driver beside its engine.")

    def cell_table(self):
        """Every cell: engine cost (statements; after the commit where resolved), client cost, wall, bytes."""
        s = self.after_shares()
        u = self.shown_unit
        out = pd.DataFrame({
            "engine": [engine_title(e) for e in s["engine"]], "rows/txn": s["rows_per_txn"],
            STATEMENT_AXIS: s["statement"], f"engine {u}/row": s["engine_per_row"] / self.scale,
            "of which after commit": s["after_shown"], f"client {u}/row": s["client_per_row"] / self.scale,
            f"engine + driver {u}/row": s["total_per_row"] / self.scale,
            "engine + driver × PostgreSQL": s["ratio_to_postgres"], "wall µs/row": s["wall_per_row"] * 1e6,
            "log B/row": s["log_bytes_per_row"], "log": s["log_status"], "io write B/row": s["io_bytes_per_row"],
            "n": s["n"],
        })
        numeric = [f"engine {u}/row", f"client {u}/row", f"engine + driver {u}/row", "wall µs/row",
                   "engine + driver × PostgreSQL", "log B/row", "io write B/row"]
        return (out.style.format(lambda v: fmt(v, digits=4), subset=numeric)  # 32,810, never 3.281e+04
                .format("{:.0%}", na_rep="n/a", subset=["of which after commit"]).hide(axis="index"))

    def amplification_table(self) -> pd.DataFrame:
        """Bytes written per byte of row, per engine and cell: the engine's log, and all I/O of
        its scope."""
        s = self.summary[self.summary["rows_from"] == CLIENT_VALUES]
        rows = []
        for engine in self.engines:
            df = s[s["engine"] == engine]
            if df.empty:
                continue
            status = df["log_status"].iloc[0]
            for r in df.sort_values(["rows_per_txn", "rows_per_stmt"]).itertuples():
                rows.append({"engine": engine_title(engine), "rows/txn": r.rows_per_txn, "rows/stmt": r.rows_per_stmt,
                             "log bytes / row byte": fmt(r.log_amplification) if status == "ok" else NOT_REPORTED,
                             # A scope whose writes were charged elsewhere reads 0: not measured, never 0.
                             "I/O bytes / row byte": fmt(r.io_amplification) if r.io_amplification else "not measured"})
        return pd.DataFrame(rows)

    def reference_only_table(self) -> pd.DataFrame:
        """Seed 000's engines this run did not measure: its insert row, per row, and relative to
        PostgreSQL, with the reason it did not run here."""
        ref = results.reference("seed000_dml_instructions")
        ins = ref[ref["phase"] == "insert"].set_index("engine")
        measured = {e.partition("@")[0] for e in self.engines}
        skipped = self.param("skipped") or {}
        seed = analysis.seed_ratios(ref)
        rows = []
        for key, r in ins.iterrows():
            if key in measured:
                continue
            arch = _architecture(key)
            rows.append({"engine": r["engine_title"], "version (seed 000)": r["version"],
                         "architecture": arch.name if arch else "",
                         "instructions per row": r["instructions_gi"] * 1e9 / SEED_ROWS,
                         "× PostgreSQL (seed 000)": seed.get(key),
                         "why reference only": skipped.get(key) or "not in this run's engine list"})
        return pd.DataFrame(rows)

    def node_table(self):
        """Per cluster, cell and node: the node's engine cost per row, its share of the
        cluster's, and the bytes through its network interface per row."""
        n = self.nodes
        if n.empty:
            return None  # replication_figure says why
        u = f"engine {self.shown_unit}/row"
        out = pd.DataFrame({
            "cluster": [engine_title(e) for e in n["engine"]],
            "cell": [analysis.cell_label(r) for r in n.to_dict("records")],
            "node": [f"{node} ({role})" for node, role in zip(n["node"], n["role"])],
            u: n["engine_per_row"] / self.scale, "share of the cluster's cost": n["share"],
            "wire B/row received": n["net_rx_per_row"], "wire B/row sent": n["net_tx_per_row"],
        })
        return (out.style.format("{:.4g}", na_rep="n/a", subset=[u, "wire B/row received", "wire B/row sent"])
                .format("{:.0%}", na_rep="n/a", subset=["share of the cluster's cost"]).hide(axis="index")
                # Issue 37 item 6: Galera's node2 and node3 both read 247.4 B/row received.
                .set_caption("Nodes sent the same stream (a Galera write set goes to every node, and each answers "
                             "alike) receive the same bytes, often to the byte; each node's figures are its own "
                             "counters, as their CPU shows."))

    # -- appendix --------------------------------------------------------------------------------------
    def method_notes(self) -> str:
        """The facts every cell of this run shares (its table, its counters, its engines' notes)."""
        p = self.info["parameters"]
        notes = [
            "" if self.asks_replication else NO_CLUSTER,
            f"Each cell writes {p['rows']:,} rows into a freshly created table (`demo`: server-generated "
            f"{p['pk_kind']} primary key + float, {self.row_bytes} bytes of row{self._seed_keys(p['pk_kind'])}); cells "
            "run one after another on one engine start per repetition.",
            f"A settle window follows each cell's statements until the engine is back near its idle rate (at most "
            f"{p['max_settle_seconds']} s). Work the engine starts after its settle window lands in no window.",
            "Log bytes: " + "; ".join(f"{engine_title(k)}: {d.log.source or d.log.reason}" for k, d in DIALECTS.items()
                                      if any(e.partition('@')[0] == k for e in self.engines)) + ".",
            *[f"**{engine_title(e)}:** {d.note}" for e in self.engines if (d := _dialect(e)) is not None and d.note],
            key_note(self.engines, p["pk_kind"]),
            *[f"**{engine_title(c)}:** {get_engine(c).cluster.topology}; its cost is the sum of its nodes' cgroups, "
              "and each cell's check counts the rows on every node." for c in self.clusters],
        ]
        io = self.measurements[(self.measurements["metric"] == "io_write_bytes")
                               & (self.measurements["scope"] == "server")]["value"]
        if not io.empty and (io.fillna(0) == 0).all():
            notes.append("The server engines' cgroup I/O write bytes read 0 in every window (the kernel charged their "
                         "writes elsewhere): their log counter is the byte figure.")
        return "\n".join(f"- {n}" for n in notes if n)

    @staticmethod
    def _seed_keys(pk_kind: str) -> str:
        """Where the run's keys are not seed 000's (UUIDs), said beside them (hostile read 44, 05i #5)."""
        return "" if pk_kind == SEED_KEYS else f"; seed 000's keys: {SEED_KEYS}, {ROW_BYTES[SEED_KEYS]} bytes of row"

    def appendix_parts(self) -> list:
        return [("How each cell was measured", self.method_notes()), ("Every cell", self.cell_table()),
                ("Bytes per byte of row", self.amplification_table().style.hide(axis="index")),
                ("Seed 000's engines this run did not measure", self.reference_only_table().style.format(
                    fmt, subset=["instructions per row", "× PostgreSQL (seed 000)"]).hide(axis="index")),
                *super().appendix_parts()]

    def cluster_title(self, key: str) -> str:
        nodes = self.instances[(self.instances["engine"] == key) & (self.instances["kind"] == "node")]
        per_start = nodes.groupby([cluster_instance_of(i) for i in nodes["instance_id"]]).size()
        count = f" ({int(per_start.iloc[0])} nodes)" if per_start.nunique() == 1 else ""
        return f"{engine_title(key)}{count}"
