"""Seed 001's analytics question: the Star Schema Benchmark on column stores against a row store.

The five SSB tables are generated once per run from a seed (`benchlib.datagen.ssb`) and staged as
`|`-delimited files (dbgen's .tbl format); from them, before the first start, an in-memory DuckDB
(not measured) computes every query's answer: the reference each engine's answers are checked
against (row count and a checksum), ClickBench's rule that a wrong answer does not count.

One start per engine. Its first repetition loads the five tables through the engine's own bulk
path (a measured window each, with its settle window: a MergeTree's merges, say), builds
`lineorder_flat` inside the engine (a measured window), runs the maintenance a DBA would (indexes,
statistics, a checkpoint: measured) and reads each table's bytes on disk; then, per query, one
cold run (the engine's own caches dropped where it has a statement for it, and the host's page
cache dropped, both outside the window) and one hot run. Every later repetition runs each query
hot once more: the hot runs give each query's mean and 95% CI. A dialect's variants (PostgreSQL
without JIT) run each query hot once more per repetition under their session settings. A window's cost is the engine's
CPU (its container's cgroup, or this process for an in-process engine), its wall time is the
client's, and its storage reads (read_bytes of the engine's processes) show whether a cold run
read from storage at all."""
from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...datagen import ssb
from ...run.driver import EngineStart, StartContext, Step, StepContext, Workload
from ...core.errors import ParameterError
from ...run.parameters import (RunParameters, boolean, disk_shortfall, names, number, param, per_engine_settings,
                               positive_int, require_idle_baseline, require_no_warmup)
from .dialects import DELIMITER, FLAT, TABLE_NAMES, dialect_for
from .queries import EXTRACT_DATES, NAMES, Answer, sql

EXPERIMENT = "ssb"
LOAD, BUILD_FLAT, MAINTENANCE, SIZE = "load", "build lineorder_flat", "after-load maintenance", "size"
BACKGROUND = "background work after the loads"
BACKGROUND_LIMIT_S = 300.0  # merges still running after this are said, not waited for
COLD, HOT = "cold", "hot"
FLOOR, FLOOR_QUERY = "floor", "select 1"  # the fixed cost of one query through the engine's path
LOAD_ORDER = ("lineorder", "customer", "supplier", "part", "date")
CSV_BYTES_PER_SF = 700_000_000  # the five staged files at SF 1 (lineorder ~97 bytes per row), rounded up
MAX_SCALE_FACTOR = 1000.0
DROP_PAGE_CACHE = Path("/proc/sys/vm/drop_caches")
ANSWER_CHECK = "answer equals DuckDB's reference (rows and checksum)"


def supports(engine) -> bool:
    return dialect_for(engine) is not None


def page_cache_drop_refusal() -> str | None:
    """Why this process cannot drop the host's page cache (None: it can)."""
    import os

    if not DROP_PAGE_CACHE.exists():
        return f"{DROP_PAGE_CACHE} does not exist here"
    if not os.access(DROP_PAGE_CACHE, os.W_OK):
        return f"{DROP_PAGE_CACHE} is not writable by this user (dropping the page cache needs root)"
    return None


@dataclass(frozen=True, kw_only=True)
class SsbParams(RunParameters):
    WORKLOAD = "ssb"
    scale_factor: float = param(number(0.0, above=True, maximum=MAX_SCALE_FACTOR),
                                "SSB scale factor: ~6,000,000 line orders per 1 (seed 001: 333)")
    seed: int = param(positive_int(minimum=0), "the generator seed: the same seed makes the same tables")
    queries: list[str] = param(names(NAMES), "SSB queries to run, out of Q1.1 .. Q4.3")
    drop_page_cache: bool = param(boolean(), "before each cold run also drop the host page cache (needs root)")
    engine_config: dict = param(per_engine_settings(), "engine key -> server settings for its starts", late=True)

    supports = staticmethod(supports)

    @classmethod
    def check_plain(cls, checked: dict[str, Any], values: dict[str, Any]) -> None:
        require_no_warmup(checked, cls.WORKLOAD, "each start loads its tables in its first repetition, and a "
                          "discarded repetition would discard the loads and the cold runs")
        if not checked["queries"]:
            raise ParameterError(f"queries must name at least one of {', '.join(NAMES)}, got []")
        require_idle_baseline(checked, cls.WORKLOAD)
        if checked["drop_page_cache"] and page_cache_drop_refusal():
            raise ParameterError(f"drop_page_cache=True, but {page_cache_drop_refusal()}; set it to False (cold runs "
                                 "then drop only the engines' own caches, and the report says so)")
        staged = checked["scale_factor"] * CSV_BYTES_PER_SF
        short = disk_shortfall(staged, server=False)
        if short:
            raise ParameterError(f"scale_factor={checked['scale_factor']:g} needs about {staged / 2**30:.1f} GiB for "
                                 f"its staged files but {short[0]} has {short[1] / 2**30:.1f} GiB free")

    @classmethod
    def cannot_run(cls, engine, checked: dict[str, Any]) -> str | None:
        """The engine's tables (the five and lineorder_flat) and the staged files on disk at once."""
        sf = checked["scale_factor"]
        needed = sf * (CSV_BYTES_PER_SF + dialect_for(engine).disk_bytes_per_sf)
        short = disk_shortfall(needed, server=engine.server is not None)
        if short:
            return (f"scale_factor={sf:g} needs about {needed / 2**30:.1f} GiB of disk (staged files and its "
                    f"tables) but {short[0]} has {short[1] / 2**30:.1f} GiB free")
        return None


