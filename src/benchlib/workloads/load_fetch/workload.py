"""Seed 001, "Performance Benchmarking Various Databases": one table of SSB line orders, three
questions. How long does each engine take to load it through its own bulk path (and does primary-
key order matter: seed 001 saw MySQL load ~6x faster in PK order)? What does inserting one new row
cost? What does fetching all line orders of one customer cost? B-tree engines against LSM engines.

Per regime and engine, one start. Its first repetition loads the table once per load order (and
bulk path variant), each into a table of its own: first the one the operations use (primary-key
order, the engine's own path), into a data directory nothing else has written to, then the others.
Each load is one measured window with its
settle window (flushes, compactions, purge after the statement returned), then a window of the
after-load maintenance the size functions need (ANALYZE, VACUUM, a checkpoint) with the bytes on
disk as readings. Every repetition then measures, on the first table: `inserts` single-row inserts
in key order (new orders after the last key), `inserts` more in random order (new orders in the
gaps dbgen's sparse keys leave between loaded ones) and `fetches` fetches of one random customer's
line orders, each operation timed at the client. The statements are in `dialects`; the rows come
from `benchlib.datagen.ssb`, staged as CSV files once per run before the first start."""
from __future__ import annotations

import contextlib
import re
import shutil
import tempfile
import time
from collections import Counter as Tally
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...datagen import ssb
from ...run.driver import EngineStart, StartContext, Step, StepContext, Workload
from ...core.errors import ParameterError
from ...run.parameters import (RunParameters, boolean, disk_shortfall, names, param, positive_int,
                               require_idle_baseline, require_no_warmup, require_pool_within_memory)
from .dialects import NOT_REPORTED, TABLE, Staged, dialect_for, read_counters

EXPERIMENT = "load_fetch"
REGIMES = ("cached", "memory-limited")
GENERATE, LOAD, AFTER_LOAD = "generate", "load", "after-load maintenance"
INSERT = {"key": "insert in key order", "random": "insert in random order"}
FETCH = "fetch by customer"
OPERATIONS = (INSERT["key"], INSERT["random"], FETCH)
# The staged CSV files take ~93 bytes per line order each (a bound, checked before anything runs).
CSV_BYTES_PER_ROW = 100
GAP_SEQUENCE = 1  # dbgen's refresh sequence whose key gaps the random-order inserts fill


def supports(engine) -> bool:
    """Engines with a dialect: a bulk path, one-row inserts and a fetch by customer."""
    return dialect_for(engine) is not None


