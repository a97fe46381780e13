"""Seed 003's method (Callaghan, "Sysbench: MySQL vs Postgres for an IO-bound workload"): one
sysbench table, a battery of tests in a fixed order (load; reads before writes; writes; reads
after writes; insert and delete), each one measured window with throughput, the engine's CPU and
the engine's own read counters, in a cached and an IO-bound regime. Then seed 001's question on
the same engine: what key kind and insert order cost per row and per byte.

The battery runs where sysbench has a driver (PostgreSQL and MySQL wire); the key-kind part runs
on every engine with a dialect (SQLite included: rowid and WITHOUT ROWID tables)."""
from __future__ import annotations

import random
import time
import uuid
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ... import cgroups, sysbench
from ...errors import ParameterError
from ...progress import Progress
from ...validation import boolean, choice, engine_selection, non_negative_number, positive_int, require
from .dialects import INSERT_ORDERS, KEY_KINDS, ClusteredDialect, dialect_for, scalar

if TYPE_CHECKING:  # the measurement stack loads pyarrow: not needed to validate parameters
    from ...lifecycle import Instance
    from ...measure import Meter, RunResult

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
PARAMETERS = ("engines", "tests", "regimes", "reads_after_writes", "threads", "range", "test_seconds",
              "warmup_seconds", "table_size", "cached_buffer_pool_mb", "io_bound_buffer_pool_mb",
              "io_bound_memory_limit_mb", "key_kinds", "insert_orders", "key_rows", "max_settle_seconds")
KEY_BATCH = 500  # rows per INSERT statement (each its own transaction) in the key-kind part
KEY_TABLE = "keykind"
# Time-based keys start at a fixed instant so every run inserts the same sequences.
KEY_EPOCH_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
_UUID1_EPOCH_OFFSET = 0x01B21DD213814000  # 100 ns ticks from 1582-10-15 to 1970-01-01


@dataclass(frozen=True)
class ClusteredParams:
    engines: list[str]
    tests: list[str]
    regimes: list[str]
    reads_after_writes: bool
    threads: int
    range: int
    test_seconds: int
    warmup_seconds: int
    table_size: int
    cached_buffer_pool_mb: int
    io_bound_buffer_pool_mb: int
    io_bound_memory_limit_mb: int
    key_kinds: list[str]
    insert_orders: list[str]
    key_rows: int
    max_settle_seconds: float
    skipped: dict[str, str] = field(default_factory=dict)

    def as_record(self) -> dict[str, Any]:
        return asdict(self)

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


def _names(name: str, value: Any, allowed: tuple[str, ...], allow_empty: bool = False) -> list[str]:
    if not isinstance(value, list) or (not value and not allow_empty):
        raise ParameterError(f"{name} must be a {'' if allow_empty else 'non-empty '}list of "
                             f"{', '.join(allowed)}; got {value!r}")
    return list(dict.fromkeys(choice(name, v, allowed) for v in value))


def battery_supported(dialect: ClusteredDialect | None, protocol: str) -> bool:
    return dialect is not None and dialect.buffer_setting is not None and protocol in sysbench.DRIVERS


def supports(engine) -> bool:
    """Engines either part can run: the battery (sysbench's pgsql/mysql drivers and a buffer-size
    setting) or the key kinds (a key-kind dialect)."""
    d = dialect_for(engine)
    return battery_supported(d, engine.client.protocol) or (d is not None and bool(d.key_types))


def validate_parameters(params: dict[str, Any]) -> ClusteredParams:
    """Plain values first, then the engines: nothing starts before every value is known good."""
    require(params, PARAMETERS, "clustered")
    values = dict(
        tests=_names("tests", params["tests"], tuple(TESTS), allow_empty=True),
        regimes=_names("regimes", params["regimes"], REGIMES),
        reads_after_writes=boolean("reads_after_writes", params["reads_after_writes"]),
        threads=positive_int("threads", params["threads"]),
        range=positive_int("range", params["range"]),
        test_seconds=positive_int("test_seconds", params["test_seconds"]),
        warmup_seconds=int(non_negative_number("warmup_seconds", params["warmup_seconds"])),
        table_size=positive_int("table_size", params["table_size"], minimum=10),
        cached_buffer_pool_mb=positive_int("cached_buffer_pool_mb", params["cached_buffer_pool_mb"], minimum=8),
        io_bound_buffer_pool_mb=positive_int("io_bound_buffer_pool_mb", params["io_bound_buffer_pool_mb"], minimum=8),
        io_bound_memory_limit_mb=positive_int("io_bound_memory_limit_mb", params["io_bound_memory_limit_mb"],
                                              minimum=64),
        key_kinds=_names("key_kinds", params["key_kinds"], KEY_KINDS, allow_empty=True),
        insert_orders=_names("insert_orders", params["insert_orders"], INSERT_ORDERS, allow_empty=True),
        key_rows=int(non_negative_number("key_rows", params["key_rows"])),
        max_settle_seconds=non_negative_number("max_settle_seconds", params["max_settle_seconds"]),
    )
    if values["io_bound_buffer_pool_mb"] >= values["io_bound_memory_limit_mb"]:
        raise ParameterError(f"io_bound_buffer_pool_mb={values['io_bound_buffer_pool_mb']} must be below "
                             f"io_bound_memory_limit_mb={values['io_bound_memory_limit_mb']} (the buffer pool lives "
                             "inside the container's memory limit)")
    key_part = values["key_rows"] > 0 and values["key_kinds"] and values["insert_orders"]
    if not values["tests"] and not key_part:
        raise ParameterError("nothing to run: tests is empty and the key-kind part is off (key_rows=0 or no "
                             "key_kinds/insert_orders)")

    def runs_here(engine) -> bool:
        d = dialect_for(engine)
        return (bool(values["tests"]) and battery_supported(d, engine.client.protocol)) or \
            (bool(key_part) and d is not None and bool(d.key_types))

    if values["tests"] and sysbench.available():
        raise ParameterError(sysbench.available())
    runnable, skipped = engine_selection(params["engines"], runs_here,
                                         "the clustered workload (battery: sysbench's pgsql/mysql drivers; key "
                                         "kinds: engines with a key-kind dialect)")
    return ClusteredParams(engines=runnable, skipped=skipped, **values)


