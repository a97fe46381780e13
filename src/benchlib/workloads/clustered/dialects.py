"""What the clustered-vs-heap workload says to each engine, looked up like the dml dialects
(engine key, unversioned name, the engine it is a variant of, family).

Two parts: the sysbench battery (servers with a sysbench driver) needs the buffer-pool setting,
after-load maintenance and the engine's own read counters; the key-kind part (any SQL engine here)
needs table definitions per key kind and layout, and the engine's own size functions."""
from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

from ...engines import Engine

KEY_KINDS = ("bigint", "uuidv4", "uuidv7", "uuidv1")
INSERT_ORDERS = ("key", "random", "generated")


@dataclass(frozen=True)
class Counter:
    """One of the engine's own cumulative counters, read from a separate session before and after
    a window. `query` returns one number; None means the engine has no such counter (stored as
    NULL with status unsupported, never 0)."""

    metric: str
    unit: str
    source: str
    query: str | None


class Organisation(str, enum.Enum):
    """How a table's rows are stored against its primary key: what the notebook compares. The
    battery's base is the first engine whose rows live in a clustered B-tree (seed 003's MySQL)."""
    HEAP = "heap"  # rows in a heap, the PK a separate index (PostgreSQL)
    CLUSTERED = "clustered"  # rows in the PK's B-tree leaves (InnoDB)
    LSM = "lsm"  # rows in the PK's LSM tree (MyRocks)
    ROWID = "rowid"  # rows in a rowid B-tree (SQLite; WITHOUT ROWID: in the PK's)


@dataclass(frozen=True)
class ClusteredDialect:
    layout: str  # what the primary key organises, in words for the tables ("heap table + PK b-tree" ...)
    organisation: Organisation
    # Battery (None: this engine has no sysbench driver, key-kind part only)
    buffer_setting: Callable[[int], dict[str, Any]] | None = None  # MiB -> server config
    buffer_query: str | None = None  # the buffer size the server actually took, in bytes
    # The engine's page (block) size in bytes: storage bytes read as reads of the engine's own size.
    page_query: str | None = None
    # Bytes of sbtest1 with its indexes, as the engine reports them (data against the memory limit).
    data_query: str | None = None
    # Bytes of sbtest1's primary-key index alone (InnoDB's is the clustered index, which holds the
    # rows): seed 003's covered-PK gap rests on one engine's fitting the pool while the other's does not.
    pk_query: str | None = None
    server_config: Mapping[str, Any] = field(default_factory=dict)  # set in every regime
    # Set in the IO-bound regime only: what makes the buffer pool the engine's only cache, as
    # InnoDB's O_DIRECT does (PostgreSQL otherwise caches in the OS page cache as well).
    io_bound_config: Mapping[str, Any] = field(default_factory=dict)
    # The settings that stop a binary log the server writes by default (binary_log=false): a
    # replication log beside the redo log, synced at every commit (a second fsync and a two-phase
    # commit) that a heap engine's WAL alone does not pay.
    binary_log_off: Mapping[str, Any] = field(default_factory=dict)
    # Dead rows left for a later vacuum the battery neither runs nor waits for (PostgreSQL: autovacuum
    # starts at 50 rows + 20% of the table by default, 400,050 at 2M rows), where InnoDB purges its
    # own in the background during the settle windows: the updates' and deletes' CPU and reads per
    # operation then leave out work only one engine paid.
    defers_dead_rows: bool = False
    after_load: tuple[str, ...] = ()
    # One row over sbtest1 (rows, sum of id, sum of k) read from its indexes alone: a regime that
    # begins from a snapshot checks it found the table as loaded. Not a hash of c and pad: that reads
    # the whole table, which the restoring IO-bound start read from storage (about 2 s per engine at
    # 2M rows, outside every window); a restore that lost or altered rows changes the count or sums.
    fingerprint: str | None = None
    counters: tuple[Counter, ...] = ()
    # (name, query) of server settings the report's sentences rest on, read at each start.
    settings: tuple[tuple[str, str], ...] = ()
    # Other client sessions still open: the battery waits for them to end before reading counters
    # that a backend publishes only as it exits (PostgreSQL's cumulative statistics).
    other_sessions: str | None = None
    # Key-kind part
    key_types: Mapping[str, str] = field(default_factory=dict)  # key kind -> column type of id
    layouts: tuple[str, ...] = ("",)  # table variants: SQLite "" (rowid) and "without rowid"
    table_suffix: Callable[[str], str] = lambda layout: ""
    analyze: Callable[[str], tuple[str, ...]] = lambda table: ()
    # (table bytes, index bytes) of `table` with the engine's own size functions
    sizes: Callable[[str], str] | None = None
    # Run before each key-kind table is created (SQLite: VACUUM, so the file holds only that table
    # and its page count is the table's size).
    before_key_table: tuple[str, ...] = ()
    key_param: Callable[[str, Any], Any] = lambda kind, key: key  # uuid.UUID -> what the driver binds


