"""What seed 000's DML workload says to each engine. Looked up by engine key, then without its
version (`postgres@15` -> `postgres`), then the engine it is a variant of (`mariadb-myrocks` ->
`mariadb`), then the dialect family: MySQL and MariaDB share the MySQL family's statements and
override only what differs. The document family (MongoDB, FerretDB) takes operations that are
callables on a pymongo database instead of SQL text, the same named phases."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

from ...engines import Engine

PK_KINDS = ("uuid", "sequential")
# What each key kind is called where a report names it (never the parameter's raw value).
KEY_KINDS = {"uuid": "UUID keys from each engine's own generator", "sequential": "Sequential keys"}


@dataclass(frozen=True)
class DmlDialect:
    """Named operations of the workload. SQL engines take SQL text; `scalar` reads one number
    out of an operation's result."""

    pk_columns: Mapping[str, str]  # pk kind -> column definition of `id` (without PRIMARY KEY)
    insert_generated: Callable[[int], Any]  # inserts n rows generated server-side into demo(value)
    sleep: Callable[[float], Any] | None  # server-side sleep; None: the client sleeps
    maintain: Any = None  # maintenance seed 000 runs after each DML phase (PostgreSQL's VACUUM)
    update_all: Any = "update demo set value = value + 1"
    count_values: Any = "select count(value) from demo"
    count_rows: Any = "select count(*) from demo"
    delete_all: Any = "delete from demo"
    pre_create: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    scalar: Callable[[Any], float] = lambda rows: float(rows[0][0])
    # Inserts for pk kinds whose key the insert itself must supply (no column default allowed):
    # pk kind -> (n -> operation). Other kinds use insert_generated.
    insert_keyed: Mapping[str, Callable[[int], Any]] = field(default_factory=dict)
    # The most rows the engine can take through these statements (None: no limit), and why.
    max_rows: int | None = None
    max_rows_reason: str = ""
    # pk kind -> what the key generator produces, as a reader must know it: the same "uuid" is
    # random on one engine and nearly ascending on another, which decides B-tree page splits.
    keys: Mapping[str, str] = field(default_factory=lambda: {"sequential": "ascending integers"})

    def create(self, pk_kind: str) -> list[Any]:
        return [*self.pre_create.get(pk_kind, ()),
                f"create table demo ({self.pk_columns[pk_kind]} primary key, value float)"]

    def insert(self, n: int, pk_kind: str) -> Any:
        """Insert n generated rows into demo, with keys as `pk_kind` declares them."""
        return self.insert_keyed.get(pk_kind, self.insert_generated)(n)


def digits_cross_join_insert(n: int, id_expression: str | None = None) -> str:
    """MySQL-family row generator from seed 000: a cross join of digit tables.

    MySQL caps recursive CTEs at 1000 iterations by default, so the article crosses a 10-row CTE
    with itself; we take just enough digit columns for n rows. `id_expression` also fills `id`
    (TiDB, where the key cannot be a column default)."""
    width = max(1, len(str(max(n - 1, 0))))
    digits = " union all ".join(f"select {d}" for d in range(1, 10))
    tables = ", ".join(f"x x{i}" for i in range(width))
    number = " + ".join(f"{10 ** i} * x{i}.x" if i else "x0.x" for i in range(width))
    columns, key = ("id, value", f"{id_expression}, ") if id_expression else ("value", "")
    return (f"insert into demo({columns}) with x as (select 0 as x union all {digits}) "
            f"select {key}{number} + 1 from {tables} limit {n}")


@dataclass(frozen=True)
class DocumentDmlDialect(DmlDialect):
    """The same phases as pymongo operations on the `demo` collection (seed 000's MongoDB run):
    insert_many of generated documents, update_many with $inc, count_documents, delete_many.
    Documents are generated in this process (the article generated them in mongosh, inside the
    container): their cost shows in the client scope, not the server's."""

    def create(self, pk_kind: str) -> list[Any]:
        return [lambda db: db.drop_collection("demo"), lambda db: db.create_collection("demo")]


