"""The client-API notebook's report: findings (each layer against the raw driver, seed 002's
order, the transports, the contended test), the one chart, the other figures and tables, on the
shared report layer."""
from __future__ import annotations

import pandas as pd

from ...data import findings as F
from ...data import results
from ...engines import get_engine
from ...core.errors import UnknownEngineError
from ...engines import engine_order, engine_title
from ...present.plots import grouped_bars, stacked_panels
from ...present.report import RunReport, fmt
from . import analysis
from .dialects import dialect_for
from .workload import HARNESS, LAYER_NAMES, OPERATIONS, WORKLOAD, layer_skip_reason

CLIENT_COLOR, SERVER_COLOR, EMBEDDED_COLOR = "#F2A541", "#3B6EA5", "#7A9E7E"
TRANSPORT_COLORS = {"in-process": EMBEDDED_COLOR, "unix": "#4C9F70", "tcp": "#C8553D"}
SEGMENTS = {"client": ("client CPU (Python, driver)", CLIENT_COLOR),
            "server": ("server CPU (engine cgroup, with its background work)", SERVER_COLOR),
            "embedded": ("in-process CPU (Python + engine)", EMBEDDED_COLOR)}

CONTENDED_HEADINGS = {"completion_s": "completion (s)", "ops_per_s": "operations/s", "engine_cpu_s": "engine CPU (s)",
                      "client_cpu_s": "client CPU (s)"}

PHRASES = F.Phrases(
    default="{subject}, {step}, {regime}: {value}, {ratio} {base}'s {base_value} ({words})",
    templates={F.Verdict.NA.value: "{subject}, {step}, {regime}: not measured on both sides",
               F.WIDE: "{subject}, {step}, {regime}: {value} against {base}'s {base_value}{mark} ({words}, CI over 10x wide)"})
# A layer row: µs added over the driver first, the ratio second (hostile read 46b, 04 #2).
LAYER_PHRASES = F.Phrases(
    default="{subject}, {step}, {regime}: {added_us:+,.0f} µs per operation against the driver's {base_value} "
            "({value}, {ratio}, {words})",
    templates={F.Verdict.NA.value: PHRASES.templates[F.Verdict.NA.value], F.WIDE: PHRASES.templates[F.WIDE]})
# The first screen's seed line: each ODB-like order row against seed 002's, then the rows' counts.
SEED_ORDER_ITEM = "ODB-like {subject}/{base} {ratio} vs seed {seed_text}x: {seed_words}"
SEED_ORDER_LINE = "Seed 002's order: {items}."
# Where no row is decided: one line with the widest ratios, each too wide a CI said without its point.
NOTHING_DECIDED = "Nothing told apart from noise at this precision; the widest: {items}."
WIDEST_ITEM = "{subject} {regime} {ratio_only}"


