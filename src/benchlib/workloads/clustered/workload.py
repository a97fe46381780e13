"""Seed 003's method (Callaghan, "Sysbench: MySQL vs Postgres for an IO-bound workload"): one
sysbench table, a battery of tests in a fixed order (load; reads before writes; writes; reads
after writes; insert and delete), each one measured window with throughput, the engine's CPU and
the engine's own read counters, in a cached and an IO-bound regime. Then seed 001's question on
the same engine: what key kind and insert order cost per row and per byte.

The battery runs where sysbench has a driver (PostgreSQL and MySQL wire); the key-kind part runs
on every engine with a dialect (SQLite included: rowid and WITHOUT ROWID tables).

The table is loaded once per engine: the first regime's start loads it (measured), and a snapshot
of its data directory taken right after the load, before any test, is where every later regime's
start begins (checked: the same row count and sums of id and k). Each regime's battery therefore
starts from the same freshly loaded table, as when each regime loaded its own."""
from __future__ import annotations

import random
import time
import uuid
from dataclasses import dataclass
from typing import Any

from ...run import sysbench
from ...run.driver import CHILDREN_CLIENT, EngineStart, PerOperation, StartContext, Step, StepContext, Workload
from ...core.errors import ParameterError
from ...run.parameters import (RunParameters, boolean, names, one_of, param, positive_int, require_pool_within_memory,
                               whole_seconds)
from .dialects import INSERT_ORDERS, KEY_KINDS, ClusteredDialect, dialect_for, scalar

EXPERIMENT = "clustered"
LUA = "clustered.lua"
# Test -> (sysbench test, options, group). Groups run in seed 003's order; "read" tests run before
# the writes (named `<test>.pre`, as in the seed's spreadsheet) and, with reads_after_writes, after.
TESTS: dict[str, tuple[str, dict[str, Any], str]] = {
    "points-covered-pk": (LUA, {"shape": "points", "covered": "on"}, "read"),
    "points-notcovered-pk": (LUA, {"shape": "points", "covered": "off"}, "read"),
    "range-covered-pk": (LUA, {"shape": "range", "covered": "on"}, "read"),
    "range-notcovered-pk": (LUA, {"shape": "range", "covered": "off"}, "read"),
    "update-inlist": (LUA, {"shape": "update_inlist"}, "write"),
    "update-nonindex": ("oltp_update_non_index", {}, "write"),
    "insert": ("oltp_insert", {}, "insert"),
    "delete": ("oltp_delete", {}, "insert"),
}
REGIMES = ("cached", "io-bound")
KEY_BATCH = 500  # rows per INSERT statement (each its own transaction) in the key-kind part
KEY_TABLE = "keykind"
# Time-based keys start at a fixed instant so every run inserts the same sequences.
KEY_EPOCH_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
_UUID1_EPOCH_OFFSET = 0x01B21DD213814000  # 100 ns ticks from 1582-10-15 to 1970-01-01


def battery_supported(dialect: ClusteredDialect | None, protocol: str) -> bool:
    return dialect is not None and dialect.buffer_setting is not None and protocol in sysbench.DRIVERS


def supports(engine) -> bool:
    """Engines either part can run: the battery (sysbench's pgsql/mysql drivers and a buffer-size
    setting) or the key kinds (a key-kind dialect)."""
    d = dialect_for(engine)
    return battery_supported(d, engine.client.protocol) or (d is not None and bool(d.key_types))