@dataclass(frozen=True, kw_only=True)
class LoadFetchParams(RunParameters):
    WORKLOAD = "load_fetch"
    rows: int = param(positive_int(minimum=1000), "line orders (SSB lineorder rows); seed 001 loaded 44 M (44,951,022 by its published rates)")
    seed: int = param(positive_int(minimum=0), "the generator's seed: the same seed makes the same table")
    load_orders: list[str] = param(names(ssb.ORDERS), "key (rows in primary-key order) and/or random (shuffled)")
    variant_loads: bool = param(boolean(), "also each engine's other bulk paths (MyRocks' bulk-load mode)")
    regimes: list[str] = param(names(REGIMES), "cached; memory-limited (servers: small buffer pool, container limit)")
    inserts: int = param(positive_int(), "single-row inserts per repetition, in key order and again in random order")
    fetches: int = param(positive_int(), "fetches of one random customer's line orders per repetition")
    cached_buffer_pool_mb: int = param(positive_int(minimum=8), "servers' buffer pool or block cache, cached regime")
    limited_buffer_pool_mb: int = param(positive_int(minimum=8), "the same, memory-limited regime")
    limited_memory_mb: int = param(positive_int(minimum=128), "container memory limit, memory-limited regime")

    supports = staticmethod(supports)

    @classmethod
    def check_plain(cls, checked: dict[str, Any], values: dict[str, Any]) -> None:
        require_no_warmup(checked, cls.WORKLOAD, "each start loads its table once, in its first repetition, and a "
                          "discarded repetition would discard the load")
        require_pool_within_memory(checked, "limited_buffer_pool_mb", "limited_memory_mb")
        orders = ssb.Scale.from_lineorders(checked["rows"]).orders
        gaps = checked["inserts"] * checked["max_repetitions"]
        if gaps > orders:
            raise ParameterError(f"inserts x max_repetitions = {gaps:,} must be at most the table's {orders:,} orders: "
                                 "random-order inserts each take a key gap between loaded orders")
        require_idle_baseline(checked, cls.WORKLOAD)
        staged = checked["rows"] * CSV_BYTES_PER_ROW * len(checked["load_orders"])
        short = disk_shortfall(staged, server=False)
        if short:
            raise ParameterError(f"rows={checked['rows']:,} needs about {staged / 2**30:.1f} GiB for its staged CSV "
                                 f"files but {short[0]} has {short[1] / 2**30:.1f} GiB free")

    @classmethod
    def cannot_run(cls, engine, checked: dict[str, Any]) -> str | None:
        """An embedded engine runs only in the cached regime (the memory-limited one limits a
        container); an engine start needs the staged files and all its loaded tables on disk at
        once, at the engine's own bytes per row seen here."""
        if engine.server is None and "cached" not in checked["regimes"]:
            return (f"it runs in this process: regimes {checked['regimes']!r} give it nothing to run (the "
                    "memory-limited regime limits a container; add 'cached')")
        dialect = dialect_for(engine)
        tables = len(checked["load_orders"]) * (len(dialect.methods) if checked["variant_loads"] else 1)
        rows = checked["rows"]
        needed = rows * (CSV_BYTES_PER_ROW * len(checked["load_orders"]) + dialect.disk_bytes_per_row * tables)
        short = disk_shortfall(needed, server=engine.server is not None)
        if short:
            return (f"rows={rows:,} needs about {needed / 2**30:.1f} GiB of disk ({tables} loaded table(s) at "
                    f"~{dialect.disk_bytes_per_row} bytes per row and the staged CSV files) but {short[0]} has "
                    f"{short[1] / 2**30:.1f} GiB free")
        return None

    def loads(self, engine) -> list[tuple[str, Any, bool]]:
        """(order, method, main) of each load of a start: first the main one (primary-key order
        where asked, the engine's own bulk path), whose table the inserts and fetches use, into a
        data directory nothing else has written to yet; then the others, each into its own table."""
        methods = dialect_for(engine).methods
        methods = methods if self.variant_loads else methods[:1]
        main = ("key" if "key" in self.load_orders else self.load_orders[0], methods[0])
        others = [(o, m) for m in methods for o in self.load_orders if (o, m) != main]
        return [(*main, True)] + [(o, m, False) for o, m in others]


def _engine(key: str):
    from ...engines import get_engine

    return get_engine(key)


@dataclass
class Shared:
    """One run's generated table: the generator, its CSV files per order, and the facts its
    checks need (rows per customer)."""

    generator: ssb.LineOrder
    staged: dict[str, Staged]
    staging: dict[str, tuple[float, int]]  # order -> (seconds to generate and write, bytes)
    rows_per_customer: np.ndarray
    customers_with_rows: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.customers_with_rows = np.nonzero(self.rows_per_customer)[0]


