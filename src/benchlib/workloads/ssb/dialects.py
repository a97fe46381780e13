"""What the SSB workload says to each engine: the five tables and their storage (ClickHouse's
MergeTree sort keys, partition and column types as ClickHouse's SSB page declares them; PostgreSQL's primary
keys and the date index a DBA would add; DuckDB's plain tables), each engine's own bulk path from
the staged `|`-delimited files (dbgen's .tbl format), the denormalised `lineorder_flat` built by
the engine itself, the date functions its queries use, what can be dropped before a cold run, its
size function per table, and the rows a query read where the engine reports them."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from ...datagen import ssb
from .queries import CLICKHOUSE_DATES, EXTRACT_DATES, DateFunctions

# dbgen calls it `date`, a type name in SQL; SSB kits name it `dwdate`.
TABLE_NAMES = {"lineorder": "lineorder", "customer": "customer", "supplier": "supplier", "part": "part",
               "date": "dwdate"}
FLAT = "lineorder_flat"
DELIMITER = "|"  # dbgen's: SSB's addresses hold commas


def _flat_columns(date: Callable[[str], str]) -> str:
    """lineorder_flat as ClickHouse's SSB page builds it: every line-order column (the two dates as
    dates), and the customer's, supplier's and part's descriptive columns (p_brand1 as p_brand)."""
    lo = [date(f"l.{c.name}") + f" as {c.name}" if c.name in ("lo_orderdate", "lo_commitdate") else f"l.{c.name}"
          for c in ssb.LINEORDER.columns]
    rest = [f"c.{n}" for n in ("c_name", "c_address", "c_city", "c_nation", "c_region", "c_phone", "c_mktsegment")]
    rest += [f"s.{n}" for n in ("s_name", "s_address", "s_city", "s_nation", "s_region", "s_phone")]
    rest += ["p.p_name", "p.p_mfgr", "p.p_category", "p.p_brand1 as p_brand", "p.p_color", "p.p_type", "p.p_size",
             "p.p_container"]
    return ", ".join(lo + rest)


FLAT_JOIN = ("from lineorder l join customer c on c.c_custkey = l.lo_custkey join supplier s on s.s_suppkey = "
             "l.lo_suppkey join part p on p.p_partkey = l.lo_partkey")


