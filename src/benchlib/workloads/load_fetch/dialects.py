"""What the load-insert-fetch workload says to each engine: the line-order table (its primary key
(lo_orderkey, lo_linenumber) and a secondary index on lo_custkey), each engine's own bulk paths,
one-row inserts, a fetch of one customer's line orders, the engine's own size functions and read
counters, and where it keeps its files.

Three kinds of dialect, looked up like every workload's (engine key, unversioned name, the engine
it is a variant of, family): SQL over DB-API (PostgreSQL, the MySQL family, SQLite, DuckDB), the
MongoDB wire protocol (FerretDB: documents, `_id` the primary key) and a key-value store (RocksDB:
the table and its index as two column families). Every dialect offers the same operations on a
`Handle` (the sessions of one engine start)."""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from ...datagen import ssb
from ...engines import Engine
from ..clustered.dialects import Counter, dialect_for as clustered_dialect, scalar

TABLE = ssb.LINEORDER
NOT_REPORTED = "not reported"
STRUCTURES = ("B-tree", "LSM", "columnar")


def index_name(name: str, table: str) -> str:
    """Index names are per schema in PostgreSQL, SQLite and DuckDB: each table's its own."""
    return name.replace(TABLE.name, table, 1)


@dataclass(frozen=True)
class Method:
    """One bulk path. `sorted_only`: it needs rows in primary-key order (an SST ingest)."""

    name: str
    how: str  # one line for the report: what the client sends and the engine does
    reads_file: bool = True  # the staged CSV file; False: rows handed over by the generator in this process
    session_sql: tuple[str, ...] = ()  # set on the loading session before the load (MyRocks' bulk mode)
    unsorted_sql: tuple[str, ...] = ()  # ... and when rows arrive shuffled
    after_sql: tuple[str, ...] = ()  # after the load, still inside its window (ends the bulk mode)
    bulk_mode: bool = False  # the engine's bulk-load mode: the load an answer states where it ran


@dataclass
class Handle:
    """The sessions a dialect uses on one engine start: `work` runs the measured operations,
    `side` everything read around them (counters, counts, sizes), never inside a window's work."""

    instance: Any
    work: Any
    side: Any
    state: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Staged:
    """What one load reads: the staged CSV file (PK-ordered or shuffled) and the generator it came
    from, for paths that take rows from the client (SQLite, FerretDB, RocksDB)."""

    path: Path
    order: str
    generator: ssb.LineOrder

    def chunks(self) -> Iterator[ssb.Chunk]:
        return self.generator.chunks(self.order)