def _pg_sizes(table: str) -> str:
    return (f"select pg_table_size('{table}'), pg_indexes_size('{table}')")


def _mysql_sizes(table: str) -> str:
    return (f"select data_length, index_length from information_schema.tables "
            f"where table_schema = database() and table_name = '{table}'")


def _status(variable: str) -> str:
    # SHOW works on MySQL and MariaDB alike, with or without performance_schema; the value is the
    # last column (see `scalar`).
    return f"show global status like '{variable}'"


def scalar(rows: list[tuple]) -> float | None:
    """The number in the last column of the first row; None when the engine returned nothing."""
    return None if not rows or rows[0][-1] is None else float(rows[0][-1])


def _uuid_bytes(kind: str, key: Any) -> Any:
    return key.bytes if kind != "bigint" else key


POSTGRES = ClusteredDialect(
    layout="heap table + PK b-tree",
    organisation=Organisation.HEAP,
    defers_dead_rows=True,
    buffer_setting=lambda mb: {"shared_buffers": f"{mb}MB"},
    buffer_query="select setting::bigint * current_setting('block_size')::bigint from pg_settings "
                 "where name = 'shared_buffers'",
    page_query="select current_setting('block_size')::bigint",
    data_query="select pg_total_relation_size('sbtest1')",
    pk_query="select pg_relation_size(indexrelid) from pg_index where indrelid = 'sbtest1'::regclass and indisprimary",
    # PostgreSQL 16+'s developer option: data files read and written with O_DIRECT, so in the IO-bound
    # regime its cache is its shared buffers only, as InnoDB's is its buffer pool (checked on
    # PostgreSQL 17 under the 256 MiB limit: it serves point queries and its storage reads per point
    # query rose from 1.38 to 1.72 pages on a 279 MiB table).
    io_bound_config={"debug_io_direct": "data"},
    # Index-only scans skip the heap only for pages the visibility map marks all-visible: without
    # VACUUM after the load, "covered" queries would still read the heap. Then a checkpoint: every
    # regime's tests begin after one, whether its start loaded the table or began from a snapshot
    # of it (whose recovery ends with one), so each test's first write to a page logs a full-page
    # image alike (full_page_writes), as it does in steady state.
    after_load=("vacuum analyze sbtest1", "checkpoint"),
    # One aggregate per subquery, each an index-only scan (of the primary key, of k_1: VACUUM
    # ANALYZE after the load set the visibility map); together in one query they would scan the table.
    fingerprint="select (select count(*) from sbtest1), (select coalesce(sum(id), 0) from sbtest1), "
                "(select coalesce(sum(k), 0) from sbtest1)",
    counters=(
        Counter("engine_reads", "blocks", "pg_stat_database.blks_read",
                "select blks_read from pg_stat_database where datname = current_database()"),
        Counter("engine_read_bytes", "bytes", "pg_stat_database.blks_read x block_size",
                "select blks_read * current_setting('block_size')::bigint from pg_stat_database "
                "where datname = current_database()"),
        Counter("engine_buffer_hits", "blocks", "pg_stat_database.blks_hit",
                "select blks_hit from pg_stat_database where datname = current_database()"),
    ),
    other_sessions="select count(*) from pg_stat_activity where backend_type = 'client backend' "
                   "and pid <> pg_backend_pid()",
    # debug_io_direct: whether the IO-bound caches are equal; checkpoint_timeout: how long dirty
    # shared buffers can wait after a write test's settle window.
    settings=(("debug_io_direct", "select current_setting('debug_io_direct')"),
              ("checkpoint_timeout", "select current_setting('checkpoint_timeout')")),
    key_types={"bigint": "bigint", "uuidv4": "uuid", "uuidv7": "uuid", "uuidv1": "uuid"},
    analyze=lambda table: (f"vacuum analyze {table}",),
    sizes=_pg_sizes,
)

_INNODB_COUNTERS = (
    Counter("engine_reads", "pages", "Innodb_buffer_pool_reads", _status("Innodb_buffer_pool_reads")),
    Counter("engine_read_bytes", "bytes", "Innodb_data_read", _status("Innodb_data_read")),
    Counter("engine_buffer_hits", "pages", "Innodb_buffer_pool_read_requests",
            _status("Innodb_buffer_pool_read_requests")),
    # Seed 003 suspects the change buffer for InnoDB's insert advantage: secondary-index records merged
    # from it show it was in use (enabled by default in INNODB_METRICS; a server without a change buffer,
    # MariaDB 11, has no such rows: NULL, stored as not reported).
    Counter("change_buffer_merges", "records", "INNODB_METRICS ibuf_merges_insert + ibuf_merges_delete_mark + "
            "ibuf_merges_delete", "select sum(count) from information_schema.innodb_metrics where name in "
            "('ibuf_merges_insert', 'ibuf_merges_delete_mark', 'ibuf_merges_delete')"),
)