@dataclass(frozen=True)
class Dialect:
    structure: str  # "column store" | "row store": which side of the seed's comparison
    layout: str  # one line for the report: how the tables are stored and indexed
    types: Mapping[str, str]
    text_type: Callable[[int], str]
    table_suffix: Callable[[str], str]  # after the column list of CREATE TABLE (engine, sort key)
    dates: DateFunctions
    make_date: Callable[[str], str]  # a yyyymmdd integer as a date
    load_how: str  # the bulk path, one line for the report
    load: Callable[[Any, str, Path, ssb.Table], None]
    flat_prefix: str  # `create table lineorder_flat ... as`
    after_load: tuple[str, ...]  # measured maintenance after the flat table (indexes, statistics, checkpoint)
    size_sql: str  # bytes on disk of {table}
    size_source: str
    cold_sql: tuple[str, ...] = ()  # statements that drop the engine's own caches before a cold run
    cold_note: str = ""  # what a cold run here does not drop
    constraints: Callable[[ssb.Table], str] = lambda table: ""  # inside CREATE TABLE (a primary key)
    rows_read: bool = False  # the engine reports the rows a query read (ClickHouse's statistics)
    # Background operations still running (a MergeTree's merges): waited for after the loads, so
    # that their CPU lands in no query's window.
    background_sql: str | None = None
    session_sql: tuple[str, ...] = ()  # on the querying session, before any query
    # A cold run begins after every connection is closed and the database opened again: the only
    # way to empty an embedded engine's buffer manager.
    reopen_for_cold: bool = False
    settings_sql: str | None = None  # one line of the settings that shape a query here, read at the start
    # Disk per SF for the five tables and lineorder_flat, at the load's peak: a bound for the check
    # before any start (measured at SF 0.1 here, rounded up).
    disk_bytes_per_sf: int = 3_000_000_000
    notes: tuple[str, ...] = ()
    # A column's type by name where it is not the one its kind gives (ClickHouse's SSB page's types).
    column_types: Mapping[str, str] = field(default_factory=dict)
    # Session settings under which each query runs hot once more per repetition, by name (PostgreSQL
    # without JIT compilation), and what restores the start's own settings after them.
    variants: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    variant_reset: tuple[str, ...] = ()

    def column_type(self, column: ssb.Column) -> str:
        if column.name in self.column_types:
            return self.column_types[column.name]
        return self.text_type(column.width) if column.kind == "text" else self.types[column.kind]

    def create(self, session, table: ssb.Table) -> str:
        name = TABLE_NAMES[table.name]
        columns = ", ".join(f"{c.name} {self.column_type(c)} not null" for c in table.columns)
        session.execute(f"create table {name} ({columns}{self.constraints(table)}){self.table_suffix(table.name)}")
        return name

    def build_flat(self, session) -> None:
        session.execute(f"{self.flat_prefix} select {_flat_columns(self.make_date)} {FLAT_JOIN}")

    def size(self, session, table: str) -> float | None:
        value = session.execute(self.size_sql.format(table=table))[0][0]
        return None if value is None else float(value)

    def settings(self, session) -> str:
        return str(session.execute(self.settings_sql)[0][0]) if self.settings_sql else ""

    def background_operations(self, session) -> int:
        return int(session.execute(self.background_sql)[0][0]) if self.background_sql else 0

    def count(self, session, table: str) -> int:
        return int(session.execute(f"select count(*) from {table}")[0][0])

    def run(self, session, statement: str) -> tuple[list[tuple], float | None]:
        """(the answer's rows, rows read where the engine reports it)."""
        return session.execute(statement), None


@dataclass(frozen=True)
class ClickHouseDialect(Dialect):
    def run(self, session, statement: str) -> tuple[list[tuple], float | None]:
        """Through chDB's own query call, whose JSON carries ClickHouse's statistics (rows read)."""
        result = session.raw._conn.query(statement, "JSONCompact")
        if result.has_error():
            raise RuntimeError(result.error_message())
        answer = json.loads(result.bytes() or b"{}")
        return [tuple(r) for r in answer.get("data", [])], float(answer.get("statistics", {}).get("rows_read"))


def _clickhouse_load(session, name: str, path: Path, table: ssb.Table) -> None:
    structure = ", ".join(f"{c.name} {CLICKHOUSE.column_type(c)}" for c in table.columns)
    # Whitespace kept as written: SSB's addresses may begin or end with a blank.
    session.execute(f"insert into {name} select * from file('{path}', 'CSV', '{structure}') settings "
                    f"format_csv_delimiter = '{DELIMITER}', input_format_csv_trim_whitespaces = 0")


_CH_ORDER = {"lineorder": " engine = MergeTree partition by toYear(lo_orderdate) order by (lo_orderdate, lo_orderkey)",
             "customer": " engine = MergeTree order by c_custkey", "supplier": " engine = MergeTree order by s_suppkey",
             "part": " engine = MergeTree order by p_partkey", "date": " engine = MergeTree order by d_datekey"}