# -- SQL ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SqlDialect:
    structure: str  # B-tree | LSM | columnar: which side of seed 001's reading the engine is on
    layout: str  # how the table is stored, for the report
    types: Mapping[str, str]  # column kind -> SQL type
    methods: tuple[Method, ...]  # the first is the engine's own bulk path; the others are variants
    load: Callable[[Any, Method, Staged, str], None]  # on a session of its own (`bulk_load`)
    sizes_sql: str | None  # (table bytes, index bytes) by the engine's own size functions
    sizes_source: str
    datadir_sql: str | None = None  # where a server keeps its files, inside its container
    server_config: Mapping[str, Any] = field(default_factory=dict)  # set at every start
    analyze: tuple[str, ...] = ()  # before the sizes are read (statistics the size functions use)
    flush_stats: tuple[str, ...] = ()  # on the work session after a window, so the read counters hold it
    text_type: Callable[[int], str] = lambda width: f"varchar({width})"
    notes: tuple[str, ...] = ()
    local_files: bool = False  # the loading session sends a file from this host (LOAD DATA LOCAL)
    # Whether a commit waits for its log on disk at the settings this workload runs (the engines'
    # defaults; each engine's declared durability settings, read at its start, show them): None
    # where the engine does not say.
    syncs_commit: bool | None = True
    # Disk per line order per loaded table at the load's peak, logs included: the data directory
    # growth seen here at 200,000-250,000 rows, rounded up (the disk check before a run).
    disk_bytes_per_row: int = 300
    # The size function measures the whole database, not one table: a load's size is its growth
    # (read before the load and after it), or a second table would hold the first one's bytes too.
    sizes_whole_database: bool = False
    # An LSM engine's memtable size (RocksDB's write_buffer_size), read from the engine after a
    # load: data below one memtable is a size at which B-tree against LSM at scale is not asked.
    memtable_sql: str | None = None
    # A fetch's index scan and row decoding run in this workload's Python, not in the engine.
    lookup_in_python: bool = False
    # The fetch's access path as the engine's plan names it (read outside every window): the plan
    # statement for {table} and one {custkey}, and the pattern whose first group is the path.
    plan_sql: str | None = None
    plan_pattern: str | None = None

    kind = "sql"

    # -- set-up ---------------------------------------------------------------------------------------
    def open(self, instance) -> Handle:
        work = instance.session(local_files=self.local_files)
        return Handle(instance, work, instance.session())

    def create(self, h: Handle, table: str) -> None:
        """The table with its primary key and its index on lo_custkey, before the load (as seed
        001's tables were: the load maintains both)."""
        columns = ", ".join(f"{c.name} {self.text_type(c.width) if c.kind == 'text' else self.types[c.kind]} not null"
                            for c in TABLE.columns)
        h.work.execute(f"create table {table} ({columns}, primary key ({', '.join(TABLE.primary_key)}))")
        for name, cols in TABLE.indexes.items():
            h.work.execute(f"create index {index_name(name, table)} on {table} ({', '.join(cols)})")

    def counters(self, engine: Engine) -> tuple[Counter, ...]:
        clustered = clustered_dialect(engine)
        return clustered.counters if clustered is not None else ()

    def buffer_setting(self, engine: Engine, megabytes: int) -> dict[str, Any]:
        clustered = clustered_dialect(engine)
        return {**clustered.server_config, **clustered.buffer_setting(megabytes)} \
            if clustered is not None and clustered.buffer_setting else {}

    # -- operations -----------------------------------------------------------------------------------
    def insert_statement(self, h: Handle, table: str) -> str:
        marks = ", ".join([h.work.placeholder] * len(TABLE.columns))
        return f"insert into {table} values ({marks})"

    def insert_one(self, h: Handle, cursor: Any, statement: str, row: tuple) -> None:
        cursor.execute(statement, row)

    def fetch_statement(self, h: Handle, table: str) -> str:
        return f"select * from {table} where lo_custkey = {h.work.placeholder}"

    def fetch(self, h: Handle, cursor: Any, statement: str, custkey: int) -> int:
        cursor.execute(statement, (custkey,))
        return len(cursor.fetchall())

    def cursor(self, h: Handle) -> Any:
        return h.work.cursor()

    def bulk_load(self, h: Handle, method: Method, staged: Staged, table: str) -> None:
        """On a session of its own: a bulk mode set on it (MyRocks') ends with it, whatever happens."""
        session = h.instance.session(local_files=self.local_files)
        try:
            self.load(session, method, staged, table)
        finally:
            session.close()

    def count(self, h: Handle, table: str) -> int:
        return int(h.side.execute(f"select count(*) from {table}")[0][0])

    def count_orders(self, h: Handle, table: str, orderkeys: list[int]) -> int:
        """Rows of these orders: a read-back of inserted rows by primary key."""
        total = 0
        for lo in range(0, len(orderkeys), 1000):
            keys = ", ".join(str(int(k)) for k in orderkeys[lo:lo + 1000])
            total += int(h.side.execute(f"select count(*) from {table} where lo_orderkey in ({keys})")[0][0])
        return total

    def sizes(self, h: Handle, table: str) -> tuple[float | None, float | None]:
        for statement in self.analyze:
            h.side.execute(statement.format(table=table))
        if self.sizes_sql is None:
            return None, None
        data, index = h.side.execute(self.sizes_sql.format(table=table))[0]
        return (None if data is None else float(data)), (None if index is None else float(index))

    def datadir(self, h: Handle) -> str | None:
        return str(h.side.execute(self.datadir_sql)[0][0]) if self.datadir_sql else None

    def memtable_bytes(self, h: Handle, folder: Path | None) -> float | None:
        return scalar(h.side.execute(self.memtable_sql)) if self.memtable_sql else None

    def after_window(self, h: Handle) -> None:
        for statement in self.flush_stats:
            h.work.execute(statement)

    def plan(self, h: Handle, table: str, custkey: int) -> str | None:
        """The fetch's access path for one customer, by the engine's own plan; None where the
        dialect reads none."""
        if self.plan_sql is None:
            return None
        text = " ".join(str(v) for row in h.side.execute(self.plan_sql.format(table=table, custkey=custkey)) for v in row)
        found = re.search(self.plan_pattern, text)
        return found.group(1) if found else None