# -- the run -----------------------------------------------------------------------------------------
def run_clustered(params: ClusteredParams, *, notebook: str | None = None, store=None) -> RunResult:
    """Per regime and engine: one start with the regime's buffer pool (and memory limit), the
    battery; in the first regime also the key-kind part on the same start. A failed engine or
    step is recorded and the run goes on."""
    from ...lifecycle import start
    from ...measure import Run, RunResult, SettlePolicy

    plan = _plan(params)
    progress = Progress(sum(n for _, _, n in plan), notebook=notebook, desc="clustered", unit="steps")
    settle = SettlePolicy(max_seconds=params.max_settle_seconds)
    with Run(EXPERIMENT, params.as_record(), notebook=notebook, store=store) as run, progress:
        for regime, key, steps in plan:
            done_before = progress.done
            engine_dialect = _dialect(key)
            battery = params.tests and battery_supported(engine_dialect, _protocol(key))
            config = {**engine_dialect.server_config, **engine_dialect.buffer_setting(params.buffer_pool_mb(regime))} \
                if battery else {}
            try:
                with start(key, run_id=run.run_id, config=config,
                           memory_limit_mb=params.memory_limit(regime) if battery else None) as instance:
                    client = cgroups.children_scope() if battery else None
                    # perf only where it counts hardware events: its -a -G cost a sysbench test 4-8% of
                    # its throughput here, for a task-clock the cgroup's own accounting gives.
                    meter = run.meter(instance, 1, settle, labels={"regime": regime}, client=client,
                                      perf_only_for_hardware=True)
                    meter.baseline(1.0)
                    if battery:
                        _battery(run, meter, instance, engine_dialect, params, regime, progress)
                    if regime == params.regimes[0] and params.key_rows:
                        _key_kinds(run, meter, instance, engine_dialect, params, progress)
            except Exception as exc:
                run.record_failure(f"{key} ({regime})", exc)
                progress.skip(steps - (progress.done - done_before))
    return RunResult(run.run_id, params, dict(run.failures))


def _dialect(key: str) -> ClusteredDialect:
    from ...engines import get_engine

    return dialect_for(get_engine(key))


def _protocol(key: str) -> str:
    from ...engines import get_engine

    return get_engine(key).client.protocol


def _plan(params: ClusteredParams) -> list[tuple[str, str, int]]:
    """(regime, engine, steps): the battery in every regime, the key-kind part in the first."""
    plan = []
    for regime in params.regimes:
        for key in params.engines:
            d = _dialect(key)
            steps = 1 + len(params.battery()) if params.tests and battery_supported(d, _protocol(key)) else 0
            if regime == params.regimes[0] and params.key_rows and d.key_types:
                steps += len(params.key_kinds) * len(params.insert_orders) * len(d.layouts)
            if steps:
                plan.append((regime, key, steps))
    return plan