def _documents(n: int, pk_kind: str) -> list[dict]:
    if pk_kind == "uuid":
        import uuid

        from bson.binary import Binary

        return [{"_id": Binary.from_uuid(uuid.uuid4()), "value": i} for i in range(1, n + 1)]
    return [{"value": i} for i in range(1, n + 1)]  # pymongo adds increasing ObjectIds


def _insert_documents(pk_kind: str) -> Callable[[int], Any]:
    return lambda n: (lambda db: db.demo.insert_many(_documents(n, pk_kind), ordered=True))


DOCUMENT = DocumentDmlDialect(
    # What `_id` holds: random UUIDs (BSON binary subtype 4), or the driver's ObjectIds, which
    # increase within one client (timestamp, then a counter): MongoDB's own default key.
    pk_columns={"uuid": "_id: random UUID (binary)", "sequential": "_id: ObjectId (driver-generated)"},
    keys={"uuid": "random UUIDv4 generated by the client (BSON binary)",
          "sequential": "ObjectIds from the driver (time first: ascending)"},
    insert_generated=_insert_documents("sequential"),
    insert_keyed={"uuid": _insert_documents("uuid")},
    sleep=None,  # no server-side sleep outside MongoDB's test commands: the client sleeps
    update_all=lambda db: db.demo.update_many({}, {"$inc": {"value": 1}}),
    count_values=lambda db: db.demo.count_documents({}),
    count_rows=lambda db: db.demo.count_documents({}),
    delete_all=lambda db: db.demo.delete_many({}),
    scalar=float,
)


def _mssql_delay(seconds: float) -> str:
    whole, millis = divmod(round(seconds * 1000), 1000)
    return f"waitfor delay '{whole // 3600:02d}:{whole // 60 % 60:02d}:{whole % 60:02d}.{millis:03d}'"


POSTGRES = DmlDialect(
    pk_columns={"uuid": "id uuid default gen_random_uuid()", "sequential": "id bigint generated always as identity"},
    keys={"uuid": "gen_random_uuid(): random UUIDv4, every insert lands on a random leaf page",
          "sequential": "identity: ascending integers"},
    insert_generated=lambda n: f"insert into demo(value) select generate_series(1, {n})",
    sleep=lambda s: f"select pg_sleep({s})",
    # Seed 000 runs VACUUM after each DML phase: without it the cost of cleaning up dead tuples is
    # deferred to autovacuum and missing from the phase.
    maintain="vacuum",
)

MYSQL = DmlDialect(
    pk_columns={"uuid": "id binary(16) default (uuid_to_bin(uuid()))", "sequential": "id bigint auto_increment"},
    # uuid_to_bin without its swap flag keeps the time-low field first: within one load the
    # keys ascend (time-low wraps every ~7 minutes), so InnoDB appends rather than splits.
    keys={"uuid": "uuid(): UUIDv1, time-low first, nearly ascending within a load",
          "sequential": "auto_increment: ascending integers"},
    insert_generated=digits_cross_join_insert,
    sleep=lambda s: f"do sleep({s})",
)