def _copy_stdin(session, method: Method, staged: Staged, table: str) -> None:
    """psql's \\copy: the client streams the file through COPY ... FROM STDIN."""
    cursor = session.raw.cursor()
    with cursor.copy(f"copy {table} from stdin (format csv)") as copy, open(staged.path, "rb") as f:
        while block := f.read(1 << 20):
            copy.write(block)
    cursor.close()


def _load_data_local(session, method: Method, staged: Staged, table: str) -> None:
    # MyRocks refuses to change rocksdb_bulk_load_allow_unsorted once the bulk mode is on.
    for statement in (method.unsorted_sql if staged.order != "key" else ()) + method.session_sql:
        session.execute(statement)
    session.execute(f"load data local infile '{staged.path}' into table {table} fields terminated by ','")
    for statement in method.after_sql:
        session.execute(statement)


def _copy_file(session, method: Method, staged: Staged, table: str) -> None:
    session.execute(f"copy {table} from '{staged.path}' (format csv, header false)")


def _prepared_inserts(session, method: Method, staged: Staged, table: str) -> None:
    """One transaction of one prepared INSERT executed per row (sqlite3 keeps it prepared)."""
    cursor = session.cursor()
    statement = f"insert into {table} values ({', '.join('?' * len(TABLE.columns))})"
    cursor.execute("begin")
    for chunk in staged.chunks():
        cursor.executemany(statement, chunk.rows())
    cursor.execute("commit")
    cursor.close()


COPY_STDIN = Method("COPY FROM STDIN", "the client streams the CSV file through COPY ... FROM STDIN (psql's \\copy)")
LOAD_DATA = Method("LOAD DATA LOCAL INFILE", "the client sends the CSV file; the server inserts its rows in one "
                                             "statement (one transaction)")
MYROCKS_BULK = Method(
    "LOAD DATA, rocksdb_bulk_load", "LOAD DATA LOCAL INFILE with MyRocks' bulk-load mode: rows written straight "
    "into new SST files (skipping the memtable and the WAL) and ingested when the mode is switched off",
    session_sql=("set session rocksdb_bulk_load = 1",), unsorted_sql=("set session rocksdb_bulk_load_allow_unsorted = 1",),
    after_sql=("set session rocksdb_bulk_load = 0",), bulk_mode=True)

_PG_TYPES = {"int8": "smallint", "int16": "smallint", "int32": "integer", "int64": "bigint"}
_MYSQL_TYPES = {"int8": "tinyint", "int16": "smallint", "int32": "int", "int64": "bigint"}

POSTGRES = SqlDialect(
    structure="B-tree", layout="heap table + B-tree primary key and index", types=_PG_TYPES, methods=(COPY_STDIN,),
    load=_copy_stdin, sizes_sql="select pg_table_size('{table}'), pg_indexes_size('{table}')",
    sizes_source="pg_table_size / pg_indexes_size (after VACUUM ANALYZE)", datadir_sql="show data_directory",
    # Index-only visibility and the size functions need the visibility map: VACUUM after the load,
    # as a loading script would, outside every window.
    analyze=("vacuum analyze {table}",),
    # PostgreSQL 15+ publishes a backend's block reads when it goes idle, at most once a second
    # unless asked: flushed after each window so the read counters hold the window's own reads.
    flush_stats=("select pg_stat_force_next_flush()",),
    # The planner's choice without running the fetch: the first scan node, a bitmap's by its index
    # node ("Bitmap Heap Scan" above "Bitmap Index Scan"), so a base's plan labels its bar as a
    # backend's does (FerretDB's explain returns its PostgreSQL's).
    plan_sql="explain select * from {table} where lo_custkey = {custkey}",
    plan_pattern=r"((?:Bitmap Index|Index Only|Index|Parallel Seq|Seq) Scan)")

MYSQL = SqlDialect(
    structure="B-tree", layout="InnoDB: rows in the clustered primary-key B-tree, B-tree secondary index",
    types=_MYSQL_TYPES, methods=(LOAD_DATA,), load=_load_data_local,
    sizes_sql="select data_length, index_length from information_schema.tables where table_schema = database() "
              "and table_name = '{table}'",
    sizes_source="information_schema.tables data_length / index_length (after ANALYZE TABLE)",
    datadir_sql="select @@datadir", server_config={"local_infile": "ON"}, analyze=("analyze table {table}",),
    local_files=True, disk_bytes_per_row=350)  # MySQL's binary log holds every loaded row once more

