"""The client-API notebook's tables, figures and narrative, on the shared report layer."""
from __future__ import annotations

import json

import pandas as pd

from ... import results
from ...engines import get_engine
from ...errors import UnknownEngineError
from ...plots import engine_order, engine_title, grouped_bars, stacked_bars
from ...report import RunReport, fmt, fmt_ci
from .dialects import dialect_for
from .workload import CONTENDED, HARNESS, LAYER_NAMES, LOOP_TIME, OPERATIONS, TRANSPORTS, layer_skip_reason

CLIENT_COLOR, SERVER_COLOR, EMBEDDED_COLOR = "#F2A541", "#3B6EA5", "#7A9E7E"
TRANSPORT_COLORS = {"in-process": EMBEDDED_COLOR, "unix": "#4C9F70", "tcp": "#C8553D"}
# Seed 002's "local": the most efficient medium the API has. Ours: Unix socket, else TCP on this host.
LOCAL_ORDER = ("in-process", "unix", "tcp")
# Seed 002 measured ODB: prepared statements through each database's C library. Per engine, the
# first of these layers that ran stands in for it.
SEED_LIKE_LAYERS = ("c_prepared", "prepared", "driver")


class ClientApiReport(RunReport):
    def __init__(self, run_id: str, store=None):
        super().__init__(run_id, store)
        m = self.measurements.copy()
        m["_labels"] = [json.loads(x) if isinstance(x, str) else {} for x in m["labels"]]
        for key in ("layer", "transport", "objects", "mode", "workers"):
            m[key] = [d.get(key) for d in m["_labels"]]
        self.m = m[m["window"] == "phase"].drop(columns="_labels")
        self.per_op = self._per_operation()
        self.summary = self._summarize(self.per_op)
        self.contended = self._contended()

    # -- arithmetic ------------------------------------------------------------------------------
    def _per_operation(self) -> pd.DataFrame:
        """One row per window of the layers' part: µs per operation of wall (the loop's clock),
        of the client process's CPU and of the engine's CPU."""
        m = self.m[self.m["phase"] != CONTENDED]
        keys = ["engine", "repetition", "layer", "transport", "phase", "objects", "seq"]

        def pick(metric: str, scopes: tuple[str, ...]) -> pd.Series:
            rows = m[(m["metric"] == metric) & m["scope"].isin(scopes)]
            return rows.groupby(keys)["value"].sum(min_count=1)

        out = pd.DataFrame({
            "loop_s": pick(LOOP_TIME, ("client",)), "window_s": pick("wall_time", ("server", "embedded")),
            "client_s": pick("cpu_time", ("client",)), "server_s": pick("cpu_time", ("server",)),
            "process_s": pick("cpu_time", ("embedded",)),
        }).reset_index()
        # A window's fixed cost in this process (perf control, cgroup reads) is not an operation's:
        # the empty-operation window of the same engine, repetition and transport measures it (its
        # CPU beyond its loop), and every window of that set has it subtracted.
        fixed = out[out["layer"] == HARNESS].assign(
            fixed_client_s=lambda d: d["client_s"] - d["loop_s"], fixed_process_s=lambda d: d["process_s"] - d["loop_s"])
        out = out.merge(fixed[["engine", "repetition", "transport", "fixed_client_s", "fixed_process_s"]],
                        on=["engine", "repetition", "transport"], how="left")
        layer_rows = out["layer"] != HARNESS
        for col in ("client", "process"):
            out[f"{col}_s"] = out[f"{col}_s"] - out[f"fixed_{col}_s"].fillna(0.0).where(layer_rows, 0.0)
        n = out["objects"].astype(float)
        for col in ("loop", "client", "server", "process"):
            out[f"{col}_us"] = out[f"{col}_s"] / n * 1e6
        # Fixed cost of a window beyond its operations (perf enable/disable, cgroup reads).
        out["window_overhead_ms"] = (out["window_s"] - out["loop_s"]) * 1e3
        embedded = out["transport"] == "in-process"
        # Embedded engines: one process holds Python and the engine, so its CPU is split no further.
        out["client_us"] = out["client_us"].where(~embedded)
        out["server_us"] = out["server_us"].where(~embedded)
        return out

    @staticmethod
    def _summarize(per_op: pd.DataFrame) -> pd.DataFrame:
        keys = ["engine", "layer", "transport", "phase"]
        g = per_op.groupby(keys, sort=False, dropna=False)
        cols = ["loop_us", "client_us", "server_us", "process_us", "window_overhead_ms"]
        out = g[cols].mean()
        out["loop_us_sd"] = g["loop_us"].std(ddof=1)
        out["n"] = g.size()
        out = out.reset_index()
        out["client_share"] = out["client_us"] / (out["client_us"] + out["server_us"])
        return out

    def _contended(self) -> pd.DataFrame:
        m = self.m[self.m["phase"] == CONTENDED]
        if m.empty:
            return pd.DataFrame()
        keys = ["engine", "mode", "transport", "workers", "seq"]
        wide = m.pivot_table(index=keys, columns=["metric", "scope"], values="value", aggfunc="sum")
        wide.columns = [f"{metric}:{scope}" for metric, scope in wide.columns]
        wide = wide.reset_index()
        get = lambda c: wide[c] if c in wide else float("nan")  # noqa: E731
        ops = sum(get(f"{k}:client") for k in ("inserts", "updates", "deletes", "selects"))
        return pd.DataFrame({
            "engine": wide["engine"], "mode": wide["mode"], "transport": wide["transport"],
            "workers": wide["workers"].astype(int),
            "completion_s": get("completion_time:client"), "operations": ops,
            "ops_per_s": ops / get("completion_time:client"), "errors": get("errors:client"),
            "retries": get("retries:client"), "failed": get("failed:client"),
            "engine_cpu_s": get("cpu_time:server").fillna(get("cpu_time:embedded")) if "cpu_time:server" in wide
            else get("cpu_time:embedded"),
            "client_cpu_s": get("cpu_time:client"),
        })

    def _title_rows(self, df: pd.DataFrame) -> pd.DataFrame:
        return df.assign(engine=[engine_title(e) for e in df["engine"]])

    def _ordered(self, df: pd.DataFrame) -> pd.DataFrame:
        order = {e: i for i, e in enumerate(engine_order(self.engines))}
        return df.assign(_e=df["engine"].map(order),
                         _l=df["layer"].map({n: i for i, n in enumerate((HARNESS, *LAYER_NAMES))}),
                         _t=df["transport"].map({t: i for i, t in enumerate(TRANSPORTS)}),
                         _o=df["phase"].map({o: i for i, o in enumerate(OPERATIONS)})
                         ).sort_values(["_e", "_t", "_l", "_o"]).drop(columns=["_e", "_l", "_t", "_o"])

    # -- tables ----------------------------------------------------------------------------------
    def load_table(self, operation: str = "load"):
        """Engine x layer x transport: µs per operation (the loop's clock), client CPU µs and
        server CPU µs per operation, and Python's share of the pair."""
        s = self._ordered(self.summary[(self.summary["phase"] == operation) & (self.summary["layer"] != HARNESS)])
        out = pd.DataFrame({
            "engine": [engine_title(e) for e in s["engine"]], "layer": s["layer"], "transport": s["transport"],
            f"µs per {operation}": s["loop_us"], "± sd": s["loop_us_sd"], "client CPU µs": s["client_us"],
            "server CPU µs": s["server_us"], "in-process CPU µs": s["process_us"].where(s["transport"] == "in-process"),
            "client share": s["client_share"], "n": s["n"],
        })
        num = [c for c in out.columns if c not in ("engine", "layer", "transport", "client share", "n")]
        return (out.style.format("{:.1f}", na_rep="n/a", subset=num).format("{:.0%}", na_rep="n/a",
                                                                             subset=["client share"])
                .hide(axis="index"))

    def operations_table(self):
        """Every operation: µs per operation per engine, transport and layer."""
        s = self._ordered(self.summary[self.summary["layer"] != HARNESS])
        s = self._title_rows(s)
        table = s.pivot_table(index=["engine", "transport", "layer"], columns="phase", values="loop_us", sort=False)
        return table.reindex(columns=[o for o in OPERATIONS if o in table.columns]).style.format("{:.1f}")

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
        c = self._title_rows(c)
        return c.drop(columns=["transport"]).style.format(
            {"completion_s": "{:.2f}", "operations": "{:,.0f}", "ops_per_s": "{:,.0f}", "errors": "{:.0f}",
             "retries": "{:.0f}", "failed": "{:.0f}", "engine_cpu_s": "{:.2f}", "client_cpu_s": "{:.2f}"},
            na_rep="n/a").hide(axis="index")

    def _local_and_tcp(self, layer_of) -> tuple[dict[str, float], dict[str, float], dict[str, str]]:
        """µs per load per engine on its most local transport and over TCP, in the layer
        `layer_of(layers that ran)` picks for it; and that layer."""
        s = self.summary[(self.summary["phase"] == "load") & (self.summary["layer"] != HARNESS)]
        local, tcp, used = {}, {}, {}
        for engine, df in s.groupby("engine"):
            layer = layer_of(set(df["layer"]))
            if layer is None:
                continue
            by_t = df[df["layer"] == layer].set_index("transport")["loop_us"]
            best = next(t for t in LOCAL_ORDER if t in by_t.index)
            local[engine], used[engine] = by_t[best], layer
            tcp[engine] = by_t.get("tcp", float("nan"))  # an embedded engine has no TCP figure
        return local, tcp, used

    def _local_ci(self, engine: str, layer: str) -> float:
        """95% CI half width of µs per load of `engine` in `layer` on its most local transport."""
        s = self.summary[(self.summary["phase"] == "load") & (self.summary["engine"] == engine)
                         & (self.summary["layer"] == layer)].set_index("transport")
        row = s.loc[next(t for t in LOCAL_ORDER if t in s.index)]
        n = int(row["n"])
        return results.ci95_half_width(row["loop_us_sd"], n)

    @staticmethod
    def _seed_like(layers: set[str]) -> str | None:
        return next((layer for layer in SEED_LIKE_LAYERS if layer in layers), None)

    def seed_comparison(self) -> pd.DataFrame:
        """µs per load: seed 002 as published, and this run through the plain driver and through
        the layer nearest seed 002's ODB (prepared statements through a C library), each engine
        on its most local transport and over TCP, with each column's ratio to PostgreSQL."""
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
        for label, layer_of in (("driver", lambda layers: "driver" if "driver" in layers else None),
                                ("ODB-like", self._seed_like)):
            local, tcp, _ = self._local_and_tcp(layer_of)
            merged[f"this run ({label}), local"] = pd.Series(local, dtype=float)
            merged[f"this run ({label}), TCP on this host"] = pd.Series(tcp, dtype=float)
        return _with_ratio_to_postgres(pd.DataFrame(merged), "µs per load")

    def contended_comparison(self) -> pd.DataFrame:
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
                table[f"this run, ops/s ({mode}, {int(df['workers'].iloc[0])} workers)"] = by
        return _with_ratio_to_postgres(pd.DataFrame(table), "operations per second")

    def seed_layers(self) -> str:
        """Which layer stood in for ODB per engine, and what the MySQL family's two drivers cost."""
        _, _, used = self._local_and_tcp(self._seed_like)
        lines = ["ODB-like layer per engine: " + ", ".join(f"{engine_title(e)} `{layer}`" for e, layer in
                                                           sorted(used.items(), key=lambda kv: engine_order(used).index(kv[0])))
                 + " (ODB used prepared statements through each database's C client library; sqlite3 caches "
                   "prepared statements itself)."] if used else []
        s = self.summary[(self.summary["phase"] == "load") & (self.summary["layer"] != HARNESS)]
        for (engine, transport), df in s.groupby(["engine", "transport"], sort=False):
            by = df.set_index("layer")
            if {"driver", "c_driver"} <= set(by.index):
                py, c = by.loc["driver"], by.loc["c_driver"]
                lines.append(f"{engine_title(engine)} ({transport}): PyMySQL (pure Python) {fmt(py.loop_us)} µs per "
                             f"load, {fmt(py.client_us)} µs of client CPU; the C driver {fmt(c.loop_us)} µs, "
                             f"{fmt(c.client_us)} µs of client CPU; server CPU {fmt(py.server_us)} against "
                             f"{fmt(c.server_us)} µs.")
        return "\n".join(f"- {line}" for line in lines) or "- no layer ran"

    # -- figures ---------------------------------------------------------------------------------
    def cpu_figures(self):
        """Per operation: client CPU and server CPU per operation stacked, per engine/transport and
        layer (embedded engines: their one process), the wall time per operation as a marker."""
        figs = []
        base = self._ordered(self.summary[self.summary["layer"] != HARNESS])
        for operation in [o for o in OPERATIONS if o in set(base["phase"])]:
            df = base[base["phase"] == operation]
            df = df.assign(group=[f"{engine_title(e)} · {t}" for e, t in zip(df["engine"], df["transport"])],
                           client=df["client_us"], server=df["server_us"],
                           embedded=df["process_us"].where(df["transport"] == "in-process"))
            figs.append(stacked_bars(
                df, x=["group", "layer"], marker=("loop_us", "wall µs per operation"),
                segments={"client": ("client CPU (Python, driver)", CLIENT_COLOR),
                          "server": ("server CPU (engine cgroup)", SERVER_COLOR),
                          "embedded": ("in-process CPU (Python + engine)", EMBEDDED_COLOR)},
                unit="µs per operation", name=f"client-api-cpu-{operation}",
                title=f"{operation}: CPU per operation, client vs server, by layer (◆ wall time)"))
        return figs

    def transport_figure(self, operation: str = "load"):
        s = self._ordered(self.summary[(self.summary["phase"] == operation) & (self.summary["layer"] != HARNESS)])
        s = s.assign(engine_t=[engine_title(e) for e in s["engine"]])
        return grouped_bars(s, x=["engine_t", "layer"], group="transport", value="loop_us", colors=TRANSPORT_COLORS,
                            unit=f"µs per {operation}", name=f"client-api-transport-{operation}",
                            title=f"{operation}: wall µs per operation by transport (in-process, Unix socket, TCP on "
                                  "this host)")

    # -- narrative -------------------------------------------------------------------------------
    def findings(self) -> str:
        lines = []
        s = self.summary[(self.summary["phase"] == "load") & (self.summary["layer"] != HARNESS)]
        for row in self._ordered(s).itertuples():
            if row.transport == "in-process":
                continue
            lines.append(f"**{engine_title(row.engine)}, {row.layer}, {row.transport}:** a load takes "
                         f"{fmt(row.loop_us)} µs; {fmt(row.client_share * 100, '%', 2)} of its CPU is the Python "
                         f"client ({fmt(row.client_us)} µs) and the rest the server ({fmt(row.server_us)} µs).")
        for engine, df in s.groupby("engine", sort=False):
            by = df.set_index(["layer", "transport"])["loop_us"]
            for transport in dict.fromkeys(df["transport"]):
                if ("driver", transport) in by.index and ("orm_object", transport) in by.index:
                    d, o = by[("driver", transport)], by[("orm_object", transport)]
                    lines.append(f"**{engine_title(engine)} ({transport}):** the ORM with a session per object "
                                 f"loads in {fmt(o)} µs against the raw driver's {fmt(d)} µs: "
                                 f"{fmt(o / d, 'x')} ({fmt(o - d)} µs of SQLAlchemy per load).")
        if not self.contended.empty:
            for row in self.contended.itertuples():
                lines.append(f"**{engine_title(row.engine)}, contended, {row.mode}:** {row.operations:,.0f} operations "
                             f"by {row.workers} workers in {fmt(row.completion_s)} s ({row.ops_per_s:,.0f}/s), "
                             f"{row.errors:.0f} errors, {row.retries:.0f} retries; engine CPU "
                             f"{fmt(row.engine_cpu_s)} s, client CPU {fmt(row.client_cpu_s)} s.")
        return "\n".join(f"- {line}" for line in lines) or "- nothing measured"

    def ordering(self) -> str:
        """Does seed 002's ordering hold here: SQLite < MySQL < PostgreSQL per load, local < remote?
        Judged on the ODB-like layer and on the plain driver."""
        lines = []
        for label, layer_of in (("ODB-like", self._seed_like),
                                ("plain driver", lambda layers: "driver" if "driver" in layers else None)):
            found, _, used = self._local_and_tcp(layer_of)
            local = {e.partition("@")[0]: v for e, v in found.items()}
            mysql_family = "mysql" if "mysql" in local else "mariadb"  # same protocol and drivers
            present = [e for e in ("sqlite", mysql_family, "postgres") if e in local]
            if len(present) < 2:
                continue
            ci = {e: self._local_ci(e, used[e]) for e in present}
            ordered = sorted(present, key=local.get)
            # An order is only an order where neighbours' 95% CIs do not overlap.
            resolved = all(local[a] + ci[a] < local[b] - ci[b] for a, b in zip(ordered, ordered[1:]))
            holds = ordered == present
            chain = " < ".join(engine_title(e) for e in present)
            values = ", ".join(f"{engine_title(e)} {fmt_ci(local[e], ci[e])} µs (`{used[e]}`)" for e in present)
            actual = " < ".join(engine_title(e) for e in ordered)
            verdict = ("is not resolved at this precision (neighbouring 95% CIs overlap)" if not resolved else
                       "holds" if holds else "does not hold")
            lines.append(f"Seed 002's per-load order {chain} {verdict} here, {label} layers, each engine's most "
                         f"local transport: {values}; measured order: {actual}.")
        s = self.summary[(self.summary["phase"] == "load") & (self.summary["layer"] == "driver")]
        local = {e.partition("@")[0] for e in s["engine"]}
        if "mariadb" in local and "mysql" not in local:
            lines.append("MySQL did not run; MariaDB (same wire protocol and driver) stands in for the MySQL family.")
        both = s[s["transport"].isin(["unix", "tcp"])].assign(
            ci=lambda d: [results.ci95_half_width(sd, n) for n, sd in zip(d["n"], d["loop_us_sd"])])
        pairs = both.pivot_table(index="engine", columns="transport", values=["loop_us", "ci"])
        if {"unix", "tcp"} <= set(pairs.columns.get_level_values(1)):
            for engine, row in pairs.iterrows():
                unix, tcp, unix_ci, tcp_ci = (row[("loop_us", "unix")], row[("loop_us", "tcp")],
                                              row[("ci", "unix")], row[("ci", "tcp")])
                # An order is only called where the two 95% CIs do not overlap.
                verdict = ("not resolved at this precision (the 95% CIs overlap)"
                           if not unix + unix_ci < tcp - tcp_ci and not tcp + tcp_ci < unix - unix_ci
                           else "holds" if unix < tcp else "does not hold")
                lines.append(f"{engine_title(engine)}, driver layer: Unix socket {fmt_ci(unix, unix_ci)} µs vs TCP to "
                             f"the container on this host {fmt_ci(tcp, tcp_ci)} µs per load: seed 002's local < remote "
                             f"{verdict} ({fmt((tcp / unix - 1) * 100, '%', 2)} more over TCP).")
        return "\n".join(f"- {line}" for line in lines) or "- nothing to compare"

    def caveats(self, extra=()) -> str:
        notes = [
            "Wall µs per operation comes from the loop's own clock inside each window; a window's fixed cost (perf "
            "enable/disable, cgroup reads) is excluded there and given in the harness table. Client (and in-process) "
            "CPU per operation is the window's CPU minus that fixed cost as the empty-operation window of the same "
            "engine, repetition and transport measured it, divided by the objects in the window; server CPU is the "
            "engine cgroup's over the whole window.",
            "Every operation is its own transaction, committed before the next, except in `orm_batch` (one commit per "
            f"batch of {self.param('orm_batch_size')}). ORM update and erase first load the object into the session "
            "(a SELECT each), as ORM code does; the driver and Core layers write all 23 members back by id.",
            "Client CPU is the whole notebook process (its other threads included); server CPU is the engine's "
            "container cgroup. Both share this host's cores, so a TCP or Unix socket round trip here never leaves "
            "the host (TCP crosses the Docker bridge into the container): seed 002's remote figures crossed gigabit "
            "Ethernet.",
            "No settle window: deferred engine work (purge, autovacuum, checkpoints) after a window is not counted; "
            "costs are gross, and the idle engine's few ms of CPU per second stay in each window. perf runs only "
            "where it counts hardware events (its cgroup monitoring makes every context switch dearer, and a window "
            "here is microseconds per round trip).",
            "psycopg prepares a statement by itself once the same text has run 5 times: the `driver` layer passes "
            "`prepare=False` so that `driver` and `prepared` differ by server-side preparation alone; SQLAlchemy keeps "
            "psycopg's default.",
            "Seed 002 measured ODB, a C++ ORM using prepared statements through each database's C library, on 2012 "
            "hardware: compare ratios (SQLite : MySQL : PostgreSQL), not microseconds, and compare them on the "
            "ODB-like layer (`c_prepared` for the MySQL protocol, `prepared` for PostgreSQL, sqlite3's own cached "
            "statements), since PyMySQL, the MySQL protocol's default driver here, is pure Python.",
            "`c_driver` / `c_prepared`: mysql-connector-python with its C extension (libmysqlclient inside the "
            "wheel; the pure-Python fallback is refused), plain text statements and binary-protocol prepared "
            "statements: COM_STMT_PREPARE once per statement text on the cursor, then, per execution, "
            "COM_STMT_RESET and COM_STMT_EXECUTE, one round trip more than the plain path (which is why "
            "`c_prepared` can be slower than `c_driver` over TCP). Round trips per load: psycopg outside "
            "autocommit sends BEGIN, the SELECT and COMMIT (3); PyMySQL and `c_driver` the SELECT and COMMIT (2); "
            "`c_prepared` 3; SQLite none.",
        ]
        for key in self.engines:
            try:
                dialect = dialect_for(get_engine(key))
            except UnknownEngineError:
                continue
            if dialect is None:
                continue
            skipped = [f"`{layer}` ({layer_skip_reason(key, layer)})" for layer in self.param("layers", [])
                       if layer_skip_reason(key, layer)]
            if skipped:
                notes.append(f"**{engine_title(key)}** skipped layer {', '.join(skipped)}.")
            if dialect.processes_reason and "processes" in self.param("contended_modes", []):
                notes.append(f"**{engine_title(key)}**: contended test not run with processes: "
                             f"{dialect.processes_reason}.")
        notes.append("Contended test: ODB's threads test (odb-tests/common/threads/driver.cxx), whose four counts seed "
                     "002 gives: per iteration a transaction persisting three objects, one loading the first and "
                     "updating it (retried on deadlock), 20 transactions each running a query on an unindexed member "
                     "(a scan of a table that grows by the two objects every iteration leaves) and one erasing the "
                     "first object; the rest is erased in one transaction once every worker is done. ODB's four "
                     "rounds (the last three with pools of 31, 16 and 8 connections for 32 threads) are one round "
                     "here, every worker on its own connection. The raw driver, not ODB's prepared statements, so "
                     "the seed comparison's ratios weigh the drivers too (MySQL's is pure-Python PyMySQL). The "
                     "window opened once every worker was connected (connects and forks "
                     "are outside its wall time and server CPU; a forked worker's CPU is counted whole when it is "
                     f"joined, its connect included), {self.param('contended_workers')} workers at scale "
                     f"{self.param('contended_scale')} of seed 002's counts; with processes the client CPU is the "
                     "forked workers' (counted when they are joined); for embedded engines the engine runs inside "
                     "those workers, so its CPU is in the client column.")
        return super().caveats([*notes, *extra])


def _with_ratio_to_postgres(table: pd.DataFrame, title: str) -> pd.DataFrame:
    """Engines (rows, catalog order) x sources: the figures, then each column over PostgreSQL's:
    ratios are what travel between 2012's hardware and this host."""
    table = table.reindex(engine_order(table.index))
    ratios = table / table.loc["postgres"] if "postgres" in table.index else table * float("nan")
    # The ratio reads as its figure does: for µs more is slower, for operations per second faster.
    out = pd.concat({title: table, f"{title} ÷ PostgreSQL's": ratios}, axis=1)
    out.index = [engine_title(e) for e in out.index]
    return out.round(2)