class LoadFetch(Workload):
    experiment = EXPERIMENT
    Params = LoadFetchParams
    desc = "load, insert, fetch"
    unit = "steps"
    fresh_start_per_repetition = False
    precision_per = "operations"

    def starts(self, params: LoadFetchParams) -> list[EngineStart]:
        starts = []
        for regime in params.regimes:
            limited = regime == "memory-limited"
            for key in params.engines:
                engine = _engine(key)
                if engine.server is None and limited:
                    continue
                dialect = dialect_for(engine)
                config = {**dialect.server_config, **dialect.buffer_setting(
                    engine, params.limited_buffer_pool_mb if limited else params.cached_buffer_pool_mb)} \
                    if engine.server is not None else {}
                # perf only where it counts hardware events: its -a -G taxes every context switch of a load.
                starts.append(EngineStart(key, config=config, memory_limit_mb=params.limited_memory_mb if limited
                                          else None, labels={"regime": regime}, perf_only_for_hardware=True))
        return starts

    def _generator_start(self, params: LoadFetchParams) -> tuple[str, dict]:
        """The start that measures the generator: the first server's (its window then holds the
        generator alone in the client scope), else the first start's."""
        starts = self.starts(params)
        first = next((s for s in starts if _engine(s.engine).server is not None), starts[0])
        return first.engine, dict(first.labels)

    def steps(self, params: LoadFetchParams, start: EngineStart, repetition: int) -> list[Step]:
        after_loads = repetition == 1  # the first operation waits for the loads' deferred work to end
        operations = [Step(INSERT["key"], ("insert", ("key", after_loads)), ends_start=False),
                      Step(INSERT["random"], ("insert", ("random", False)), ends_start=False),
                      Step(FETCH, ("fetch", None), ends_start=False)]
        if repetition != 1:
            return operations
        first = [Step(GENERATE, ("generate", None), ends_start=False)] \
            if (start.engine, dict(start.labels)) == self._generator_start(params) else []
        loads = [Step(f"{LOAD} {order} order, {method.name}", ("load", (order, method, main)), ends_start=main)
                 for order, method, main in params.loads(_engine(start.engine))]
        return first + loads + operations

    @contextlib.contextmanager
    def shared(self, params: LoadFetchParams, run):
        generator = ssb.LineOrder(ssb.Scale.from_lineorders(params.rows), params.seed)
        folder = Path(tempfile.mkdtemp(prefix="benchlib-lineorder-"))
        try:
            staged, staging = {}, {}
            for order in params.load_orders:
                path = folder / f"lineorder-{order}.csv"
                t0 = time.perf_counter()
                ssb.write_csv(generator.chunks(order), path)
                staging[order] = (time.perf_counter() - t0, path.stat().st_size)
                staged[order] = Staged(path, order, generator)
            yield Shared(generator, staged, staging, generator.rows_per_customer())
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def prepare(self, ctx: StartContext) -> None:
        dialect = dialect_for(ctx.instance.engine)
        handle = dialect.open(ctx.instance)
        ctx.state.update(dialect=dialect, handle=handle, counters=dialect.counters(ctx.instance.engine),
                         inserted=Tally(), next_order={"key": 0, "random": 0})

    def measure(self, ctx: StepContext, step: Step) -> None:
        what, data = step.data
        if what == "generate":
            _generate(ctx)
        elif what == "load":
            _load(ctx, *data)
        elif what == "insert":
            _insert(ctx, *data)
        else:
            _fetch(ctx)


# -- peak memory of this process ------------------------------------------------------------------
class PeakRss:
    """This process's resident-memory peak over a stretch, from the kernel's high-water mark
    (VmHWM, reset by writing 5 to /proc/self/clear_refs): where the reset is refused, the peak
    since the process started is all there is, and it is not reported as the window's."""

    def __init__(self) -> None:
        try:
            Path("/proc/self/clear_refs").write_text("5")
            self.reset = True
        except OSError:
            self.reset = False
        self.start = _status_kb("VmRSS")

    def record(self, readings, scope: str) -> None:
        peak = _status_kb("VmHWM")
        ok = self.reset and peak is not None and self.start is not None
        readings.record("process_peak_rss_growth_bytes", (peak - self.start) * 1024.0 if ok else None, "bytes",
                        "/proc/self/status VmHWM (reset at the window's start) - VmRSS then", scope=scope,
                        status=None if ok else "unsupported")