# ClickHouse's SSB page's column types (its CREATE TABLE statements): unsigned integers as narrow as
# the values, dates as Date (parsed from dbgen's yyyymmdd), LowCardinality for the strings a query
# groups or filters by.
_LC = "LowCardinality(String)"
CLICKHOUSE_PAGE_TYPES = {
    "lo_orderkey": "UInt32", "lo_linenumber": "UInt8", "lo_custkey": "UInt32", "lo_partkey": "UInt32",
    "lo_suppkey": "UInt32", "lo_orderdate": "Date", "lo_orderpriority": _LC, "lo_shippriority": "UInt8",
    "lo_quantity": "UInt8", "lo_extendedprice": "UInt32", "lo_ordtotalprice": "UInt32", "lo_discount": "UInt8",
    "lo_revenue": "UInt32", "lo_supplycost": "UInt32", "lo_tax": "UInt8", "lo_commitdate": "Date", "lo_shipmode": _LC,
    "c_custkey": "UInt32", "c_name": "String", "c_address": "String", "c_city": _LC, "c_nation": _LC, "c_region": _LC,
    "c_phone": "String", "c_mktsegment": _LC,
    "s_suppkey": "UInt32", "s_name": "String", "s_address": "String", "s_city": _LC, "s_nation": _LC, "s_region": _LC,
    "s_phone": "String",
    "p_partkey": "UInt32", "p_name": "String", "p_mfgr": _LC, "p_category": _LC, "p_brand1": _LC, "p_color": _LC,
    "p_type": _LC, "p_size": "UInt8", "p_container": _LC,
    "d_datekey": "Date", "d_date": "FixedString(18)", "d_dayofweek": _LC, "d_month": _LC, "d_year": "UInt16",
    "d_yearmonthnum": "UInt32", "d_yearmonth": "LowCardinality(FixedString(7))", "d_daynuminweek": "UInt8",
    "d_daynuminmonth": "UInt8", "d_daynuminyear": "UInt16", "d_monthnuminyear": "UInt8", "d_weeknuminyear": "UInt8",
    "d_sellingseason": "String", "d_lastdayinweekfl": "UInt8", "d_lastdayinmonthfl": "UInt8", "d_holidayfl": "UInt8",
    "d_weekdayfl": "UInt8",
}

CLICKHOUSE = ClickHouseDialect(
    structure="column store",
    layout="MergeTree: columns compressed (LZ4) in parts sorted by the table's key, the SSB page's types; lineorder "
           "partitioned by year, lineorder_flat sorted by (order date, order key), as ClickHouse's SSB page "
           "declares them",
    types={"int8": "Int8", "int16": "Int16", "int32": "Int32", "int64": "Int64"}, text_type=lambda width: "String",
    column_types=CLICKHOUSE_PAGE_TYPES, table_suffix=lambda table: _CH_ORDER[table], dates=CLICKHOUSE_DATES,
    make_date=lambda c: c,  # already a Date
    load_how="INSERT ... SELECT from file() (the engine reads the staged file itself)", load=_clickhouse_load,
    flat_prefix=f"create table {FLAT} engine = MergeTree order by (lo_orderdate, lo_orderkey) as",
    # Background merges would go on into the queries' windows for minutes: the queried table is merged
    # to one part per partition (what they converge to), measured as maintenance.
    after_load=(f"optimize table {FLAT} final",),
    size_sql="select sum(bytes_on_disk) from system.parts where active and database = currentDatabase() and "
             "table = '{table}'",
    size_source="system.parts bytes_on_disk (active parts)",
    cold_sql=("system drop mark cache", "system drop uncompressed cache", "system drop page cache",
              "system drop query cache", "system drop query condition cache"),
    rows_read=True, disk_bytes_per_sf=1_500_000_000, background_sql="select count() from system.merges",
    # The query condition cache (ClickHouse 25.3+) lets a repeated filter skip granules an earlier run
    # found empty: the seed's 2022 ClickHouse had none, and rows read would no longer show the sort key.
    session_sql=("set use_query_condition_cache = 0",),
    settings_sql="select 'max_threads=' || toString(getSetting('max_threads')) || ', use_query_condition_cache=' "
                 "|| toString(getSetting('use_query_condition_cache'))",
    notes=("lineorder_flat is merged to one part (OPTIMIZE FINAL) before the queries, in the measured maintenance: "
           "the seed does not say whether its table had finished merging.",))


def _copy_stdin(session, name: str, path: Path, table: ssb.Table) -> None:
    """psql's \\copy: the client streams the file through COPY ... FROM STDIN."""
    cursor = session.raw.cursor()
    with cursor.copy(f"copy {name} from stdin (format csv, delimiter '{DELIMITER}')") as copy, open(path, "rb") as f:
        while block := f.read(1 << 20):
            copy.write(block)
    cursor.close()


def _primary_key(table: ssb.Table) -> str:
    return f", primary key ({', '.join(table.primary_key)})"