@dataclass(frozen=True, kw_only=True)
class ClusteredParams(RunParameters):
    WORKLOAD = "clustered"
    tests: list[str] = param(names(TESTS, empty_ok=True), "the battery's tests (clustered.TESTS)")
    regimes: list[str] = param(names(REGIMES), "cached and/or io-bound")
    reads_after_writes: bool = param(boolean(), "seed 003 runs the read tests again after the writes")
    threads: int = param(positive_int(), "sysbench threads")
    range: int = param(positive_int(), "ids per IN list / rows per range")
    test_seconds: int = param(positive_int(), "seconds per test")
    warmup_seconds: int = param(whole_seconds(), "per test, before its window, not recorded")
    table_size: int = param(positive_int(minimum=10), "rows of sbtest1")
    cached_buffer_pool_mb: int = param(positive_int(minimum=8), "buffer pool in the cached regime")
    io_bound_buffer_pool_mb: int = param(positive_int(minimum=8), "buffer pool in the IO-bound regime")
    io_bound_memory_limit_mb: int = param(positive_int(minimum=64), "container memory limit, IO-bound regime")
    key_kinds: list[str] = param(names(KEY_KINDS, empty_ok=True), "key kinds of the key-kind part")
    insert_orders: list[str] = param(names(INSERT_ORDERS, empty_ok=True), "insert orders of the key-kind part")
    key_rows: int = param(whole_seconds(), "rows per key-kind table; 0 skips the key-kind part")
    rand_type: str = param(one_of(sysbench.RAND_TYPES), "sysbench's access distribution (seed 004: uniform)")
    binary_log: bool = param(boolean(), "false: servers that write a binary log by default (MySQL) run without one")

    @classmethod
    def check_plain(cls, checked: dict[str, Any], values: dict[str, Any]) -> None:
        if checked["warmup"]:
            raise ParameterError("warmup must be false in the clustered workload: a discarded repetition would "
                                 "reload the table the battery measures; warmup_seconds warms each test instead")
        require_pool_within_memory(checked, "io_bound_buffer_pool_mb", "io_bound_memory_limit_mb")
        key_part = _key_part(checked)
        if not checked["tests"] and not key_part:
            raise ParameterError("nothing to run: tests is empty and the key-kind part is off (key_rows=0 or no "
                                 "key_kinds/insert_orders)")
        if checked["tests"] and sysbench.unavailable_reason():
            raise ParameterError(sysbench.unavailable_reason())

    @classmethod
    def runs_engine(cls, engine, checked: dict[str, Any]) -> bool:
        key_part = _key_part(checked)
        d = dialect_for(engine)
        return (bool(checked["tests"]) and battery_supported(d, engine.client.protocol)) or \
            (key_part and d is not None and bool(d.key_types))

    def battery(self) -> list[tuple[str, str]]:
        """(test, step name) in seed 003's order."""
        groups = {g: [t for t in TESTS if t in self.tests and TESTS[t][2] == g] for g in ("read", "write", "insert")}
        steps = [(t, f"{t}.pre") for t in groups["read"]] + [(t, t) for t in groups["write"]]
        if self.reads_after_writes:
            steps += [(t, t) for t in groups["read"]]
        return steps + [(t, t) for t in groups["insert"]]

    def memory_limit(self, regime: str) -> int | None:
        return self.io_bound_memory_limit_mb if regime == "io-bound" else None

    def buffer_pool_mb(self, regime: str) -> int:
        return self.io_bound_buffer_pool_mb if regime == "io-bound" else self.cached_buffer_pool_mb


def _key_part(values: dict[str, Any]) -> bool:
    return bool(values["key_rows"] > 0 and values["key_kinds"] and values["insert_orders"])


def _engine(key: str):
    from ...engines import get_engine

    return get_engine(key)


def _loaded_table(key: str) -> str:
    """The name of the snapshot of `key`'s freshly loaded table, taken by its first regime's start."""
    return f"sbtest1 loaded on {key}"


def _can_snapshot(engine) -> bool:
    server = engine.server
    return server is not None and server.data_dir is not None and server.password_statements is not None