def _engine(key: str):
    from ...engines import get_engine

    return get_engine(key)


@dataclass
class Staged:
    """The run's generated tables: a file per table, its rows and bytes, and every query's
    reference answer."""

    files: dict[str, Path]
    rows: dict[str, int]
    bytes: dict[str, int]
    reference: dict[str, Answer]


def reference_answers(files: dict[str, Path], queries: list[str]) -> dict[str, Answer]:
    """Each query's answer from an in-memory DuckDB over the staged files (not measured): the
    tables loaded and lineorder_flat built as the DuckDB dialect does it, the queries in the seed's
    BigQuery form."""
    import duckdb

    from ...engines import get_engine
    from ...engines.clients import SqlSession
    from .dialects import DUCKDB

    con = duckdb.connect()
    try:
        for table in LOAD_ORDER:
            schema = ssb.TABLES[table]
            columns = ", ".join(f"'{c.name}': '{'varchar' if c.kind == 'text' else DUCKDB.types[c.kind]}'"
                                for c in schema.columns)
            con.execute(f"create table {TABLE_NAMES[table]} as select * from read_csv('{files[table]}', "
                        f"delim = '{DELIMITER}', header = false, columns = {{{columns}}})")
        DUCKDB.build_flat(SqlSession(con, get_engine("duckdb").client))
        return {q: Answer.of(con.execute(sql(q, EXTRACT_DATES)).fetchall()) for q in queries}
    finally:
        con.close()


class Ssb(Workload):
    experiment = EXPERIMENT
    Params = SsbParams
    desc = "SSB load and queries"
    unit = "steps"
    fresh_start_per_repetition = False

    def starts(self, params: SsbParams) -> list[EngineStart]:
        # perf only where it counts hardware events: its -a -G taxes every context switch of a load.
        return [EngineStart(key, config=params.engine_config.get(key, {}), perf_only_for_hardware=True)
                for key in params.engines]

    def steps(self, params: SsbParams, start: EngineStart, repetition: int) -> list[Step]:
        variants = [Step(f"{q} {HOT} {v}", ("query", (q, HOT, v)), ends_start=False)
                    for v in dialect_for(_engine(start.engine)).variants for q in params.queries]
        hot = [Step(FLOOR, ("floor", None), ends_start=False)]
        hot += [Step(f"{q} {HOT}", ("query", (q, HOT)), ends_start=False) for q in params.queries] + variants
        if repetition != 1:
            return hot
        loads = [Step(f"{LOAD} {TABLE_NAMES[t]}", ("load", t)) for t in LOAD_ORDER]
        build = [Step(BUILD_FLAT, ("flat", None)), Step(MAINTENANCE, ("maintenance", None)),
                 Step(BACKGROUND, ("background", None))]
        # ClickBench's order: each query's cold run, then its hot run.
        queries = [Step(FLOOR, ("floor", None), ends_start=False)]
        queries += [s for q in params.queries for s in (Step(f"{q} {COLD}", ("query", (q, COLD)), ends_start=False),
                                                         Step(f"{q} {HOT}", ("query", (q, HOT)), ends_start=False))]
        return loads + build + queries + variants

    @contextlib.contextmanager
    def shared(self, params: SsbParams, run):
        scale = ssb.Scale(params.scale_factor)
        folder = Path(tempfile.mkdtemp(prefix="benchlib-ssb-"))
        try:
            files, rows, sizes = {}, {}, {}
            for table in LOAD_ORDER:
                files[table] = folder / f"{table}.tbl"
                rows[table] = ssb.write_csv(ssb.generator(table, scale, params.seed).chunks(), files[table],
                                            delimiter=DELIMITER)
                sizes[table] = files[table].stat().st_size
            yield Staged(files, rows, sizes, reference_answers(files, params.queries))
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def prepare(self, ctx: StartContext) -> None:
        ctx.state["dialect"] = dialect_for(ctx.instance.engine)
        _open_sessions(ctx)

    def measure(self, ctx: StepContext, step: Step) -> None:
        what, data = step.data
        if what == "load":
            _load(ctx, data)
        elif what == "flat":
            _build_flat(ctx)
        elif what == "maintenance":
            _maintenance(ctx)
        elif what == "background":
            _background(ctx)
        elif what == "floor":
            _floor(ctx)
        else:
            _query(ctx, *data)