MYROCKS = replace(MYSQL, structure="LSM", layout="MyRocks: rows in RocksDB keyed by the primary key, the index as "
                  "its own keys (an LSM tree)", methods=(LOAD_DATA, MYROCKS_BULK), disk_bytes_per_row=150,
                  memtable_sql="select value from information_schema.rocksdb_cf_options where cf_name = 'default' "
                               "and option_type = 'WRITE_BUFFER_SIZE'",
                  # Its table statistics come from SST files: the memtables flushed first.
                  analyze=("set global rocksdb_force_flush_memtable_now = 1", "analyze table {table}"),
                  sizes_source="information_schema.tables data_length / index_length (after a memtable flush and "
                               "ANALYZE TABLE)")

SQLITE = SqlDialect(
    structure="B-tree", layout="rowid B-tree table + B-tree primary-key and customer indexes", types={},
    methods=(Method("prepared INSERTs, one transaction", "one transaction of one prepared INSERT executed per row, "
                    "rows handed over by the Python generator", reads_file=False),),
    load=_prepared_inserts, text_type=lambda width: "text",
    sizes_sql="select (select sum(pgsize) from dbstat where name = '{table}'), (select sum(pgsize) from dbstat where "
              "name in (select name from sqlite_master where type = 'index' and tbl_name = '{table}'))",
    sizes_source="dbstat: pages of the table and of its indexes (after ANALYZE)", analyze=("analyze {table}",),
    disk_bytes_per_row=150)
SQLITE_TYPES = {k: "integer" for k in _PG_TYPES}

DUCKDB = SqlDialect(
    structure="columnar", layout="columnar row groups + ART indexes (primary key, customer)",
    types={"int8": "tinyint", "int16": "smallint", "int32": "integer", "int64": "bigint"},
    methods=(Method("COPY FROM file", "COPY ... FROM the CSV file, read by the engine itself"),), load=_copy_file,
    sizes_sql="select used_blocks * block_size, null from pragma_database_size()",
    sizes_source="pragma_database_size(): used blocks x block size of the whole database after a CHECKPOINT, "
                 "after the load minus before it (table and indexes together)",
    analyze=("checkpoint",), syncs_commit=None, disk_bytes_per_row=200, sizes_whole_database=True,
    # An index scan of the ART index fetches each match's columns by row id out of compressed column
    # segments; DuckDB takes it below index_scan_max_count matches, a table scan above. The choice is
    # made as the query runs: a plain EXPLAIN names a sequential scan either way.
    plan_sql="explain analyze select * from {table} where lo_custkey = {custkey}",
    plan_pattern=r"Type:\s*(\w+ Scan)")


# A document engine's plan suffix where its filter did not reach the backend (FerretDB's filterPushdown).
NOT_PUSHED = "filter not pushed down"


# -- MongoDB wire protocol ---------------------------------------------------------------------------------
_KEY_FIELDS = TABLE.primary_key


def document(row: tuple) -> dict[str, Any]:
    """A line order as a document: the primary key as `_id` (a sub-document of its two fields)."""
    doc = dict(zip(TABLE.names, row))
    doc["_id"] = {k: doc.pop(k) for k in _KEY_FIELDS}
    return doc


def plan_nodes(plan: Any) -> list[str]:
    """Every node an explain names, outermost first: PostgreSQL's "Node Type", MongoDB's "stage"."""
    if isinstance(plan, dict):
        own = [plan[k] for k in ("Node Type", "stage") if isinstance(plan.get(k), str)]
        return own + [n for v in plan.values() for n in plan_nodes(v)]
    if isinstance(plan, list):
        return [n for v in plan for n in plan_nodes(v)]
    return []