class Clustered(Workload):
    """Per regime and engine: one start with the regime's buffer pool (and memory limit), the
    battery; in the first regime also the load (snapshotted for the later regimes, which begin
    from it) and the key-kind part on the same start. A failed test is recorded and the battery
    goes on."""

    experiment = EXPERIMENT
    Params = ClusteredParams
    fresh_start_per_repetition = False
    # Each test's repetitions back to back, in seed 003's order: every repetition of a read test
    # before the writes meets the loaded table (repetition-major, its second repetition met the
    # first one's updates, inserts and deletes: PostgreSQL's index-only scans then visit the heap
    # for every page an update cleared in the visibility map).
    repeat_each_step = True
    precision_per = "transactions"
    per_operation = PerOperation("reading", "transactions", "transaction")


    def starts(self, params: ClusteredParams) -> list[EngineStart]:
        starts = []
        for regime in params.regimes:
            for key in params.engines:
                engine = _engine(key)
                d = dialect_for(engine)
                battery = bool(params.tests) and battery_supported(d, engine.client.protocol)
                keys = regime == params.regimes[0] and _key_part(params.as_record()) and bool(d.key_types)
                if not (battery or keys):
                    continue
                # The regime's buffer pool and memory limit bound the key-kind part too (a set of key kinds
                # alone sizes its tables against them: seed 001's effect needs an index beyond the pool).
                tuned = d.buffer_setting is not None
                config = {**d.server_config, **({} if params.binary_log else d.binary_log_off),
                          **d.buffer_setting(params.buffer_pool_mb(regime)),
                          **(d.io_bound_config if regime == "io-bound" else {})} if tuned else {}
                # One load per engine: later regimes begin from a snapshot of the first one's.
                reuse = battery and len(params.regimes) > 1 and _can_snapshot(engine) and d.fingerprint is not None
                first = regime == params.regimes[0]
                # perf only where it counts hardware events: its -a -G cost a sysbench test 4-8% of
                # its throughput here, for a task-clock the cgroup's own accounting gives.
                starts.append(EngineStart(key, config=config, memory_limit_mb=params.memory_limit(regime) if tuned
                                          else None, labels={"regime": regime},
                                          client=CHILDREN_CLIENT if battery else None, perf_only_for_hardware=True,
                                          data_volume=reuse and first,
                                          restore=_loaded_table(key) if reuse and not first else None))
        return starts

    def steps(self, params: ClusteredParams, start: EngineStart, repetition: int) -> list[Step]:
        engine = _engine(start.engine)
        d = dialect_for(engine)
        steps: list[Step] = []
        if params.tests and battery_supported(d, engine.client.protocol):
            if repetition == 1 and start.restore is None:
                steps.append(Step("load", ("load", None)))
            if repetition == 1 and start.data_volume:
                # Its failure leaves this regime's table as it was: only the later regimes lose it.
                steps.append(Step("snapshot", ("snapshot", None), ends_start=False))
            steps += [Step(name, ("test", (test, name)), survives=(sysbench.SysbenchError,))
                      for test, name in params.battery()]
        # The key-kind part in every repetition, as the battery: its figures are means over them.
        if start.labels["regime"] == params.regimes[0] and _key_part(params.as_record()) and d.key_types:
            steps += [Step(f"{kind} {order} {layout}".strip(), ("key kind", (kind, order, layout)), ends_start=False)
                      for layout in d.layouts for kind in params.key_kinds for order in params.insert_orders]
        return steps

    def prepare(self, ctx: StartContext) -> None:
        ctx.state.update(dialect=dialect_for(ctx.instance.engine),
                         counters=ctx.instance.session())  # its own session: never one of sysbench's
        ctx.state["settings"] = read_settings(ctx.state["counters"], ctx.state["dialect"])
        if ctx.restored is not None:
            _check_restored(ctx)

    def measure(self, ctx: StepContext, step: Step) -> None:
        what, data = step.data
        if what == "load":
            _load(ctx)
        elif what == "snapshot":
            _snapshot(ctx)
        elif what == "test":
            _battery_test(ctx, *data)
        else:
            _key_kind(ctx, *data)


def _load(ctx: StepContext) -> None:
    params, dialect, counters = ctx.params, ctx.state["dialect"], ctx.state["counters"]
    with ctx.phase("load", labels={"test": "load", "step": "load", "threads": 1}) as readings:
        before = _read_counters(counters, dialect)
        t0 = time.perf_counter()
        sysbench.prepare(ctx.instance, tables=1, table_size=params.table_size, rand_type=params.rand_type, check=False)
        elapsed = time.perf_counter() - t0
        readings.record("transactions", float(params.table_size), "count", "sysbench prepare (rows)")
        readings.record("tps", params.table_size / elapsed, "1/s", "sysbench prepare (rows / wall)")
        _record_counters(readings, counters, dialect, before)
        _record_sizes(readings, counters, dialect)
    # Counted after the window: a count(*) over the table must not be charged to the load.
    sysbench.check_loaded(ctx.instance, tables=1, table_size=params.table_size)
    if dialect.after_load:
        # The engine's own maintenance of the loaded table (VACUUM ANALYZE and a checkpoint, ANALYZE
        # TABLE): its own window, outside the load's figures and the battery's.
        with ctx.phase("after-load", labels={"test": "after-load"}) as readings:
            for statement in dialect.after_load:
                counters.execute(statement)
            readings.record("transactions", float(len(dialect.after_load)), "count", "; ".join(dialect.after_load))