def _open_sessions(ctx: StartContext) -> None:
    """The querying session (with the dialect's session settings) and a side session for counts,
    sizes and cache statements."""
    session = ctx.instance.session()
    for statement in ctx.state["dialect"].session_sql:
        session.execute(statement)
    ctx.state.update(session=session, side=ctx.instance.session())


def _load(ctx: StepContext, table: str) -> None:
    staged: Staged = ctx.shared
    dialect, session, side = ctx.state["dialect"], ctx.state["session"], ctx.state["side"]
    name = dialect.create(session, ssb.TABLES[table])
    ctx.meter.wait_quiet(ctx.params.max_settle_seconds)  # the CREATE's own deferred work stays out of the load
    labels = {"table": name}
    with ctx.phase(f"{LOAD} {name}", labels=labels, check=lambda: dialect.count(side, name),
                   expect=float(staged.rows[table])) as readings:
        dialect.load(session, name, staged.files[table], ssb.TABLES[table])
        readings.record("rows", float(staged.rows[table]), "count", "rows in the staged file")
        readings.record("staged_bytes", float(staged.bytes[table]), "bytes", "the staged file's size")


def _build_flat(ctx: StepContext) -> None:
    staged: Staged = ctx.shared
    dialect, session, side = ctx.state["dialect"], ctx.state["session"], ctx.state["side"]
    rows = staged.rows["lineorder"]
    with ctx.phase(BUILD_FLAT, labels={"table": FLAT}, check=lambda: dialect.count(side, FLAT),
                   expect=float(rows)) as readings:
        dialect.build_flat(session)
        readings.record("rows", float(rows), "count", "line orders joined with customer, supplier and part")


def _maintenance(ctx: StepContext) -> None:
    """The dialect's after-load work (indexes, statistics, a checkpoint), then each table's bytes
    on disk by the engine's own size function, beside its staged file's bytes."""
    staged: Staged = ctx.shared
    dialect, session, side = ctx.state["dialect"], ctx.state["session"], ctx.state["side"]
    # Read on the querying session, where the dialect's session settings apply (ClickHouse's query
    # condition cache is set off there, not on the side session).
    labels = {"statements": "; ".join(dialect.after_load) or "none", "settings": dialect.settings(session)}
    with ctx.phase(MAINTENANCE, labels=labels) as readings:
        for statement in dialect.after_load:
            session.execute(statement)
    for table in (*LOAD_ORDER, FLAT):
        name = TABLE_NAMES.get(table, table)
        # A window per table, no settle: a size is read, not caused; the labels say whose it is.
        with ctx.phase(f"{SIZE} {name}", labels={"table": name}, settle=False) as readings:
            size = dialect.size(side, name)
            readings.record("table_bytes", size, "bytes", dialect.size_source, scope=ctx.engine_scope,
                            status=None if size is not None else "not reported")
            readings.record("rows", float(staged.rows.get(table, staged.rows["lineorder"])), "count",
                            "rows in the staged file" if table in staged.rows else "rows of lineorder")
            if table in staged.bytes:
                readings.record("staged_bytes", float(staged.bytes[table]), "bytes", "the staged file's size")