DIALECTS: dict[str, DmlDialect] = {
    "postgres": POSTGRES,
    # Seed 000 ran no VACUUM on the distributed engines: CockroachDB has none (MVCC garbage is
    # collected by its storage layer), YugabyteDB accepts it as a no-op.
    "cockroachdb": replace(POSTGRES, maintain=None),
    "yugabytedb": replace(POSTGRES, maintain=None),
    # TiDB refuses UUID_TO_BIN(UUID()) as a column default (seed 000: error 3770): the insert
    # supplies the key. One statement over 2M rows exceeds its default memory quota per query.
    "tidb": replace(MYSQL, pk_columns={**MYSQL.pk_columns, "uuid": "id binary(16)"},
                    insert_keyed={"uuid": lambda n: digits_cross_join_insert(n, "uuid_to_bin(uuid())")},
                    pre_create={k: ("set tidb_mem_quota_query = 4294967296",) for k in PK_KINDS}),
    "oracle": DmlDialect(
        pk_columns={"uuid": "id raw(16) default sys_guid()", "sequential": "id number generated always as identity"},
        keys={"uuid": "SYS_GUID(): 16 bytes whose order depends on the platform (often nearly ascending)",
              "sequential": "identity: ascending integers"},
        insert_generated=lambda n: f"insert into demo(value) select rownum from xmltable('1 to {n}')",
        sleep=lambda s: f"begin dbms_session.sleep({s}); end;",
    ),
    "sqlserver": DmlDialect(
        pk_columns={"uuid": "id uniqueidentifier default newid()", "sequential": "id bigint identity"},
        keys={"uuid": "NEWID(): random UUIDv4", "sequential": "identity: ascending integers"},
        insert_generated=lambda n: f"insert into demo(value) select value from generate_series(1, {n})",
        sleep=_mssql_delay,
    ),
    "document": DOCUMENT,
    "ferretdb": replace(DOCUMENT, max_rows=65_535,
                        max_rows_reason="FerretDB 1.24 deletes with one PostgreSQL bind parameter per document, "
                                        "and PostgreSQL takes at most 65,535"),
    "mysql": MYSQL,
    # MariaDB has no UUID_TO_BIN; this is the same 16 bytes as MySQL's default.
    "mariadb": replace(MYSQL, pk_columns={**MYSQL.pk_columns,
                                          "uuid": "id binary(16) default (unhex(replace(uuid(), '-', '')))"}),
    "sqlite": DmlDialect(
        pk_columns={"uuid": "id blob default (randomblob(16))", "sequential": "id integer"},
        keys={"uuid": "randomblob(16): 16 random bytes, in a unique index of its own beside the rowid b-tree",
              "sequential": "integer primary key: the rowid itself, ascending"},
        insert_generated=lambda n: ("insert into demo(value) with recursive s(n) as "
                                    f"(select 1 union all select n + 1 from s where n < {n}) select n from s"),
        sleep=None,
        # A plain `delete from demo` takes SQLite's truncate shortcut (drops the pages without
        # visiting rows); the WHERE clause makes it delete row by row like every other engine.
        delete_all="delete from demo where id is not null",
    ),
    "duckdb": DmlDialect(
        pk_columns={"uuid": "id uuid default gen_random_uuid()", "sequential": "id bigint default nextval('demo_id_seq')"},
        keys={"uuid": "gen_random_uuid(): random UUIDv4", "sequential": "a sequence: ascending integers"},
        pre_create={"sequential": ("create sequence demo_id_seq",)},
        insert_generated=lambda n: f"insert into demo(value) select range from range(1, {n} + 1)",
        sleep=None,
    ),
}

def key_note(engine_keys, pk_kind: str) -> str:
    """One sentence per run: what `pk_kind` produced on each engine (reports print it)."""
    from ...engines import get_engine
    from ...core.errors import UnknownEngineError
    from ...engines import engine_title

    said: dict[str, list[str]] = {}  # what a generator produces -> the engines that use it, said once
    for key in engine_keys:
        try:
            dialect = dialect_for(get_engine(key))
        except UnknownEngineError:  # a run stored by a benchlib that had this engine
            continue
        if dialect is not None and pk_kind in dialect.keys:
            said.setdefault(dialect.keys[pk_kind], []).append(engine_title(key))
    parts = [f"{', '.join(engines)}: {text}" for text, engines in said.items()]
    return f"{KEY_KINDS[pk_kind]}: " + "; ".join(parts) + "." if parts else ""


# What a reader of a DML report must know about an engine's statements: one sentence each, cited
# by that engine's findings rows (of the phases in NOTE_PHASES, else of every phase).
NOTES = {
    "ferretdb": "FerretDB is not MongoDB: it runs each document operation as SQL on PostgreSQL in its container "
                "(update_many one statement per document), and its documents are generated in the Python client.",
    "mongodb": "Documents are generated in the Python client (seed 000 generated them in mongosh, inside the "
               "container).",
    "sqlite": "The delete has a WHERE clause, so SQLite deletes row by row instead of taking its truncate shortcut.",
}
NOTE_PHASES = {"sqlite": ("delete",)}


def dialect_for(engine: Engine) -> DmlDialect | None:
    return engine.lookup(DIALECTS)