def _fingerprint(ctx: StartContext) -> list[str]:
    """Rows and sums of id and k over sbtest1, from its indexes (the dialect's fingerprint)."""
    return [str(v) for v in ctx.state["counters"].execute(ctx.state["dialect"].fingerprint)[0]]


def _snapshot(ctx: StepContext) -> None:
    """The loaded table as every later regime begins with it: snapshotted before any test."""
    fingerprint = _fingerprint(ctx)
    snapshot = ctx.snapshot_data(_loaded_table(ctx.start.engine), fingerprint=fingerprint)
    ctx.run.note(f"{ctx.start.name}: the loaded table ({int(fingerprint[0]):,} rows) snapshotted for the later regimes "
                 f"in {snapshot.seconds:.1f} s, the server frozen meanwhile (outside every window)"
                 + (f"; {snapshot.left_out} files it never reads back left out of the copy (recycled WAL segments)"
                    if snapshot.left_out else "") + ".")


def _check_restored(ctx: StartContext) -> None:
    from ...containers.lifecycle import DataSnapshotError

    expected, found = ctx.restored.facts["fingerprint"], _fingerprint(ctx)
    if found != expected:
        raise DataSnapshotError(
            f"{ctx.start.name}: the restored sbtest1 is not the table the first regime loaded (rows, sum of id, sum of "
            f"k: {found} against {expected}): nothing is measured on it")
    ctx.run.note(f"{ctx.start.name}: began from the first regime's snapshot of the loaded table ({int(found[0]):,} "
                 "rows; row count and sums of id and k checked equal).")


def read_settings(session, dialect: ClusteredDialect) -> str:
    """The server settings the report's sentences rest on, as this start's server has them
    ("name=value, ..."); a setting the server does not have is said so, never assumed."""
    found = []
    for name, query in dialect.settings:
        try:
            rows = session.execute(query)
            found.append(f"{name}={rows[0][-1] if rows and rows[0][-1] is not None else 'unset'}")
        except Exception as exc:  # a setting this server version removed (MariaDB 11: the change buffer)
            if hasattr(session, "rollback"):
                session.rollback()
            found.append(f"{name}=not a setting of this server ({type(exc).__name__})")
    return ", ".join(found)


def warms_up(params: ClusteredParams, step: str) -> bool:
    """A warm-up window before the first test of each group of reads (before the writes, and
    after them) in the first repetition: there the caches hold other work's pages (the load's, or
    none after a restore; the writes'). Every other test's repetitions run right after another
    test's windows of the same uniform accesses over the same rows, in caches they filled."""
    seen: set[bool] = set()
    for test, name in params.battery():
        if TESTS[test][2] != "read":
            continue
        group = name.endswith(".pre")
        if group not in seen:
            seen.add(group)
            if name == step:
                return True
    return False


def _battery_test(ctx: StepContext, test: str, step: str) -> None:
    params, dialect, counters = ctx.params, ctx.state["dialect"], ctx.state["counters"]
    name, options, group = TESTS[test]
    if name == LUA:
        name = sysbench.packaged_test(LUA)
        options = {**options, "random_points": params.range}
    common = dict(tables=1, table_size=params.table_size, rand_type=params.rand_type)
    labels = {"test": test, "step": step, "threads": params.threads, "range": params.range,
              **({"settings": ctx.state["settings"]} if ctx.state.get("settings") else {})}
    # A read leaves no deferred work (no page it dirtied): no settle window after it. A write's
    # settle window charges its own purge and flushing to it before the next test begins.
    settle = group != "read"
    if params.warmup_seconds and ctx.repetition == 1 and warms_up(params, step):
        # Caches filled as the test itself fills them before its read group's first window. Stored as a
        # warm-up window: measured, outside every figure, so its time is not lost to the harness.
        with ctx.phase(step, labels=labels, settle=False, warmup=True) as readings:
            result, _ = sysbench.run(ctx.instance, name, threads=params.threads, seconds=params.warmup_seconds,
                                     options=options, **common)
            sysbench.record(readings, result)
    before = _read_counters(counters, dialect)
    with sysbench.started(ctx.instance, name, threads=params.threads, seconds=params.test_seconds, options=options,
                          **common) as running, \
            ctx.phase(step, labels=labels, settle=settle, client=running.client) as readings:
        result, _ = running.finish()
        _wait_sessions_closed(counters, dialect)
        _wait_exited_reaped(ctx.instance.scope)
        sysbench.record(readings, result)
        _record_counters(readings, counters, dialect, before)
        # Per window: a start that began from a snapshot has no load window to say it.
        _record_sizes(readings, counters, dialect)