def _background(ctx: StepContext) -> None:
    """Before the first query: the engine's background operations after the loads (a MergeTree's
    merges of the loaded parts) run to their end in a window of their own, then the engine goes
    quiet, so that none of that work lands in a query's window (queries have no settle window: a
    read leaves no deferred work)."""
    dialect, side = ctx.state["dialect"], ctx.state["side"]
    if dialect.background_sql:
        with ctx.phase(BACKGROUND, labels={"source": dialect.background_sql}, settle=False) as readings:
            t0 = time.perf_counter()
            while (running := dialect.background_operations(side)) and time.perf_counter() - t0 < BACKGROUND_LIMIT_S:
                time.sleep(0.1)
            readings.record("background_operations_left", float(running), "count", dialect.background_sql,
                            scope=ctx.engine_scope)
    ctx.meter.wait_quiet(ctx.params.max_settle_seconds)


def _drop_caches(ctx: StepContext) -> str:
    """Before a cold run, outside its window: the engine's own caches (its statements), then the
    host's page cache (every engine's files, this one's included). Returns what was dropped."""
    dialect, side = ctx.state["dialect"], ctx.state["side"]
    for statement in dialect.cold_sql:
        side.execute(statement)
    dropped = [f"engine caches ({'; '.join(dialect.cold_sql)})"] if dialect.cold_sql else []
    if dialect.reopen_for_cold:
        ctx.instance.close_sessions()  # the last connection closed: the database and its buffer manager with it
        _open_sessions(ctx)
        dropped.append("the database closed and opened again (its buffer manager emptied)")
    if ctx.params.drop_page_cache:
        import os

        os.sync()  # dirty pages cannot be dropped: written first
        DROP_PAGE_CACHE.write_text("1")
        dropped.append("host page cache")
    return ", ".join(dropped) or "nothing"


def _floor(ctx: StepContext) -> None:
    """`select 1` through the same path as the queries: the time and CPU under every query's."""
    dialect, session = ctx.state["dialect"], ctx.state["session"]
    with ctx.phase(FLOOR, labels={"query": FLOOR_QUERY, "run": FLOOR}, settle=False) as readings:
        rows, _ = dialect.run(session, FLOOR_QUERY)
        readings.record("result_rows", float(len(rows)), "count", "rows of the answer")


def _query(ctx: StepContext, query: str, run: str, variant: str | None = None) -> None:
    """One run of a query; under a `variant`, its session settings are set before the window and
    the start's own restored after it."""
    if variant is None:
        _run_query(ctx, query, run, None)
        return
    dialect, session = ctx.state["dialect"], ctx.state["session"]
    for statement in dialect.variants[variant]:
        session.execute(statement)
    try:
        _run_query(ctx, query, run, variant)
    finally:
        for statement in dialect.variant_reset:
            session.execute(statement)


def _run_query(ctx: StepContext, query: str, run: str, variant: str | None) -> None:
    staged: Staged = ctx.shared
    dropped = _drop_caches(ctx) if run == COLD else None
    dialect, session = ctx.state["dialect"], ctx.state["session"]  # after the drop: it may open new sessions
    statement = sql(query, dialect.dates)
    answer: list[Answer] = []
    expected = staged.reference[query]
    labels = {"query": query, "run": run, **({"dropped": dropped} if dropped else {}),
              **({"variant": variant} if variant else {})}
    phase = " ".join(filter(None, (query, run, variant)))  # a variant's run is a window of its own
    with ctx.phase(phase, labels=labels, check=lambda: float(answer[0] == expected) if answer else 0.0,
                   expect=1.0, check_name=ANSWER_CHECK, settle=False) as readings:
        rows, rows_read = dialect.run(session, statement)
        answer.append(Answer.of(rows))
        readings.record("result_rows", float(len(rows)), "count", "rows of the answer")
        # Rows equal as a set is the check; their order (ORDER BY) is recorded beside it.
        readings.record("answer_order_matches", float(answer[0].ordered == expected.ordered), "bool",
                        "the answer's rows in the order returned, against the reference's")
        readings.record("rows_read", rows_read, "count", "ClickHouse's query statistics (rows_read)"
                        if dialect.rows_read else "the engine does not report it", scope=ctx.engine_scope,
                        status=None if dialect.rows_read else "not reported")


WORKLOAD = Ssb()
validate_parameters = WORKLOAD.validate_parameters
PARAMETERS = SsbParams.declared()
run = WORKLOAD.run