@dataclass(frozen=True)
class DocumentDialect:
    structure: str = "B-tree"
    layout: str = "documents (JSONB) in a PostgreSQL heap, B-tree indexes on _id and lo_custkey"
    methods: tuple[Method, ...] = (Method("insert_many", "pymongo insert_many of the generator's documents, one "
                                                         "call per chunk of ~65,000 rows (ordered)", reads_file=False),)
    notes: tuple[str, ...] = ()
    datadir_path: str = "/var/lib/postgresql/data"  # FerretDB's PostgreSQL, as its recipe runs it
    sizes_source: str = "collStats size / totalIndexSize"
    server_config: Mapping[str, Any] = field(default_factory=dict)
    syncs_commit: bool | None = None
    disk_bytes_per_row: int = 2200  # JSONB repeats every field name in every document
    lookup_in_python: bool = False

    kind = "document"

    def plan(self, h: Handle, table: str, custkey: int) -> str | None:
        """The fetch's access path by the server's own explain: FerretDB returns its PostgreSQL's
        plan ("Node Type") and whether the filter reached it (filterPushdown); MongoDB its stages."""
        out = h.side.raw.command({"explain": {"find": table, "filter": {"lo_custkey": custkey}},
                                  "verbosity": "queryPlanner"})
        scan = next((n for n in plan_nodes(out.get("queryPlanner", {})) if "SCAN" in n.upper()), None)
        if scan is None:
            return None
        return scan + (f", {NOT_PUSHED}" if out.get("filterPushdown") is False else "")

    def open(self, instance) -> Handle:
        return Handle(instance, instance.session(), instance.session())

    def create(self, h: Handle, table: str) -> None:
        db = h.work.raw
        db.drop_collection(table)
        db.create_collection(table)
        for name, cols in TABLE.indexes.items():
            db[table].create_index([(c, 1) for c in cols], name=index_name(name, table))

    def counters(self, engine: Engine) -> tuple[Counter, ...]:
        return ()

    def buffer_setting(self, engine: Engine, megabytes: int) -> dict[str, Any]:
        return {}  # FerretDB's options are its own; its PostgreSQL keeps the image's shared_buffers

    def bulk_load(self, h: Handle, method: Method, staged: Staged, table: str) -> None:
        collection = h.work.raw[table]
        for chunk in staged.chunks():
            collection.insert_many([document(r) for r in chunk.rows()], ordered=True)

    def insert_statement(self, h: Handle, table: str) -> Any:
        return h.work.raw[table]

    def insert_one(self, h: Handle, cursor: Any, collection: Any, row: tuple) -> None:
        collection.insert_one(document(row))

    def fetch_statement(self, h: Handle, table: str) -> Any:
        return h.work.raw[table]

    def fetch(self, h: Handle, cursor: Any, collection: Any, custkey: int) -> int:
        return len(list(collection.find({"lo_custkey": custkey})))

    def cursor(self, h: Handle) -> Any:
        return None

    def count(self, h: Handle, table: str) -> int:
        return int(h.side.raw[table].count_documents({}))

    def count_orders(self, h: Handle, table: str, orderkeys: list[int]) -> int:
        """Line 1 of each order (the inserts write only line 1 of new orders), found through the
        `_id` index: a match on a field inside `_id` would scan the collection."""
        ids = [document((int(k), 1, *([0] * (len(TABLE.columns) - 2))))["_id"] for k in orderkeys]
        return int(h.side.raw[table].count_documents({"_id": {"$in": ids}}))

    def sizes(self, h: Handle, table: str) -> tuple[float | None, float | None]:
        stats = h.side.raw.command("collStats", table)
        return float(stats.get("size", 0)), float(stats.get("totalIndexSize", 0))

    def datadir(self, h: Handle) -> str | None:
        return self.datadir_path

    def memtable_bytes(self, h: Handle, folder: Path | None) -> float | None:
        return None


    def after_window(self, h: Handle) -> None:
        pass


# -- key-value store ---------------------------------------------------------------------------------------
def rocksdb_write_buffer_size(folder: Path) -> float | None:
    """The largest write_buffer_size in the newest OPTIONS-<n> file under a folder (RocksDB writes
    one into its database directory at every open and options change), in bytes; None without one."""
    files = sorted(Path(folder).rglob("OPTIONS-*"), key=lambda p: int(p.name.split("-")[1]) if
                   p.name.split("-")[1].isdigit() else -1)
    if not files:
        return None
    sizes = [float(line.split("=", 1)[1]) for line in files[-1].read_text().splitlines()
             if line.strip().startswith("write_buffer_size=")]
    return max(sizes) if sizes else None


# A row's value: every column but the key, packed at fixed widths (text zero-padded to its SSB width).
_VALUE_COLUMNS = [c for c in TABLE.columns if c.name not in TABLE.primary_key]
_FORMAT = ">" + "".join(f"{c.width}s" if c.kind == "text" else {"int8": "b", "int16": "h", "int32": "i",
                                                                  "int64": "q"}[c.kind] for c in _VALUE_COLUMNS)
