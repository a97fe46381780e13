"""The write-cost notebook's tables, figures and narrative, on the shared report layer."""
from __future__ import annotations

import pandas as pd

from ... import results
from ...engines import find_engine, get_engine, is_cluster, is_server
from ...errors import UnknownEngineError
from ...measure import cluster_instance_of
from ...plots import engine_color, engine_order, engine_title, heatmaps, stacked_bars
from ...report import RunReport, fmt, fmt_ci, fmt_ratio_ci
from . import analysis
from ..dml.dialects import key_note
from .dialects import ARCHITECTURES, DIALECTS, NOT_REPORTED, ROW_BYTES, WITHOUT_DIALECT, dialect_for
from .workload import CLIENT_VALUES, SERVER_GENERATOR

SEED_ROWS = 2_000_000  # seed 000 inserted 2M rows in two transactions of 1M, each one insert ... select
SERVER_LABEL = "server-generated"  # heatmap column of the one-statement-per-transaction cells
AFTER_NOISE = 0.02  # an after-commit share below this is not told apart from the idle rate


def _dialect(key: str):
    engine = find_engine(key)  # None: a reference-only engine, or one a later benchlib dropped
    return dialect_for(engine) if engine is not None else None


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
    def __init__(self, run_id: str, store=None):
        super().__init__(run_id, store)
        self.row_bytes = ROW_BYTES[self.param("pk_kind", "uuid")]
        self.cells = analysis.cells(self.measurements, self.row_bytes)
        self.summary = analysis.summarize(self.cells) if not self.cells.empty else pd.DataFrame(
            columns=[*analysis.KEYS, *analysis.VALUES, "ratio_to_postgres", "log_status", "n"])
        self.summary["statement"] = [SERVER_LABEL if f == SERVER_GENERATOR else str(s) for f, s in
                                     zip(self.summary["rows_from"], self.summary["rows_per_stmt"])]
        # Decomposed on engine + driver CPU: the one rule under which embedded and server engines
        # compare (an embedded engine's driver cannot be taken out of its process).
        self.parts = analysis.decompose(self.cells, value="total_us_per_row") if not self.cells.empty \
            else pd.DataFrame()
        # A server's two sides apart: the same rule on its engine CPU and on its driver's.
        servers = self.cells[self.cells["client_us_per_row"].notna()] if not self.cells.empty else self.cells
        self.side_parts = {side: analysis.decompose(servers, value=value) if not servers.empty else pd.DataFrame()
                           for side, value in (("engine", "cpu_us_per_row"), ("driver", "client_us_per_row"))}
        self.engines = engine_order(self.engines)
        # Clusters beside their single node: what replication adds, and where it lands.
        self.replication = analysis.replication(self.cells)
        self.node_rows = analysis.node_cells(self.measurements, self.instances)
        self.nodes = analysis.node_summary(self.node_rows)

    # -- tables ------------------------------------------------------------------------------------
    def txn_table(self, rows_per_stmt: int = 1) -> pd.DataFrame:
        """The closing-note table: per engine and rows per transaction, engine CPU per row (idle
        subtracted, after-commit work included) and bytes per row (the engine's log where it
        reports one, else the I/O bytes of its scope, marked)."""
        s = self.summary
        s = s[(s["rows_from"] == CLIENT_VALUES) & (s["rows_per_stmt"] == rows_per_stmt)]
        cell = [f"{fmt(c)} µs · " + (f"{fmt(lb)} B" if lb == lb else f"{fmt(io)} B io")
                for c, lb, io in zip(s["cpu_us_per_row"], s["log_bytes_per_row"], s["io_bytes_per_row"])]
        table = s.assign(cell=cell).pivot(index="engine", columns="rows_per_txn", values="cell")
        table = table.reindex(index=[e for e in self.engines if e in table.index])
        table.index = pd.Index([engine_title(e) for e in table.index], name="engine")
        table.columns = pd.Index([f"{c:,} rows/txn" for c in table.columns], name=f"{rows_per_stmt} row(s)/statement")
        return table

    def cell_table(self):
        """Every cell: engine CPU (statements and after the commit), client CPU, wall, bytes."""
        s = self.summary
        out = pd.DataFrame({
            "engine": [engine_title(e) for e in s["engine"]], "rows/txn": s["rows_per_txn"],
            "rows/stmt": s["statement"], "engine CPU µs/row": s["cpu_us_per_row"],
            "of which after commit": s["after_share"], "client CPU µs/row": s["client_us_per_row"],
            "engine + driver CPU µs/row": s["total_us_per_row"], "engine + driver × PostgreSQL": s["ratio_to_postgres"],
            "wall µs/row": s["wall_us_per_row"],
            "log B/row": s["log_bytes_per_row"], "log": s["log_status"], "io write B/row": s["io_bytes_per_row"],
            "n": s["n"],
        })
        numeric = ["engine CPU µs/row", "client CPU µs/row", "engine + driver CPU µs/row", "wall µs/row",
                   "engine + driver × PostgreSQL", "log B/row", "io write B/row"]
        return (out.style.format("{:.4g}", na_rep="n/a", subset=numeric)
                .format("{:.0%}", na_rep="n/a", subset=["of which after commit"]).hide(axis="index"))

    def amplification_table(self) -> pd.DataFrame:
        """Bytes written per byte of row, per engine and rows per transaction (1-row statements and
        the largest statements): the engine's log, and all I/O of its scope."""
        s = self.summary[self.summary["rows_from"] == CLIENT_VALUES]
        rows = []
        for engine in self.engines:
            df = s[s["engine"] == engine]
            if df.empty:
                continue
            status = df["log_status"].iloc[0]
            for r in df.sort_values(["rows_per_txn", "rows_per_stmt"]).itertuples():
                rows.append({"engine": engine_title(engine), "rows/txn": r.rows_per_txn, "rows/stmt": r.rows_per_stmt,
                             "log bytes / row byte": r.log_amplification if status == "ok" else NOT_REPORTED,
                             # A scope whose writes were charged elsewhere reads 0: not measured, never 0.
                             "I/O bytes / row byte": r.io_amplification if r.io_amplification else "not measured"})
        return pd.DataFrame(rows)

    def decomposition_table(self) -> pd.DataFrame:
        p = self.parts
        if p.empty:
            return p
        return pd.DataFrame({
            "engine": [engine_title(e) for e in p["engine"]],
            "architecture": [a.name if (a := _architecture(e)) else "" for e in p["engine"]],
            **{f"{title} µs/row (95% CI)": [fmt_ci(v, h) for v, h in zip(p[f"{name}_us"], p[f"{name}_ci95"])]
               for name, title in (("one_row_txn", "1-row txn"), ("commit", "commit"), ("statement", "statement"),
                                   ("row", "row"))},
            "n": p["n"],
            "after-commit share (mean of cells)": p["after_share"].map(lambda v: fmt(v * 100, "%", 2)),
            "dominant part of a 1-row transaction": p["dominant"],
        })

    def decomposition_sides_table(self) -> pd.DataFrame:
        """Server engines only: each part of a one-row transaction on the engine's side (its
        cgroup) and on the driver's (the client process), with 95% CIs; their sum is the
        engine + driver decomposition above. Embedded engines have one side."""
        engine, driver = self.side_parts["engine"], self.side_parts["driver"]
        if engine.empty:
            return engine
        driver = driver.set_index("engine")
        out = {"engine": [engine_title(e) for e in engine["engine"]]}
        for name, title in (("one_row_txn", "1-row txn"), ("commit", "commit"), ("statement", "statement"),
                            ("row", "row")):
            out[f"{title}: engine µs/row"] = [fmt_ci(v, h) for v, h in zip(engine[f"{name}_us"], engine[f"{name}_ci95"])]
            out[f"{title}: driver µs/row"] = [fmt_ci(driver.loc[e, f"{name}_us"], driver.loc[e, f"{name}_ci95"])
                                              if e in driver.index else "n/a" for e in engine["engine"]]
        out["dominant on the engine's side"] = engine["dominant"].tolist()
        return pd.DataFrame(out)

    def reference_only_table(self) -> pd.DataFrame:
        """Seed 000's engines this run did not measure: its insert row (2M rows, two 1M-row
        transactions), per row, and relative to PostgreSQL, with the reason it did not run here."""
        ref = results.reference()
        ins = ref[ref["phase"] == "insert"].set_index("engine")
        measured = {e.partition("@")[0] for e in self.engines}
        skipped = self.param("skipped") or {}
        rows = []
        for key, r in ins.iterrows():
            if key in measured:
                continue
            arch = _architecture(key)
            reason = skipped.get(key) or "not in this run's engine list"
            rows.append({"engine": r["engine_title"], "version (seed 000)": r["version"],
                         "architecture": arch.name if arch else "",
                         "insert, billion instructions": r["instructions_gi"],
                         "instructions per row": r["instructions_gi"] * 1e9 / SEED_ROWS,
                         "× PostgreSQL (seed 000)": r["instructions_gi"] / ins.loc["postgres", "instructions_gi"],
                         "why reference only": reason})
        return pd.DataFrame(rows)

    def seed_cell(self) -> pd.DataFrame:
        """This run's cell closest to seed 000's insert: the largest transaction, rows generated by
        the server in one statement (else the largest client statement)."""
        s = self.summary
        big = s["rows_per_txn"].max()
        pick = s[(s["rows_per_txn"] == big) & (s["rows_from"] == SERVER_GENERATOR)]
        if pick.empty:
            pick = s[s["rows_per_txn"] == big]
            pick = pick[pick["rows_per_stmt"] == pick["rows_per_stmt"].max()]
        return pick

    def reference_comparison(self) -> pd.DataFrame:
        # Server engines only, engine CPU only: the seed's figure is the server container's work.
        ours = self.seed_cell().assign(phase="insert")
        ours = ours[[is_server(e) for e in ours["engine"]]]
        ours = ours.assign(engine=ours["engine"].str.partition("@")[0])
        return self.ratio_comparison(ours, "cpu_us_per_row", results.reference(), "instructions_gi",
                                     base_engine="postgres", columns=["insert"], reference_name="seed 000")

    # -- clusters ---------------------------------------------------------------------------------
    @property
    def clusters(self) -> list[str]:
        return list(dict.fromkeys(self.replication["cluster"])) if not self.replication.empty else []

    @staticmethod
    def _cell_label(row) -> str:
        stmt = SERVER_LABEL if row.rows_from == SERVER_GENERATOR else f"{row.rows_per_stmt:,}/stmt"
        return f"{row.rows_per_txn:,}/txn · {stmt}"

    def _cluster_title(self, key: str) -> str:
        nodes = self.instances[(self.instances["engine"] == key) & (self.instances["kind"] == "node")]
        per_start = nodes.groupby([cluster_instance_of(i) for i in nodes["instance_id"]]).size()
        count = f" ({int(per_start.iloc[0])} nodes)" if per_start.nunique() == 1 else ""
        return f"{engine_title(key)}{count}"

    def replication_table(self):
        """Per cluster and cell: engine CPU per row on the single node and on the cluster (summed
        over its nodes), each with its 95% CI over repetitions, the ratio (CI by the delta method;
        `beyond noise` by Welch's test), what replication adds per row and per commit, and the
        client's transaction latency."""
        r = self.replication
        if r.empty:
            return pd.DataFrame({"": ["no cluster ran beside its single node in this run"]})
        out = pd.DataFrame({
            "cluster": [self._cluster_title(c) for c in r["cluster"]],
            "cell": [self._cell_label(row) for row in r.itertuples()],
            "single node µs/row": [fmt_ci(v, c) for v, c in zip(r["single_us"], r["single_ci95"])],
            "cluster µs/row": [fmt_ci(v, c) for v, c in zip(r["cluster_us"], r["cluster_ci95"])],
            "× single node": [fmt_ratio_ci(v, lo, hi, "×") for v, lo, hi in zip(r["ratio"], r["ratio_low"], r["ratio_high"])],
            "beyond noise": r["beyond_noise"].map({True: "yes", False: "no"}).fillna("n/a (n < 2)"),
            "added µs/commit": r["added_us_per_commit"].map(fmt),
            "txn p50 ms (single → cluster)": [f"{fmt(a * 1e3)} → {fmt(b * 1e3)}"
                                              + ("" if self.param("rows") // per_txn > 1 else
                                                 " (one transaction per repetition: mean of those)")
                                              for a, b, per_txn in zip(r["single_txn_latency_p50"],
                                                                       r["cluster_txn_latency_p50"], r["rows_per_txn"])],
            # A cell of one transaction has one latency: its p95 is that transaction, not a tail.
            "txn p95 ms (single → cluster)": [f"{fmt(a * 1e3)} → {fmt(b * 1e3)}" if self.param("rows") // per_txn > 1
                                              else "n/a (one transaction)" for a, b, per_txn in
                                              zip(r["single_txn_latency_p95"], r["cluster_txn_latency_p95"],
                                                  r["rows_per_txn"])],
            "n": r["n"],
        })
        return out.style.hide(axis="index")

    def node_table(self):
        """Per cluster, cell and node: the node's engine CPU per row, its share of the cluster's,
        and the bytes through its network interface per row."""
        n = self.nodes
        if n.empty:
            return pd.DataFrame({"": ["no cluster in this run"]})
        out = pd.DataFrame({
            "cluster": [engine_title(e) for e in n["engine"]],
            "cell": [self._cell_label(row) for row in n.itertuples()],
            "node": [f"{node} ({role})" for node, role in zip(n["node"], n["role"])],
            "engine CPU µs/row": n["cpu_us_per_row"], "share of the cluster's CPU": n["share"],
            "wire B/row received": n["net_rx_per_row"], "wire B/row sent": n["net_tx_per_row"],
        })
        return (out.style.format("{:.4g}", na_rep="n/a", subset=["engine CPU µs/row", "wire B/row received",
                                                                  "wire B/row sent"])
                .format("{:.0%}", na_rep="n/a", subset=["share of the cluster's CPU"]).hide(axis="index"))

    def _node_split(self) -> pd.DataFrame:
        """Per cluster and cell: the entry node's and the other nodes' CPU per row (means), beside
        the single node's."""
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
                         "entry_us": first["cpu_us_per_row"].sum(),
                         "others_us": df.drop(first.index)["cpu_us_per_row"].sum(),
                         "others_rx_per_row": df.drop(first.index)["net_rx_per_row"].sum(),
                         "single_us": match["single_us"].iloc[0]})
        return pd.DataFrame(rows)

    def replication_figure(self):
        """Per cluster and cell: the cluster's engine CPU per row stacked by node (the entry node,
        where the client writes, and the other nodes), the single node's as a marker."""
        split = self._node_split()
        if split.empty:
            import plotly.graph_objects as go

            return go.Figure().update_layout(title="No cluster ran beside its single node in this run",
                                             template="plotly_white", height=160,
                                             meta={"benchlib_name": "write-cost-replication"})
        split = split.assign(cluster_title=[engine_title(c) for c in split["cluster"]],
                             cell=[self._cell_label(r) for r in split.itertuples()])
        color = engine_color(self.clusters[0])
        return stacked_bars(split, x=["cluster_title", "cell"], name="write-cost-replication",
                            segments={"entry_us": ("entry node (the client writes here)", color),
                                      "others_us": ("the other nodes", "#BBBBBB")},
                            marker=("single_us", "single node"), unit="engine CPU µs/row",
                            title="Engine CPU per row: the cluster, node by node, against its single node")

    def replication_findings(self) -> str:
        """The closing note on clusters, from the numbers: per cluster what replication adds to a
        one-row transaction and to the bulk corner, where the added CPU lands, and seed 000's
        distributed rows beside them."""
        r = self.replication
        if r.empty:
            return ("- No cluster ran beside its single node in this run (`clusters` parameter; the `clusters` "
                    "parameter set runs every offline cluster).")
        split = self._node_split()
        lines = []
        for cluster in self.clusters:
            df = r[r["cluster"] == cluster]
            single = df["single"].iloc[0]
            one = df[(df["rows_per_txn"] == df["rows_per_txn"].min()) & (df["rows_per_stmt"] == 1)
                     & (df["rows_from"] == CLIENT_VALUES)].head(1)
            big = df[df["rows_per_txn"] == df["rows_per_txn"].max()]
            bulk = big[big["rows_from"] == SERVER_GENERATOR].head(1)
            bulk = bulk if not bulk.empty else big.sort_values("rows_per_stmt").tail(1)
            topology = get_engine(cluster).cluster.topology
            text = f"**{self._cluster_title(cluster)}** ({topology}): "
            if not one.empty:
                o = one.iloc[0]
                text += (f"a {o.rows_per_txn:,}-row transaction costs {fmt_ci(o.cluster_us, o.cluster_ci95)} µs of "
                         f"engine CPU summed over the nodes against {fmt_ci(o.single_us, o.single_ci95)} µs on a single "
                         f"{engine_title(single)}: **{fmt_ratio_ci(o.ratio, o.ratio_low, o.ratio_high, '×')}** the "
                         f"single node{_noise_note(o.beyond_noise)}, "
                         f"{fmt(o.added_us_per_commit)} µs more per commit; the client waited "
                         f"{fmt(o.single_txn_latency_p50 * 1e3)} → {fmt(o.cluster_txn_latency_p50 * 1e3)} ms per "
                         "transaction (p50). ")
                part = split[(split["cluster"] == cluster) & (split["rows_per_txn"] == o.rows_per_txn)
                             & (split["rows_per_stmt"] == o.rows_per_stmt) & (split["rows_from"] == o.rows_from)]
                if not part.empty:
                    p = part.iloc[0]
                    added = p.entry_us + p.others_us - p.single_us
                    if added > 0:
                        text += (f"Of the CPU replication added, {fmt(100 * (p.entry_us - p.single_us) / added, '%', 2)} "
                                 f"is on the entry node, where the client writes, and "
                                 f"{fmt(100 * p.others_us / added, '%', 2)} on the other nodes (receiving and "
                                 f"applying; {fmt(p.others_rx_per_row)} bytes per row reached them on the wire, frames, "
                                 "acknowledgements and heartbeats included, idle traffic not subtracted). ")
            if not bulk.empty:
                b = bulk.iloc[0]
                text += (f"In the bulk corner ({self._cell_label(b)}) a row costs {fmt(b.cluster_us)} against "
                         f"{fmt(b.single_us)} µs: {fmt_ratio_ci(b.ratio, b.ratio_low, b.ratio_high, '×')}"
                         f"{_noise_note(b.beyond_noise)}.")
            lines.append(text)
        lines += self._same_single_node_lines()
        return "\n".join(f"- {line}" for line in lines) + "\n" + self._seed_distributed_line()

    def _same_single_node_lines(self) -> list[str]:
        """Two clusters of one single node (a synchronous and an asynchronous replica): in the
        one-row cell, the difference between them is what the first one's commit waits for; both
        carry the co-location and background work the other has too."""
        r = self.replication
        one = r[(r["rows_per_txn"] == r["rows_per_txn"].min()) & (r["rows_per_stmt"] == 1)
                & (r["rows_from"] == CLIENT_VALUES)]
        lines = []
        for single, df in one.groupby("single", sort=False):
            rows = list(df.itertuples())
            for a, b in zip(rows, rows[1:]):
                slow, fast = (a, b) if a.cluster_txn_latency_p50 >= b.cluster_txn_latency_p50 else (b, a)
                apart = abs(a.cluster_us - b.cluster_us) > a.cluster_ci95 + b.cluster_ci95
                lines.append(
                    f"**{engine_title(slow.cluster)} against {engine_title(fast.cluster)}** (the same "
                    f"{engine_title(single)} nodes, one-row transactions): the client waited "
                    f"{fmt((slow.cluster_txn_latency_p50 - fast.cluster_txn_latency_p50) * 1e3)} ms more per commit "
                    f"(p50 {fmt(slow.cluster_txn_latency_p50 * 1e3)} against {fmt(fast.cluster_txn_latency_p50 * 1e3)} "
                    "ms): what the first one's commit rule waits for beyond the second's. Engine CPU "
                    f"{fmt_ci(slow.cluster_us, slow.cluster_ci95)} against {fmt_ci(fast.cluster_us, fast.cluster_ci95)} "
                    "µs/row: " + ("apart beyond their CIs." if apart else "the CIs overlap, so no CPU difference is "
                                  "resolved: what both add over the single node (co-location, the standby's apply) "
                                  "is most of it."))
        return lines

    def _seed_distributed_line(self) -> str:
        """Seed 000's distributed engines relative to PostgreSQL, beside this run's clusters in the
        bulk corner relative to the same PostgreSQL cell."""
        ref = results.reference()
        ins = ref[ref["phase"] == "insert"].set_index("engine")["instructions_gi"]
        seed = ", ".join(f"{engine_title(k)} {fmt(ins[k] / ins['postgres'], digits=2)}×"
                         for k in ("cockroachdb", "yugabytedb", "tidb") if k in ins)
        cell = self.seed_cell()
        corner = cell.iloc[0] if not cell.empty else None
        r = self.replication
        if corner is not None:
            r = r[(r["rows_per_txn"] == corner["rows_per_txn"]) & (r["rows_per_stmt"] == corner["rows_per_stmt"])
                  & (r["rows_from"] == corner["rows_from"])]
        ours = ", ".join(f"{engine_title(row.cluster)} {fmt_ratio_ci(row.ratio, row.ratio_low, row.ratio_high, '×')} its "
                         "single node"
                         f"{_noise_note(row.beyond_noise)}" for row in r.itertuples())
        return (f"- **Seed 000's distributed rows** (2M rows in two 1M-row `insert ... select`, user-space "
                f"instructions, one node each): {seed} PostgreSQL's insert. Those ran as single nodes (Raft with one "
                "replica; TiDB's tiup playground), so they price a distributed architecture's write path against "
                "another engine, not replication between machines. The clusters here price replication added to the "
                "same engine"
                + (f": in this run's cell nearest the seed's ({self._cell_label(corner)}), {ours}" if ours else "")
                + ". The metrics differ too: this host has no PMU, so these are CPU seconds (user and system) of the "
                  "containers' cgroups, where the seed counted user-space instructions only, and much of what "
                  "replication adds (network, fsync) is kernel work the seed's counter did not see. Every node "
                  "shares the same two cores and a local bridge network, so round trips cost microseconds, not a "
                  "real network's.")

    # -- figures ----------------------------------------------------------------------------------
    def _heatmap(self, value: str, *, title: str, unit: str, name: str, log_color: bool = False, fmt_=fmt,
                 skip_postgres: bool = False, empty_note: str = "no values to show"):
        s = self.summary.dropna(subset=[value])
        if skip_postgres:  # the base of a ratio: 1 in every cell
            s = s[s["engine"].map(lambda e: e.partition("@")[0]) != "postgres"]
        order = [str(v) for v in sorted(set(s[s["rows_from"] == CLIENT_VALUES]["rows_per_stmt"]))]
        order += [SERVER_LABEL] if (s["rows_from"] == SERVER_GENERATOR).any() else []
        return heatmaps(s, x="statement", y="rows_per_txn", value=value, facet="engine", title=title, name=name,
                        unit=unit, x_title="rows per statement", y_title="rows per transaction",
                        log_color=log_color, text_format=fmt_, x_order=order, empty_note=empty_note)

    def cpu_figure(self):
        return self._heatmap("cpu_us_per_row", unit="µs/row", name="write-cost-cpu", log_color=True,
                             title="Engine CPU per row (µs, idle subtracted, after-commit work included)")

    def ratio_figure(self):
        return self._heatmap("ratio_to_postgres", unit="× PostgreSQL", name="write-cost-ratio", log_color=True,
                             title="Engine + driver CPU per row relative to PostgreSQL's in the same cell",
                             fmt_=lambda v: fmt(v, digits=2), skip_postgres=True,
                             empty_note="no ratio: PostgreSQL, the base, did not run (or only one engine did)")

    def after_figure(self):
        return self._heatmap("after_share", unit="share", name="write-cost-after-commit", fmt_=".0%",
                             title="Share of the engine's CPU spent after the statements returned (settle window)",
                             empty_note="no settle window in this run: only engines that work after a call returns "
                                        "(servers, embedded engines with threads of their own) get one")

    def amplification_figure(self):
        return self._heatmap("log_amplification", unit="log bytes per row byte", name="write-cost-amplification",
                             log_color=True, title=f"Write amplification: engine log bytes per byte of row "
                                                   f"({self.row_bytes}-byte rows)",
                             empty_note="no engine in this run reports the bytes of its log (see the amplification "
                                        "table for the I/O bytes of its scope)")

    # -- narrative -------------------------------------------------------------------------------------
    def findings(self) -> str:
        """Per engine, the shape of its write cost in the measured numbers, and what its architecture
        does per row."""
        lines = []
        s = self.summary[self.summary["rows_from"] == CLIENT_VALUES]
        for part in self.parts.itertuples():
            df = s[s["engine"] == part.engine]
            arch = _architecture(part.engine)
            floor = df[(df["rows_per_txn"] == part.largest_txn) & (df["rows_per_stmt"] == part.largest_stmt)].iloc[0]
            log = (f"its log grows by {fmt(floor['log_bytes_per_row'])} bytes per row "
                   f"({fmt(floor['log_amplification'])}× the {self.row_bytes}-byte row)"
                   if floor["log_status"] == "ok" else "it reports no log counter")
            client = df["client_us_per_row"]
            client_text = (f" The Python driver spent {fmt(client.min())}–{fmt(client.max())} µs per row." if
                           client.notna().any() else " The driver runs in the engine's own process, counted in it.")
            after = part.after_share
            if after != after:
                after_text = "no work after the commit is measurable in-process"
            elif after <= -AFTER_NOISE:  # more idle rate subtracted than the settle windows used
                after_text = (f"its after-commit share comes out at {fmt(after * 100, '%', 2)}: the idle rate "
                              "subtracted over the settle windows exceeded their CPU, so that baseline ran high "
                              "and the after-commit figure is not usable")
            elif after < AFTER_NOISE:  # the idle rate x settle time is subtracted: small values are noise
                after_text = ("no CPU beyond its idle rate came after the statements returned "
                              f"({fmt(after * 100, '%', 2)} of the total, within noise)")
            else:
                after_text = f"{fmt(after * 100, '%', 2)} of its CPU came after the statements returned"
            verdict = (f"so **{part.dominant}** dominates" if part.dominant in analysis.PARTS else
                       f"and which part dominates is {part.dominant}")
            one = (f"A one-row transaction costs {fmt_ci(part.one_row_txn_us, part.one_row_txn_ci95)} µs of engine + driver "
                   f"CPU per row: {fmt_ci(part.commit_us, part.commit_ci95)} for the commit, "
                   f"{fmt_ci(part.statement_us, part.statement_ci95)} for the statement and "
                   f"{fmt_ci(part.row_us, part.row_ci95)} for the row itself (95% CIs over {part.n} repetitions), "
                   f"{verdict}. " if part.one_row_txn_us == part.one_row_txn_us else "")
            lines.append(
                f"**{engine_title(part.engine)}** ({arch.name if arch else 'engine'}): {one}In "
                f"{part.largest_txn:,}-row transactions of {part.largest_stmt:,}-row statements a row costs "
                f"{fmt(floor['cpu_us_per_row'])} µs of engine CPU ({fmt(floor['total_us_per_row'])} with the driver) "
                f"and {log}; {after_text}."
                # The architecture's deferred work, said as what can follow: whether it came in this run is
                # the after-commit figure's to say.
                + (f" Per row it {arch.write_path}; what can follow the commit: {arch.deferred}." if arch else "")
                + client_text)
        return "\n".join(f"- {line}" for line in lines) or "- no cell measured"

    def what_seed_hides(self) -> str:
        """Seed 000 measured one corner of this sweep: the closing paragraph, from the numbers."""
        cell = self.seed_cell()
        corner = cell.set_index("engine")["total_us_per_row"]  # the decomposition's rule
        lines = []
        for part in self.parts.itertuples():
            if part.engine in corner and part.one_row_txn_us == part.one_row_txn_us and corner[part.engine] > 0:
                lines.append(f"{engine_title(part.engine)} {fmt(part.one_row_txn_us / corner[part.engine])}×")
        base = self.parts.set_index("engine")
        pg = next((e for e in base.index if e.partition("@")[0] == "postgres"), None)
        ranks = ""
        if pg is not None:
            bulk = {e: corner[e] / corner[pg] for e in base.index if e in corner and pg in corner}
            single = {e: base.loc[e, "one_row_txn_us"] / base.loc[pg, "one_row_txn_us"] for e in base.index}
            ranks = ("Relative to PostgreSQL (engine + driver CPU; ratios of means, without CIs: the "
                     "decomposition's CIs above say which differences are resolved) the engines also move: " + "; ".join(
                f"{engine_title(e)} {fmt(bulk[e])}× in bulk, {fmt(single[e])}× one row at a time"
                for e in base.index if e != pg and e in bulk and single[e] == single[e]) + ". ")
        return (
            "Seed 000 inserted 2,000,000 rows in two transactions of 1,000,000, each one `insert ... select` with "
            "the rows generated by the server: the corner of this sweep where commit and statement costs are "
            "spread over the most rows and only the per-row work is left (here "
            + (self._cell_label(cell.iloc[0]) if not cell.empty else "not run") + "). "
            + (f"A row written in its own transaction costs this many times the corner's engine + driver CPU per "
               f"row: {', '.join(lines)}. " if lines else "")
            + ranks
            + "The distributed engines' 25x (CockroachDB), 7x (YugabyteDB) and 3x (TiDB) over PostgreSQL were "
              "measured in the seed's corner (1,000,000-row transactions, the server's user-space instructions, not "
              "this run's CPU seconds); how their cost splits between commit, statement and row is not "
              "measured in this run, so the seed's ratios say nothing about it.")

    def caveats(self, extra=()) -> str:
        p = self.info["parameters"]
        notes = [
            f"Each cell writes {p['rows']:,} rows into a freshly created table (`demo`: server-generated "
            f"{p['pk_kind']} primary key + float, {self.row_bytes} bytes of row) on a running engine; cells run one "
            "after another on one engine start per repetition.",
            "How rows are generated: every statement's text is built before its window opens (a multi-row "
            "`VALUES` list; the primary key is generated by the engine), so inside the window the client only "
            "sends statements on one cursor, `begin` / `commit` around each transaction of more than one statement "
            "(a one-statement transaction is the statement's own, autocommit). `server-generated` cells send one "
            "`insert ... select` per transaction with the rows generated by the engine (seed 000's statement).",
            "Engine CPU per row has the engine's idle rate x the windows' duration taken away and includes the "
            "settle window after the statements (deferred work); where a settle window reached its limit "
            f"({p['max_settle_seconds']} s), later work lands in no window. PostgreSQL's autovacuum runs on its own "
            "schedule (every minute), so which cell's settle window it falls into is chance.",
            "Log bytes are the engine's own counter read before the statements, after them and after the settle "
            "window: " + "; ".join(f"{engine_title(k)}: {d.log.source or d.log.reason}" for k, d in DIALECTS.items()
                                   if any(e.partition('@')[0] == k for e in self.engines)) + ". "
            "An engine without a counter shows \"not reported\", never 0.",
        ]
        notes += [f"**{engine_title(e)}:** {d.note}" for e in self.engines
                  if (d := _dialect(e)) is not None and d.note]
        notes.append(key_note(self.engines, p["pk_kind"]))
        notes.append("Attribution: an embedded engine runs in the notebook's process, so its CPU holds the Python "
                     "driver's too; a server's driver is measured apart (client CPU). The commit / statement / row "
                     "decomposition therefore uses one rule for both kinds, engine + driver CPU per row (a server's "
                     "engine CPU plus its client CPU); the engine-only figures stay in the cell table.")
        for cluster in self.clusters or [e for e in self.engines if is_cluster(e)]:
            notes.append(f"**{engine_title(cluster)}:** {get_engine(cluster).cluster.topology}. Its engine CPU is the "
                         "sum of its nodes' cgroups (each node's own idle rate subtracted in its per-node figures), "
                         "and each cell's check counts the rows on every node after the settle window.")
        if self.clusters:
            notes.append(f"Clusters on one host: every node and the client share this host's {self.info['cpu_cores']} "
                         "cores, so what a cluster adds over its single node includes contention for them (and the "
                         "kernel's network work, charged to whichever container runs it), not only replication. A "
                         "cluster's log bytes and amplification are its entry node's log only: the other nodes' "
                         "logs (and Group Replication's relay logs) are not read. The commit / statement / row split "
                         "of a cluster puts the group round, every node's flush and the followers' apply into "
                         "\"commit\".")
        io = self.measurements[(self.measurements["metric"] == "io_write_bytes")
                               & (self.measurements["scope"] == "server")]["value"]
        if not io.empty and (io.fillna(0) == 0).all():
            notes.append("The server engines' cgroup I/O write bytes read 0 in every window of this run (the kernel "
                         "charged their writes elsewhere): for them the engine's own log counter is the byte figure.")
        return super().caveats([*notes, *extra])


def _noise_note(beyond_noise) -> str:
    """What a ratio's test said, after the ratio: nothing when beyond noise, else why not."""
    if beyond_noise is None or beyond_noise != beyond_noise:
        return " (untested: fewer than 2 repetitions)"
    return "" if bool(beyond_noise) else " (not beyond noise)"