def _record_sizes(readings, counters, dialect: ClusteredDialect) -> None:
    """The buffer pool, page size and table size the engine reports (what storage reads and the
    memory limit are judged against)."""
    for metric, query in (("buffer_pool_bytes", dialect.buffer_query), ("page_bytes", dialect.page_query),
                          ("data_bytes", dialect.data_query), ("pk_index_bytes", dialect.pk_query)):
        readings.record(metric, scalar(counters.execute(query)) if query else None, "bytes",
                        query or "not reported by this engine", scope="server",
                        status=None if query else "not reported")


def _read_counters(session, dialect: ClusteredDialect) -> dict[str, float | None]:
    return {c.metric: scalar(session.execute(c.query)) if c.query else None for c in dialect.counters}


def _record_counters(readings, session, dialect: ClusteredDialect, before: dict[str, float | None]) -> None:
    after = _read_counters(session, dialect)
    for c in dialect.counters:
        b, a = before[c.metric], after[c.metric]
        readings.record(c.metric, None if a is None or b is None else a - b, c.unit, c.source, scope="server",
                        status=None if a is not None and b is not None else "not reported")


def _wait_sessions_closed(session, dialect: ClusteredDialect, timeout: float = 5.0) -> None:
    """PostgreSQL publishes a backend's read counters as the backend exits: wait for sysbench's
    sessions to be gone so the window's reads are all counted."""
    if dialect.other_sessions is None:
        return
    deadline = time.monotonic() + timeout
    while scalar(session.execute(dialect.other_sessions)) and time.monotonic() < deadline:
        time.sleep(0.01)


def _wait_exited_reaped(scope, timeout: float = 5.0) -> None:
    """A PostgreSQL backend that served sysbench exits at its end; what it read from storage moves
    to the postmaster's /proc/<pid>/io only when the postmaster reaps it: until then the window's
    storage reads would miss the backend's."""
    deadline = time.monotonic() + timeout
    while (scope.unreaped() or 0) and time.monotonic() < deadline:
        time.sleep(0.005)


# -- key kind and insert order (seed 001) ------------------------------------------------------------
def uuid7(ms: int, rng: random.Random) -> uuid.UUID:
    """RFC 9562 UUIDv7: 48-bit Unix milliseconds, version 7, variant 10, random bits."""
    value = (ms & (2 ** 48 - 1)) << 80 | 0x7 << 76 | rng.getrandbits(12) << 64 | 0b10 << 62 | rng.getrandbits(62)
    return uuid.UUID(int=value)