_VALUE = struct.Struct(_FORMAT)
_KEY = struct.Struct(">qb")  # (lo_orderkey, lo_linenumber), big-endian: byte order is key order
_CUSTOMER = struct.Struct(">i")


def _key_value(row: tuple) -> tuple[bytes, bytes, bytes]:
    """(primary key, value, index key) of one row tuple in the table's column order."""
    orderkey, line, custkey = row[0], row[1], row[2]
    values = [v.encode() if isinstance(v, str) else v for v in row[2:]]
    key = _KEY.pack(orderkey, line)
    return key, _VALUE.pack(*values), _CUSTOMER.pack(custkey) + key


def _decode(key: bytes, value: bytes) -> tuple:
    values = [v.rstrip(b"\0").decode() if isinstance(v, bytes) else v for v in _VALUE.unpack(value)]
    return (*_KEY.unpack(key), *values)


@dataclass(frozen=True)
class KeyValueDialect:
    """A table is two column families: `<table>` (primary key -> the other columns) and
    `<table>_custkey` (customer key + primary key -> nothing), written together in one batch."""

    structure: str = "LSM"
    layout: str = ("RocksDB: rows keyed by the primary key (big-endian), the customer index a second column family "
                   "of (lo_custkey, primary key) keys; both LSM trees")
    methods: tuple[Method, ...] = (Method("WriteBatch", "one WriteBatch per chunk of ~65,000 rows (each row and its "
                                                        "index entry), RocksDB's default write options (WAL on, no "
                                                        "fsync)", reads_file=False),)
    notes: tuple[str, ...] = ()
    sizes_source: str = "rocksdb.total-sst-files-size of each column family, after a memtable flush"
    server_config: Mapping[str, Any] = field(default_factory=dict)
    syncs_commit: bool | None = False
    disk_bytes_per_row: int = 150
    # The index scan (one Python iterator step per entry), the multi-get and the row decoding are
    # this workload's code over rocksdict.
    lookup_in_python: bool = True

    kind = "keyvalue"

    def plan(self, h: Handle, table: str, custkey: int) -> str | None:
        return None  # the workload's own index scan

    def open(self, instance) -> Handle:
        session = instance.session()
        return Handle(instance, session, session)

    @staticmethod
    def _families(h: Handle, table: str) -> tuple[Any, Any]:
        return h.work.family(table), h.work.family(index_name(f"{TABLE.name}_custkey", table))

    def create(self, h: Handle, table: str) -> None:
        self._families(h, table)

    def counters(self, engine: Engine) -> tuple[Counter, ...]:
        return ()

    def buffer_setting(self, engine: Engine, megabytes: int) -> dict[str, Any]:
        return {}

    def _batch(self, h: Handle, table: str, rows) -> Any:
        import rocksdict

        rows_family, index_family = self._families(h, table)
        db = h.work.raw
        batch = rocksdict.WriteBatch(raw_mode=True)
        handles = (db.get_column_family_handle(table),
                   db.get_column_family_handle(index_name(f"{TABLE.name}_custkey", table)))
        for row in rows:
            key, value, index_key = _key_value(row)
            batch.put(key, value, handles[0])
            batch.put(index_key, b"", handles[1])
        return batch

    def bulk_load(self, h: Handle, method: Method, staged: Staged, table: str) -> None:
        db = h.work.raw
        for chunk in staged.chunks():
            db.write(self._batch(h, table, chunk.rows()))

    def insert_statement(self, h: Handle, table: str) -> Any:
        return table

    def insert_one(self, h: Handle, cursor: Any, table: str, row: tuple) -> None:
        h.work.raw.write(self._batch(h, table, (row,)))  # the row and its index entry, atomically

    def fetch_statement(self, h: Handle, table: str) -> Any:
        return self._families(h, table)

    def fetch(self, h: Handle, cursor: Any, families: tuple[Any, Any], custkey: int) -> int:
        """What the SQL engines do for `where lo_custkey = ?`: a range of the index, then a
        multi-get of the rows it names, decoded into tuples."""
        rows_family, index_family = families
        prefix = _CUSTOMER.pack(custkey)
        keys = []
        it = index_family.iter()
        it.seek(prefix)
        while it.valid():
            index_key = it.key()
            if not index_key.startswith(prefix):
                break
            keys.append(index_key[len(prefix):])
            it.next()
        del it
        values = rows_family[keys] if keys else []
        return len([_decode(k, v) for k, v in zip(keys, values) if v is not None])

    def cursor(self, h: Handle) -> Any:
        return None

    def count(self, h: Handle, table: str) -> int:
        return sum(1 for _ in self._families(h, table)[0].keys())

    def count_orders(self, h: Handle, table: str, orderkeys: list[int]) -> int:
        rows_family = self._families(h, table)[0]
        total = 0
        for orderkey in orderkeys:
            prefix = struct.pack(">q", orderkey)
            it = rows_family.iter()
            it.seek(prefix)
            while it.valid() and it.key()[:8] == prefix:
                total += 1
                it.next()
            del it
        return total

    def sizes(self, h: Handle, table: str) -> tuple[float | None, float | None]:
        """SST bytes after the memtables are flushed (as MyRocks' sizes are read): a memtable's
        size is its allocated arena, not its rows."""
        families = self._families(h, table)
        for family in families:
            family.flush(wait=True)
        return tuple(float(f.property_int_value("rocksdb.total-sst-files-size") or 0) for f in families)

    def datadir(self, h: Handle) -> str | None:
        return None

    def memtable_bytes(self, h: Handle, folder: Path | None) -> float | None:
        """write_buffer_size from the newest OPTIONS file RocksDB wrote into its folder (every
        column family here runs the same options); None where there is none to read."""
        return rocksdb_write_buffer_size(folder) if folder is not None else None


    def after_window(self, h: Handle) -> None:
        pass