def _battery(run, meter: Meter, instance: Instance, dialect: ClusteredDialect, params: ClusteredParams,
             regime: str, progress: Progress) -> None:
    counters = instance.session()  # its own session: never one of sysbench's
    common = dict(tables=1, table_size=params.table_size)
    lua = sysbench.packaged_test(LUA)
    with progress.step(engine=instance.key, phase=f"{regime} load"):
        with meter.phase("load", labels={"test": "load", "step": "load", "threads": 1}) as readings:
            before = _read_counters(counters, dialect)
            t0 = time.perf_counter()
            sysbench.prepare(instance, tables=1, table_size=params.table_size)
            elapsed = time.perf_counter() - t0
            readings.record("transactions", float(params.table_size), "count", "sysbench prepare (rows)")
            readings.record("tps", params.table_size / elapsed, "1/s", "sysbench prepare (rows / wall)")
            _record_counters(readings, counters, dialect, before)
            readings.record("buffer_pool_bytes", scalar(counters.execute(dialect.buffer_query)), "bytes",
                            dialect.buffer_query, scope="server")
    for statement in dialect.after_load:
        counters.execute(statement)
    for test, step in params.battery():
        name, options, _ = TESTS[test]
        if name == LUA:
            name = lua
        options = {**options, "random_points": params.range} if name == lua else options
        labels = {"test": test, "step": step, "threads": params.threads, "range": params.range}
        with progress.step(engine=instance.key, phase=f"{regime} {step}"):
            try:
                if params.warmup_seconds:
                    # Buffer pool and caches filled as the test itself fills them; recorded nowhere.
                    sysbench.run(instance, name, threads=params.threads, seconds=params.warmup_seconds,
                                 options=options, **common)
                with meter.phase(step, labels=labels, settle=params.max_settle_seconds > 0) as readings:
                    before = _read_counters(counters, dialect)
                    result, _ = sysbench.run(instance, name, threads=params.threads, seconds=params.test_seconds,
                                             options=options, **common)
                    _wait_sessions_closed(counters, dialect)
                    sysbench.record(readings, result)
                    _record_counters(readings, counters, dialect, before)
            except sysbench.SysbenchError as exc:
                run.record_failure(f"{instance.key} ({regime}) {step}", exc)


def _read_counters(session, dialect: ClusteredDialect) -> dict[str, float | None]:
    return {c.metric: scalar(session.execute(c.query)) if c.query else None for c in dialect.counters}


def _record_counters(readings, session, dialect: ClusteredDialect, before: dict[str, float | None]) -> None:
    after = _read_counters(session, dialect)
    for c in dialect.counters:
        b, a = before[c.metric], after[c.metric]
        readings.record(c.metric, None if a is None or b is None else a - b, c.unit, c.source, scope="server",
                        status=None if c.query else "not reported")


def _wait_sessions_closed(session, dialect: ClusteredDialect, timeout: float = 5.0) -> None:
    """PostgreSQL publishes a backend's read counters as the backend exits: wait for sysbench's
    sessions to be gone so the window's reads are all counted."""
    if dialect.other_sessions is None:
        return
    deadline = time.monotonic() + timeout
    while scalar(session.execute(dialect.other_sessions)) and time.monotonic() < deadline:
        time.sleep(0.01)


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


def _key_kinds(run, meter: Meter, instance: Instance, dialect: ClusteredDialect, params: ClusteredParams,
               progress: Progress) -> None:
    session = instance.session()
    if instance.scope.kind == "cgroup":
        meter.client = cgroups.process_scope()  # the Python driver inserting the rows
    lookups = max(100, params.key_rows // 10)
    rng = random.Random(1)
    for layout in dialect.layouts:
        for kind in params.key_kinds:
            for order in params.insert_orders:
                labels = {"key_kind": kind, "order": order, "layout": layout or dialect.layout, "test": "key-kind"}
                # One table name per variant: a driver's cached prepared plan (psycopg prepares
                # statements it sees repeatedly) must never meet a table whose key type changed.
                table = "_".join(x for x in (KEY_TABLE, kind, order, layout.replace(" ", "_")) if x)
                with progress.step(engine=instance.key, phase=f"{kind} {order} {layout}".strip()):
                    try:
                        _one_key_kind(meter, session, dialect, params, table, kind, layout, labels, lookups, rng)
                    except Exception as exc:
                        run.record_failure(f"{instance.key} key kind {kind} {order} {layout}".strip(), exc)
                    finally:
                        session.execute(f"drop table if exists {table}")


def _one_key_kind(meter, session, dialect, params, table, kind, layout, labels, lookups, rng) -> None:
    ph = dialect.placeholder
    order = labels["order"]
    if dialect.placeholder == "?":
        session.execute("vacuum")  # SQLite: the file holds only the new table, so its size is the table's
    session.execute(f"create table {table} (id {dialect.key_types[kind]} not null primary key, k integer not "
                    f"null, c varchar(60) not null){dialect.table_suffix(layout)}")
    session.execute(f"create index {table}_k on {table} (k)")
    keys = [dialect.key_param(kind, k) for k in generate_keys(kind, order, params.key_rows)]
    pad = "x" * 60
    cursor = session.raw.cursor()
    with meter.phase("key-insert", labels=labels, settle=params.max_settle_seconds > 0,
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
    with meter.phase("key-lookup", labels=labels, settle=False) as readings:
        for _ in range(lookups):
            cursor.execute(f"select id, c from {table} where k = {ph}", [rng.randrange(1000)])
            cursor.fetchall()
        readings.record("transactions", float(lookups), "count", "lookups by secondary index")
        size_source = "information_schema.tables / pg_table_size / page_count x page_size (after ANALYZE)"
        readings.record("table_bytes", None if table_bytes is None else float(table_bytes), "bytes", size_source,
                        scope="server")
        readings.record("index_bytes", None if index_bytes is None else float(index_bytes), "bytes", size_source,
                        scope="server")
    cursor.close()