POSTGRES = Dialect(
    structure="row store",
    layout="heap tables, a B-tree primary key on each; lineorder_flat with a primary key (order key, line number) "
           "and a B-tree index on lo_orderdate (a DBA's index for date filters; seed 001 partitioned by year instead)",
    types={"int8": "smallint", "int16": "smallint", "int32": "integer", "int64": "bigint"},
    text_type=lambda width: f"varchar({width})", table_suffix=lambda table: "", dates=EXTRACT_DATES,
    make_date=lambda c: f"make_date({c} / 10000, {c} / 100 % 100, {c} % 100)",
    load_how="COPY FROM STDIN (the client streams the staged file, psql's \\copy)", load=_copy_stdin,
    flat_prefix=f"create table {FLAT} as",
    after_load=(f"alter table {FLAT} add primary key (lo_orderkey, lo_linenumber)",
                f"create index {FLAT}_orderdate on {FLAT} (lo_orderdate)", "vacuum analyze", "checkpoint"),
    size_sql="select pg_total_relation_size('{table}')",
    size_source="pg_total_relation_size (heap, indexes, TOAST; after VACUUM ANALYZE)",
    cold_note="shared_buffers keep what the load and earlier queries left: PostgreSQL has no statement that empties "
              "them short of a restart",
    settings_sql="select 'jit=' || current_setting('jit') || ', shared_buffers=' || current_setting('shared_buffers') "
                 "|| ', work_mem=' || current_setting('work_mem') || ', max_parallel_workers_per_gather=' || "
                 "current_setting('max_parallel_workers_per_gather')",
    constraints=_primary_key, disk_bytes_per_sf=4_000_000_000,
    # JIT compilation (on by default) costs a query above jit_above_cost its compile time: each query
    # runs hot once more per repetition without it.
    variants={"jit=off": ("set jit = off",)}, variant_reset=("reset jit",),
    notes=("The extract() predicates cannot use the index on lo_orderdate (seed 001 found the same in AlloyDB and "
           "rewrote Q1.x as date ranges; the text here is the seed's BigQuery adaptation, not that rewrite).",))


def _duckdb_load(session, name: str, path: Path, table: ssb.Table) -> None:
    session.execute(f"copy {name} from '{path}' (delimiter '{DELIMITER}', header false)")


DUCKDB = Dialect(
    structure="column store",
    layout="columnar row groups, compressed; no indexes (zone maps on every column)",
    types={"int8": "tinyint", "int16": "smallint", "int32": "integer", "int64": "bigint"},
    text_type=lambda width: "varchar", table_suffix=lambda table: "", dates=EXTRACT_DATES,
    make_date=lambda c: f"make_date({c} // 10000, {c} // 100 % 100, {c} % 100)",
    load_how="COPY ... FROM the staged file (the engine reads it itself)", load=_duckdb_load,
    flat_prefix=f"create table {FLAT} as", after_load=("checkpoint",),
    size_sql="select count(distinct block_id) * (select block_size from pragma_database_size()) "
             "from pragma_storage_info('{table}') where block_id >= 0",
    size_source="pragma_storage_info: distinct blocks holding the table's segments x block size (after a "
                "CHECKPOINT)",
    reopen_for_cold=True, disk_bytes_per_sf=1_500_000_000,
    settings_sql="select 'threads=' || current_setting('threads') || ', memory_limit=' || current_setting('memory_limit')")

DIALECTS: dict[str, Dialect] = {"chdb": CLICKHOUSE, "postgres": POSTGRES, "duckdb": DUCKDB}


# Wire-compatible engines whose statements here are not theirs (no pg_total_relation_size, VACUUM,
# or checkpoint in CockroachDB; YugabyteDB's sizes are its tablets'): not run rather than measured
# with the wrong size function.
WITHOUT_DIALECT = ("cockroachdb", "yugabytedb", "tidb")


def dialect_for(engine) -> Dialect | None:
    return None if engine.name in WITHOUT_DIALECT else engine.lookup(DIALECTS)