def _status_kb(field_name: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field_name + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cpu_seconds() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# -- steps ---------------------------------------------------------------------------------------------
def generator_scales(rows: int) -> tuple[int, int]:
    """Two scales ten times apart for the generator's memory: both several chunks long (a chunk is
    ~65,000 rows), so the smaller one already holds the steady state; the run's own scale is one of
    them."""
    floor = 6 * 4 * ssb.ORDERS_PER_CHUNK  # ~6 chunks of line orders
    return (rows // 10, rows) if rows // 10 >= floor else (max(rows, floor), 10 * max(rows, floor))


def _generate(ctx: StepContext) -> None:
    """The generator alone: at two scales ten times apart (rows per second, its CPU, and this
    process's peak memory, which must not grow with the row count), and the run's table in each
    load order."""
    shared: Shared = ctx.shared
    params = ctx.params
    small, large = generator_scales(params.rows)
    scaled = {n: (shared.generator if n == params.rows else ssb.LineOrder(ssb.Scale.from_lineorders(n), params.seed))
              for n in (small, large)}
    next(shared.generator.chunks("key"))  # one chunk first: lazily built tables stay out of the first window
    runs = [(scaled[small], "key"), (scaled[large], "key")]
    runs += [(shared.generator, o) for o in params.load_orders if (shared.generator, o) not in runs]
    for generator, order in runs:
        labels = {"order": order, "scale_rows": generator.row_count}
        with ctx.phase(GENERATE, labels=labels, settle=False) as readings:
            peak, cpu0 = PeakRss(), _cpu_seconds()
            rows = sum(len(chunk) for chunk in generator.chunks(order))
            readings.record("generator_cpu_time", _cpu_seconds() - cpu0, "s", "getrusage of this process")
            readings.record("rows", float(rows), "count", "generator")
            peak.record(readings, "client")
            if generator is shared.generator:
                seconds, size = shared.staging[order]
                readings.record("staging_wall_time", seconds, "s", "clock: generate and write the CSV file, before "
                                "the first start")
                readings.record("staged_bytes", float(size), "bytes", "CSV file size")


def _table_name(order: str, method, main: bool) -> str:
    return TABLE.name if main else f"{TABLE.name}_{order}_{re.sub(r'[^a-z0-9]+', '_', method.name.lower()).strip('_')}"


def disk_bytes(path: Path) -> float | None:
    """Bytes allocated on disk under `path` (files' blocks, as du counts them); None if absent."""
    if not path.exists():
        return None
    total = 0
    for item in [path, *path.rglob("*")]:
        try:
            st = item.lstat()
        except OSError:  # removed while walking (a flushed log, a compacted file)
            continue
        total += st.st_blocks * 512
    return float(total)


def _load(ctx: StepContext, order: str, method, main: bool) -> None:
    shared: Shared = ctx.shared
    params, dialect, h = ctx.params, ctx.state["dialect"], ctx.state["handle"]
    table = _table_name(order, method, main)
    dialect.create(h, table)
    folder = ctx.instance.host_path(dialect.datadir(h))
    before = disk_bytes(folder)
    # Outside every window, before the quiet wait: the database's size before this table's rows.
    sizes_before = dialect.sizes(h, table) if getattr(dialect, "sizes_whole_database", False) else (0.0, 0.0)
    ctx.meter.wait_quiet(params.max_settle_seconds)  # the CREATE's own deferred work stays out of the load
    rows = shared.generator.row_count
    labels = {"order": order, "method": method.name, "table": table, "main": main}
    with ctx.phase(LOAD, labels=labels, check=lambda: dialect.count(h, table), expect=float(rows)) as readings:
        peak = PeakRss()
        dialect.bulk_load(h, method, shared.staged[order], table)
        readings.record("operations", float(rows), "count", "rows in the staged table")
        peak.record(readings, "client" if ctx.instance.engine.server else ctx.engine_scope)
    with ctx.phase(AFTER_LOAD, labels=labels, settle=False) as readings:
        table_bytes, index_bytes = (None if now is None or ahead is None else now - ahead
                                    for now, ahead in zip(dialect.sizes(h, table), sizes_before))
        after = disk_bytes(folder)
        for metric, value in (("table_bytes", table_bytes), ("index_bytes", index_bytes)):
            readings.record(metric, value, "bytes", dialect.sizes_source, scope=ctx.engine_scope,
                            status=None if value is not None else NOT_REPORTED)
        growth = None if before is None or after is None else after - before
        if dialect.structure == "LSM":
            memtable = dialect.memtable_bytes(h, folder)
            readings.record("memtable_bytes", memtable, "bytes", "the engine's write_buffer_size (one memtable), read "
                            "after the load", scope=ctx.engine_scope,
                            status=None if memtable is not None else NOT_REPORTED)
        readings.record("datadir_growth_bytes", growth, "bytes", f"allocated bytes under {folder.name or folder} "
                        "(the engine's data directory, read from this host) after the load minus before",
                        scope=ctx.engine_scope)
        readings.record("operations", float(rows), "count", "rows in the table")
    if main:
        ctx.state["table"] = table


def _new_rows(ctx: StepContext, order: str, n: int) -> list[tuple]:
    """n new line orders (line 1 of n new orders): after the last loaded key, or in the gaps
    between loaded keys at places spread over the whole table (a seeded permutation)."""
    generator: ssb.LineOrder = ctx.shared.generator
    done = ctx.state["next_order"][order]
    ctx.state["next_order"][order] = done + n
    positions = np.arange(done, done + n, dtype=np.int64)
    if order == "key":
        chunk = generator.new_orders(generator.units + 1 + positions, 0)
    else:
        chunk = generator.new_orders(generator.streams.permute("inserts", positions, generator.units) + 1,
                                     GAP_SEQUENCE)
    first = chunk.columns["lo_linenumber"] == 1
    chunk = ssb.Chunk(chunk.table, {k: v[first] for k, v in chunk.columns.items()})
    return list(chunk.rows())


def _latencies(readings, seconds: np.ndarray) -> None:
    ms = seconds * 1000.0
    readings.record("latency_mean", float(ms.mean()), "ms", "client clock per operation")
    for q in (50, 95, 99):
        readings.record(f"latency_p{q}", float(np.percentile(ms, q)), "ms", "client clock per operation")


def _record_counters(ctx: StepContext, readings, before: dict[str, float | None]) -> None:
    counters, h = ctx.state["counters"], ctx.state["handle"]
    after = read_counters(h.side, counters)
    for c in counters:
        b, a = before[c.metric], after[c.metric]
        readings.record(c.metric, None if a is None or b is None else a - b, c.unit, c.source, scope=ctx.engine_scope,
                        status=None if c.query else NOT_REPORTED)
    if not counters:
        readings.record("engine_reads", None, "count", "the engine's own read counter", scope=ctx.engine_scope,
                        status=NOT_REPORTED)


def _insert(ctx: StepContext, order: str, after_loads: bool) -> None:
    dialect, h, table = ctx.state["dialect"], ctx.state["handle"], ctx.state["table"]
    n = ctx.params.inserts
    if after_loads:
        ctx.meter.wait_quiet(ctx.params.max_settle_seconds)
    rows = _new_rows(ctx, order, n)
    keys = [r[0] for r in rows]
    statement, cursor = dialect.insert_statement(h, table), dialect.cursor(h)
    seconds = np.empty(n)
    before = read_counters(h.side, ctx.state["counters"])
    done: list[tuple] = []
    with ctx.phase(INSERT[order], labels={"order": order, "table": table}, settle=False,
                   check=lambda: dialect.count_orders(h, table, keys), expect=float(n)) as readings:
        clock = time.perf_counter
        for i, row in enumerate(rows):
            t0 = clock()
            dialect.insert_one(h, cursor, statement, row)
            seconds[i] = clock() - t0
            done.append(row)
        dialect.after_window(h)
        readings.record("operations", float(n), "count", "single-row inserts (autocommit)")
        _latencies(readings, seconds)
        _record_counters(ctx, readings, before)
    ctx.state["inserted"].update(r[2] for r in done)


def _fetch(ctx: StepContext) -> None:
    """`fetches` random customers that have line orders (drawn afresh each repetition, the same
    ones in every engine), all their line orders each; the rows returned are checked against the
    generator's count plus the rows this start inserted."""
    shared: Shared = ctx.shared
    dialect, h, table = ctx.state["dialect"], ctx.state["handle"], ctx.state["table"]
    n = ctx.params.fetches
    picks = shared.generator.streams.uniform(f"fetch/{ctx.repetition}", np.arange(n), 0,
                                             len(shared.customers_with_rows) - 1)
    customers = shared.customers_with_rows[picks].tolist()
    inserted = ctx.state["inserted"]
    expected = float(sum(int(shared.rows_per_customer[c]) + inserted[c] for c in customers))
    statement, cursor = dialect.fetch_statement(h, table), dialect.cursor(h)
    seconds = np.empty(n)
    fetched = [0]
    plan = dialect.plan(h, table, customers[0])  # the access path the engine chose, read before the window
    before = read_counters(h.side, ctx.state["counters"])
    with ctx.phase(FETCH, labels={"table": table, **({"plan": plan} if plan else {})}, settle=False,
                   check=lambda: float(fetched[0]),
                   expect=expected) as readings:
        clock = time.perf_counter
        total = 0
        for i, custkey in enumerate(customers):
            t0 = clock()
            total += dialect.fetch(h, cursor, statement, custkey)
            seconds[i] = clock() - t0
        fetched[0] = total
        dialect.after_window(h)
        readings.record("operations", float(n), "count", "fetches of one customer's line orders")
        readings.record("rows", float(total), "count", "line orders returned")
        _latencies(readings, seconds)
        _record_counters(ctx, readings, before)


WORKLOAD = LoadFetch()
validate_parameters = WORKLOAD.validate_parameters
PARAMETERS = LoadFetchParams.declared()
run = WORKLOAD.run