class ClientApiReport(RunReport):
    workload = WORKLOAD
    notebook = "04-client-api-overhead"
    seed_set = "seed-like"
    phrases = PHRASES

    def __init__(self, run_id: str, store=None):
        super().__init__(run_id, store)
        self.m = analysis.labelled(self.measurements)
        self.per_op = analysis.per_operation(self.m)
        self.summary = analysis.summarize(self.per_op)
        self.contended = analysis.contended(self.m)
        self.found = analysis.findings(self.summary, self.contended, host=self.host_factor,
                                       plain=frozenset(e for e, d in self._dialects().items() if d.sqlalchemy_plain))

    def _dialects(self) -> dict:
        """Each engine of the run that has this workload's dialect, with it."""
        out = {}
        for key in self.engines:
            try:
                dialect = dialect_for(get_engine(key))
            except UnknownEngineError:
                continue
            if dialect is not None:
                out[key] = dialect
        return out

    # -- findings ----------------------------------------------------------------------------------
    def findings(self) -> pd.DataFrame:
        return self.found

    def answer_lines(self) -> list[str]:
        """The decided rows, each with its footnote marks (a caveat such as orm_batch's commits changes
        what its ratio compares); where none is decided, one line saying so with the widest ratios."""
        rows = F.headline(self.findings(), self.answer_limit)
        if rows.empty or rows["verdict"].map(lambda v: F.Verdict(v).decided).any():
            marks = self.answer_marks()
            return [F.render(r, self.phrases_of(r), mark=self.footnote(r, marks))
                    for r in rows.to_dict("records")][:self.answer_limit]
        widest = [F.fields_of(r, self.phrases) for r in rows.head(3).to_dict("records")]
        return [NOTHING_DECIDED.format(items="; ".join(WIDEST_ITEM.format(**f) for f in widest))]

    def phrases_of(self, row) -> F.Phrases:
        return LAYER_PHRASES if row.get("kind") == analysis.LAYER else self.phrases

    def seed_line(self, found: pd.DataFrame) -> str:
        """Seed 002's order on the first screen, one item per ODB-like row with a seed figure (hostile read
        46b, 04 #5: only counts were there), then findings.seed_line's counts over every seed row."""
        counts = super().seed_line(found)
        order = found[(found["kind"] == analysis.ORDER) & (pd.to_numeric(found["seed_ratio"], errors="coerce") > 0)] \
            if not found.empty and "kind" in found else found
        if order.empty:
            return counts
        items = "; ".join(SEED_ORDER_ITEM.format(**F.fields_of(r, self.phrases)) for r in order.to_dict("records"))
        return " ".join(x for x in (SEED_ORDER_LINE.format(items=items), counts) if x)

    def caveat_notes(self) -> list[F.Caveat]:
        return [
            F.Caveat("odb-like", "Seed 002 measured ODB (C++, prepared statements through each database's C library) "
                                 "on 2012 hardware: its ratios travel, its microseconds do not."),
            F.Caveat("stand-in", "MySQL did not run: MariaDB (its protocol, the same drivers) stands in for it."),
            F.Caveat("remote-ethernet", "Seed 002's remote crossed gigabit Ethernet; here TCP goes over the Docker "
                                        "bridge on this host."),
            F.Caveat("contended", "One window per mode, the raw driver (PyMySQL for the MySQL protocol), one round "
                                  "with a connection per worker, where ODB ran prepared statements in four rounds."),
            F.Caveat(analysis.SERVER_BACKGROUND, "Server CPU is the engine's whole cgroup over the window, no idle "
                                                 "rate subtracted: it includes background work, so client + server "
                                                 "can exceed the wall time."),
            F.Caveat(analysis.PLAIN_STATEMENTS, "psycopg would prepare a statement after its 5th execution; "
                                                "Core and the ORM turn that off (prepare_threshold=None), as the "
                                                "raw driver does: plain statements."),
            F.Caveat(analysis.FEW_OBJECTS, f"CI over {F.SEED_TESTABLE_SPAN:g}x wide: {self.param('objects', 0):,} "
                                           f"objects a window leave the work under {analysis.FIXED_COST_MULTIPLE:g}x "
                                           "the window's fixed cost" + self._more_objects() + "."),
            F.Caveat(analysis.BATCHED, f"orm_batch commits {self._batch_commits()} times a window, the driver "
                                       f"{self.param('objects', 0):,} (once per object)."),
            F.Caveat("short-window", f"A window under {analysis.SHORT_WINDOW_S:g} s (this set's scale): the workers' "
                                     "start and finish weigh in its throughput."),
        ]

    def _more_objects(self) -> str:
        """`; --set seed-like (2,000) runs more`: the parameter sets with more objects a window than
        this run, from their files (hostile read 44, 04 #1: a literal 300 beside a default of 150)."""
        more = {k: v for k, v in self.set_values("objects").items() if v > self.param("objects", 0)}
        if not more:
            return ""
        sets = " and ".join(f"--set {k} ({v:,})" for k, v in more.items())
        return f"; {sets} run{'s' if len(more) == 1 else ''} more"

    def _batch_commits(self) -> int:
        """orm_batch's transactions in a window: one per Session of orm_batch_size objects."""
        return -(-self.param("objects", 0) // max(self.param("orm_batch_size", 1), 1))

    def headline_figure(self):
        return self.cpu_figure(("load",), "load: client and server CPU per operation by layer (◆ wall time)",
                               "client-api-cpu-load")

    def appendix_parts(self):
        return [*super().appendix_parts(), ("The harness's own cost", self.harness_table())]

    # -- figures -----------------------------------------------------------------------------------
    def cpu_figure(self, operations, title: str, name: str):
        """Client and server CPU per operation stacked (embedded engines: their one process), per
        layer, one panel per engine and transport and one row per operation; the wall time a diamond."""
        s = analysis.ordered(self.summary[(self.summary["layer"] != HARNESS)
                                          & self.summary["phase"].isin(operations)], self.engines)
        embedded = s["transport"] == "in-process"
        s = s.assign(group=[f"{e} {t}" for e, t in zip(s["engine"], s["transport"])], client=s["client_us"],
                     server=s["server_us"], embedded=s["process_us"].where(embedded))
        titles = {f"{e} {t}": f"{engine_title(e)}<br>{t}" for e, t in zip(s["engine"], s["transport"])}
        return stacked_panels(s, panel="group", category="layer", row="phase" if len(operations) > 1 else None,
                              segments=SEGMENTS, marker=("loop_us", "wall µs per operation"), unit="µs per operation",
                              category_order=LAYER_NAMES, panel_titles=titles, title=title, name=name,
                              shared_scale=True)

    def cpu_figures(self):
        """Every operation (rows), every engine and transport (panels): issue 37 item 9's charts, whose
        rotated labels a magnitude panel drew over, as one figure of horizontal bars."""
        ran = [o for o in OPERATIONS if o in set(self.summary["phase"])]
        return [self.cpu_figure(ran, "CPU per operation, client vs server, by layer (◆ wall time)", "client-api-cpu")]

    def transport_figure(self, operation: str = "load"):
        s = analysis.ordered(self.summary[(self.summary["phase"] == operation) & (self.summary["layer"] != HARNESS)],
                             self.engines)
        s = s.assign(engine_t=[engine_title(e) for e in s["engine"]])
        return grouped_bars(s, x=["engine_t", "layer"], group="transport", value="loop_us", colors=TRANSPORT_COLORS,
                            unit=f"µs per {operation}", name=f"client-api-transport-{operation}",
                            title=f"{operation}: wall µs per operation by transport (in-process, Unix socket, TCP on "
                                  "this host)")

    # -- tables ------------------------------------------------------------------------------------
    def harness_table(self):
        """The measuring loop's own cost: the empty operation's µs per operation (goal < 1 µs),
        and the fixed cost of one window beyond its operations."""
        h = self.per_op[self.per_op["layer"] == HARNESS]
        rows = [("empty operation, mean (µs per operation)", h["loop_us"].mean()),
                ("empty operation, max (µs per operation)", h["loop_us"].max()),
                ("window fixed cost, client CPU, median (ms per window)",
                 self.per_op["fixed_client_s"].fillna(self.per_op["fixed_process_s"]).median() * 1e3),
                ("window fixed cost, median (ms per window)", self.per_op["window_overhead_ms"].median()),
                ("window fixed cost, max (ms per window)", self.per_op["window_overhead_ms"].max())]
        return pd.DataFrame(rows, columns=["", "value"]).style.format({"value": "{:.3f}"}).hide(axis="index")

    def harness_us(self) -> float:
        return float(self.per_op[self.per_op["layer"] == HARNESS]["loop_us"].max())

    def contended_table(self):
        c = self.contended
        if c.empty:
            return pd.DataFrame({"": ["the contended test did not run (contended_modes is empty)"]})
        c = c.assign(engine=[engine_title(e) for e in c["engine"]]).drop(columns=["transport"]).rename(
            columns=CONTENDED_HEADINGS)
        return c.style.format({CONTENDED_HEADINGS.get(k, k): v for k, v in (
            ("completion_s", "{:.2f}"), ("operations", "{:,.0f}"), ("ops_per_s", "{:,.0f}"), ("errors", "{:.0f}"),
            ("retries", "{:.0f}"), ("failed", "{:.0f}"), ("engine_cpu_s", "{:.2f}"), ("client_cpu_s", "{:.2f}"))},
            na_rep="n/a").hide(axis="index")

    def _local_and_tcp(self, layer_of) -> tuple[dict[str, float], dict[str, float]]:
        """µs per load per engine on its most local transport and over TCP, in the layer
        `layer_of(layers that ran)` picks for it."""
        s = self.summary[(self.summary["phase"] == "load") & (self.summary["layer"] != HARNESS)]
        local, tcp = {}, {}
        for engine, df in s.groupby("engine"):
            layer = layer_of(set(df["layer"]))
            if layer is None:
                continue
            by_t = df[df["layer"] == layer].set_index("transport")["loop_us"]
            local[engine] = by_t[analysis.most_local(by_t.index)]
            tcp[engine] = by_t.get("tcp", float("nan"))  # an embedded engine has no TCP figure
        return local, tcp

    def seed_comparison(self):
        """µs per load: seed 002 as published, and this run through the layer nearest seed 002's ODB
        (prepared statements through a C library), each engine on its most local transport and over
        TCP, with each column's ratio to PostgreSQL. The plain drivers are not set beside the seed:
        PyMySQL is Python, psycopg libpq (hostile read 46b, 04 #1); the layer findings give them."""
        ref = results.reference("seed002_load")
        ref = ref[ref["client"].isna()]
        cpu = ["Opteron 265" if "Opteron" in h else "Xeon E5520" for h in ref["hardware"]]
        merged: dict[str, pd.Series] = {}
        for where, configs in (("local", ("local", "embedded")), ("remote", ("remote", "embedded"))):
            # SQLite is embedded: its one figure stands in both columns, as in the article's table.
            sel = ref.assign(cpu=cpu)[ref["configuration"].isin(configs)]
            for name, df in sel.groupby("cpu", sort=True):
                if where == "remote" and not (df["configuration"] == "remote").any():
                    continue
                merged[f"seed 002, {name}, {where}"] = df.set_index("engine")["load_us"]
        local, tcp = self._local_and_tcp(analysis.seed_like)
        merged["this run (ODB-like), local"] = pd.Series(local, dtype=float)
        merged["this run (ODB-like), TCP on this host"] = pd.Series(tcp, dtype=float)
        return _with_ratio_to_postgres(pd.DataFrame(merged), "µs per load")

    def contended_comparison(self):
        """Seed 002's contended test (32 threads, its full counts) beside this run's, as
        operations per second and as a ratio to PostgreSQL: this host's loopback and scale differ,
        so the ratios are what can agree."""
        ref = results.reference("seed002_contended")
        ref = ref.assign(operations=ref[["inserts", "updates", "deletes", "selects"]].sum(axis=1))
        table = {"seed 002, ops/s (32 threads, remote; SQLite embedded)":
                 (ref["operations"] / ref["seconds"]).set_axis(ref["engine"])}
        if not self.contended.empty:
            for mode, df in self.contended.groupby("mode", sort=False):
                by = df.groupby("engine")["ops_per_s"].mean()
                # A threads mode's ratio is not the seed's kind (analysis.THREADS_SEED_REASON): its heading says so.
                apart = "" if mode in analysis.SEED_CONTENDED_MODES else f"; {analysis.THREADS_SEED_REASON}"
                table[f"this run, ops/s ({mode}, {int(df['workers'].iloc[0])} workers{apart})"] = by
        return _with_ratio_to_postgres(pd.DataFrame(table), "operations per second")

    def caveats(self, extra=()) -> str:
        """The run's conditions, with the layers each engine skipped and why."""
        notes = []
        for key, dialect in self._dialects().items():
            skipped = [f"`{layer}` ({layer_skip_reason(key, layer)})" for layer in self.param("layers", [])
                       if layer_skip_reason(key, layer)]
            if skipped:
                notes.append(f"**{engine_title(key)}** skipped layer {', '.join(skipped)}.")
            if dialect.processes_reason and "processes" in self.param("contended_modes", []):
                notes.append(f"**{engine_title(key)}**: contended test not run with processes: "
                             f"{dialect.processes_reason}.")
        return super().caveats([*notes, *extra])


def _with_ratio_to_postgres(table: pd.DataFrame, title: str) -> pd.DataFrame:
    """Engines (rows, catalog order) x sources: the figures, then each column over PostgreSQL's:
    ratios are what travel between 2012's hardware and this host."""
    table = table.reindex(engine_order(table.index))
    ratios = table / table.loc["postgres"] if "postgres" in table.index else table * float("nan")
    # The ratio reads as its figure does: for µs more is slower, for operations per second faster.
    out = pd.concat({title: table, f"{title} ÷ PostgreSQL's": ratios}, axis=1)
    out.index = [engine_title(e) for e in out.index]
    return out.style.format(fmt)