MYSQL = ClusteredDialect(
    layout="clustered PK (InnoDB)",
    organisation=Organisation.CLUSTERED,
    buffer_setting=lambda mb: {"innodb_buffer_pool_size": f"{mb}M"},
    buffer_query="select @@innodb_buffer_pool_size",
    page_query="select @@innodb_page_size",
    # InnoDB's own estimate (pages x page size, current after ANALYZE TABLE).
    data_query="select data_length + index_length from information_schema.tables where table_schema = database() "
               "and table_name = 'sbtest1'",
    # InnoDB's data_length is its clustered index (index_length: the secondary ones).
    pk_query="select data_length from information_schema.tables where table_schema = database() "
             "and table_name = 'sbtest1'",
    # MySQL 9 with performance_schema does not start under a 256 MiB memory limit (its tables are
    # allocated up front); off in both regimes so they differ only in buffer pool and limit.
    # MariaDB has it off by default.
    # innodb_log_buffer_size: 16 MiB, seed 003's MySQL 8.0.22 default (8.4+ allocate 64 MiB): MySQL 9's
    # resident memory then leaves the IO-bound memory limit enough to run the battery.
    server_config={"performance_schema": "OFF", "innodb_log_buffer_size": "16M"},
    binary_log_off={"skip_log_bin": None},  # MySQL writes one by default (8.0+); MariaDB does not
    after_load=("analyze table sbtest1",),
    fingerprint="select count(*), coalesce(sum(id), 0), coalesce(sum(k), 0) from sbtest1",  # k_1 holds id too
    counters=_INNODB_COUNTERS,
    # Seed 003's reason for InnoDB's insert advantage; MySQL 8.4+ default to none, MariaDB 11 removed it.
    # The adaptive hash index: on by default in seed 003's MySQL 8.0.22, off from 8.4 (and in MariaDB
    # 10.5+); it can answer a repeated lookup without descending the B-tree, so it bears on cpu/o.
    settings=(("innodb_change_buffering", "select @@innodb_change_buffering"),
              ("innodb_adaptive_hash_index", "select @@innodb_adaptive_hash_index")),
    key_types={"bigint": "bigint", "uuidv4": "binary(16)", "uuidv7": "binary(16)", "uuidv1": "binary(16)"},
    analyze=lambda table: (f"analyze table {table}",),
    sizes=_mysql_sizes,
    key_param=_uuid_bytes,
)

MYROCKS = replace(
    MYSQL,
    layout="clustered PK in an LSM tree (MyRocks)",
    organisation=Organisation.LSM,
    buffer_setting=lambda mb: {"rocksdb_block_cache_size": mb * 2 ** 20},
    buffer_query="select @@rocksdb_block_cache_size",
    page_query=None,  # blocks are compressed and variable: storage reads are shown in KB only
    pk_query=None,  # data_length is RocksDB's estimate of its SST files, not an index held in a pool
    settings=(),  # no change buffer: MyRocks is no InnoDB
    counters=(
        Counter("engine_reads", "blocks", "rocksdb_block_cache_miss", _status("rocksdb_block_cache_miss")),
        Counter("engine_read_bytes", "bytes", "MyRocks counts no bytes read from storage", None),
        Counter("engine_buffer_hits", "blocks", "rocksdb_block_cache_hit", _status("rocksdb_block_cache_hit")),
    ),
)

SQLITE = ClusteredDialect(
    layout="rowid b-tree (rowid) / PK b-tree (without rowid)",
    organisation=Organisation.ROWID,
    key_types={"bigint": "integer", "uuidv4": "blob", "uuidv7": "blob", "uuidv1": "blob"},
    layouts=("rowid", "without rowid"),
    table_suffix=lambda layout: " without rowid" if layout == "without rowid" else "",
    analyze=lambda table: ("analyze",),
    # dbstat is not compiled into every SQLite: the size is the page count of the whole file,
    # which holds only this table (the previous one is dropped and the file vacuumed).
    sizes=lambda table: "select (select page_count from pragma_page_count) * (select page_size from "
                        "pragma_page_size), null",
    before_key_table=("vacuum",),
    key_param=_uuid_bytes,
)

DIALECTS: dict[str, ClusteredDialect] = {
    "postgres": POSTGRES, "mysql": MYSQL, "mariadb-myrocks": MYROCKS, "sqlite": SQLITE,
}


def dialect_for(engine: Engine) -> ClusteredDialect | None:
    return engine.lookup(DIALECTS)