def generate_keys(kind: str, order: str, n: int, seed: int = 3) -> list[Any]:
    """n distinct keys of `kind` in insert `order`: "generated" (as a client producing them one by
    one would: time order for v1/v7, random for v4), "key" (sorted as the engine compares them:
    bytes) or "random" (shuffled)."""
    rng = random.Random(seed)
    if kind == "bigint":
        keys: list[Any] = list(range(1, n + 1))
    elif kind == "uuidv4":
        keys = [uuid.UUID(int=rng.getrandbits(128), version=4) for _ in range(n)]
    elif kind == "uuidv7":
        keys = [uuid7(KEY_EPOCH_MS + i // 50, rng) for i in range(n)]  # ~50 keys per millisecond
    else:  # uuidv1 as MySQL's UUID() lays it out: time_low first, so a fast stream is nearly ascending
        start = KEY_EPOCH_MS * 10_000 + _UUID1_EPOCH_OFFSET
        node = rng.getrandbits(48)
        keys = [uuid.UUID(fields=((start + i) & 0xFFFFFFFF, ((start + i) >> 32) & 0xFFFF,
                                  0x1000 | ((start + i) >> 48) & 0x0FFF, 0x80, 0, node)) for i in range(n)]
    if order == "key":
        keys.sort()
    elif order == "random":
        rng.shuffle(keys)
    return keys


KEY_LOOKUP_ROWS = 200_000  # rows all lookups of one key-kind table fetch together, at most


def key_lookups(key_rows: int) -> int:
    """Lookups by the secondary index k (1,000 distinct values, so each fetches key_rows / 1,000
    rows): a tenth of the rows in lookups, but no more than KEY_LOOKUP_ROWS rows fetched in all,
    so a table beyond the buffer pool is not read a hundred times over; at least 100."""
    return max(100, min(key_rows // 10, KEY_LOOKUP_ROWS // max(1, key_rows // 1000)))


def _key_kind(ctx: StepContext, kind: str, order: str, layout: str) -> None:
    dialect = ctx.state["dialect"]
    # A session of its own, closed after the variant: one left open would count as another client in
    # every later sysbench window (PostgreSQL's wait for sysbench's sessions to end would run out).
    session = ctx.instance.session()
    labels = {"key_kind": kind, "order": order, "layout": layout or dialect.layout, "test": "key-kind"}
    # One table name per variant: a driver's cached prepared plan (psycopg prepares statements it
    # sees repeatedly) must never meet a table whose key type changed.
    table = "_".join(x for x in (KEY_TABLE, kind, order, layout.replace(" ", "_")) if x)
    lookups = key_lookups(ctx.params.key_rows)
    try:
        _one_key_kind(ctx, session, dialect, table, kind, layout, labels, lookups, random.Random(1))
    finally:
        session.execute(f"drop table if exists {table}")
        session.close()


def _one_key_kind(ctx: StepContext, session, dialect, table, kind, layout, labels, lookups, rng) -> None:
    params = ctx.params
    ph = session.placeholder
    for statement in dialect.before_key_table:
        session.execute(statement)
    session.execute(f"create table {table} (id {dialect.key_types[kind]} not null primary key, k integer not "
                    f"null, c varchar(60) not null){dialect.table_suffix(layout)}")
    session.execute(f"create index {table}_k on {table} (k)")
    keys = [dialect.key_param(kind, k) for k in generate_keys(kind, labels["order"], params.key_rows)]
    pad = "x" * 60
    cursor = session.cursor()
    driver = ctx.driver_client  # the Python driver inserting the rows
    with ctx.phase("key-insert", labels=labels, client=driver,
                   check=lambda: scalar(session.execute(f"select count(*) from {table}")),
                   expect=float(params.key_rows)) as readings:
        for lo in range(0, len(keys), KEY_BATCH):
            batch = keys[lo:lo + KEY_BATCH]
            values = ", ".join([f"({ph}, {ph}, {ph})"] * len(batch))
            flat = [v for i, key in enumerate(batch, lo) for v in (key, i % 1000, pad)]
            cursor.execute(f"insert into {table} (id, k, c) values {values}", flat)
        readings.record("transactions", float(len(keys)), "count", "rows inserted")
    for statement in dialect.analyze(table):
        session.execute(statement)
    table_bytes, index_bytes = session.execute(dialect.sizes(table))[0]
    with ctx.phase("key-lookup", labels=labels, settle=False, client=driver) as readings:
        for _ in range(lookups):
            cursor.execute(f"select id, c from {table} where k = {ph}", [rng.randrange(1000)])
            cursor.fetchall()
        readings.record("transactions", float(lookups), "count", "lookups by secondary index")
        size_source = "information_schema.tables / pg_table_size / page_count x page_size (after ANALYZE)"
        readings.record("table_bytes", None if table_bytes is None else float(table_bytes), "bytes", size_source,
                        scope=ctx.engine_scope)
        readings.record("index_bytes", None if index_bytes is None else float(index_bytes), "bytes", size_source,
                        scope=ctx.engine_scope)
    cursor.close()


WORKLOAD = Clustered()
validate_parameters = WORKLOAD.validate_parameters
PARAMETERS = ClusteredParams.declared()
run = WORKLOAD.run