DIALECTS: dict[str, Any] = {
    "postgres": POSTGRES, "mysql": MYSQL, "mariadb-myrocks": MYROCKS,
    "sqlite": replace(SQLITE, types=SQLITE_TYPES), "duckdb": DUCKDB,
    "ferretdb": DocumentDialect(notes=(
        "FerretDB 1.24 turns each document operation into SQL on PostgreSQL (JSONB): the MongoDB wire protocol, not "
        "MongoDB's storage engine (WiredTiger).",)),
    "rocksdb": KeyValueDialect(),
    # MongoDB itself where its official image can be had: WiredTiger (B-tree by default).
    "mongodb": DocumentDialect(layout="documents in WiredTiger B-trees, indexes on _id and lo_custkey",
                               datadir_path="/data/db"),
}
# Engines of a wire family whose statements here are not theirs (no pg_table_size, no InnoDB): not
# run rather than measured with the wrong size functions.
WITHOUT_DIALECT = ("cockroachdb", "yugabytedb", "tidb")

STRUCTURE, LAYER = "structure", "layer"


@dataclass(frozen=True)
class Comparison:
    """Two engines the report sets side by side, `subject` against `base`. `kind` is what differs
    by design: STRUCTURE, a B-tree base against an LSM subject; LAYER, a subject that runs over its
    base engine (a protocol translated into the base's SQL). `seed`: the seed's systems (base,
    subject) whose ratio stands beside this one's, where the seed measured such a pair."""

    base: str
    subject: str
    kind: str
    seed: tuple[str, str] | None = None


# What else a pair differs in is computed per run (analysis.differences), never assumed away.
COMPARISONS = (
    Comparison("mariadb", "mariadb-myrocks", STRUCTURE, seed=("MySQL", "RocksDB")),  # one server, two engines
    Comparison("sqlite", "rocksdb", STRUCTURE, seed=("MySQL", "RocksDB")),  # two libraries in this process
    Comparison("postgres", "ferretdb", LAYER),  # the MongoDB wire protocol over the same PostgreSQL
)
# Each kind's question, the notebook's title where the run compares that kind only.
QUESTIONS = {
    STRUCTURE: "B-tree or LSM tree: which engine loads, inserts one row and fetches a customer's orders faster?",
    LAYER: "What does {subject} add over the {base} it runs on, to load, insert one row and fetch a customer's "
           "orders?",
}


def dialect_for(engine: Engine):
    return None if engine.name in WITHOUT_DIALECT else engine.lookup(DIALECTS)


def read_counters(session, counters: tuple[Counter, ...]) -> dict[str, float | None]:
    return {c.metric: scalar(session.execute(c.query)) if c.query else None for c in counters}
