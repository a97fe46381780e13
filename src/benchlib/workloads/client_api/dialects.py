"""What the client-API workload says to each engine family: the object's table, the driver's
placeholder, how a raw connection leaves autocommit, and which layers the driver has. Looked up
like the DML dialects: engine key, unversioned key, variant, family."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Mapping

from ...engines import Engine

# The object: 24 members, as in seed 002's "object with a couple of dozen members": an id, eight
# integers, seven floats, seven strings and a timestamp.
INTS = tuple(f"i{n}" for n in range(1, 9))
FLOATS = tuple(f"f{n}" for n in range(1, 8))
STRINGS = tuple(f"s{n}" for n in range(1, 8))
TIMESTAMP = "ts"
MEMBERS = (*INTS, *FLOATS, *STRINGS, TIMESTAMP)  # without the id
COLUMNS = ("id", *MEMBERS)
TABLE = "api_object"


@dataclass(frozen=True)
class ApiDialect:
    types: Mapping[str, str]  # member kind (id, int, float, str, ts) -> column type
    placeholder: str  # the driver's paramstyle marker
    manual_commit: Callable[[Any], None]  # turns a raw autocommit connection into one that needs commit()
    begin: Callable[[Any], None] | None = None  # opens each transaction where the driver does not by itself
    # The cursor a layer runs its statements on. DuckDB's cursor() is a new connection with its own
    # transactions: there the connection is its own cursor.
    cursor: Callable[[Any], Any] = lambda conn: conn.cursor()
    # Driver keyword arguments of a server-side prepared statement; None: the driver has none.
    prepare: Mapping[str, Any] | None = None
    # The driver layer's keyword arguments: what keeps it on plain statements where the driver
    # would prepare by itself (psycopg does after 5 executions of the same text).
    plain: Mapping[str, Any] = field(default_factory=dict)
    no_prepare_reason: str = ""
    timestamp: Callable[[datetime], Any] = lambda t: t  # how the raw driver passes a timestamp
    processes_reason: str = ""  # why the contended test cannot run in several processes ("" : it can)
    notes: tuple[str, ...] = field(default_factory=tuple)

    def create_table(self) -> str:
        kinds = {c: "int" for c in INTS} | {c: "float" for c in FLOATS} | {c: "str" for c in STRINGS} | \
            {TIMESTAMP: "ts"}
        cols = ", ".join([f"id {self.types['id']} primary key", *(f"{c} {self.types[k]}" for c, k in kinds.items())])
        return f"create table {TABLE} ({cols})"

    def marks(self, n: int) -> str:
        return ", ".join([self.placeholder] * n)

    @property
    def insert(self) -> str:
        return f"insert into {TABLE} ({', '.join(COLUMNS)}) values ({self.marks(len(COLUMNS))})"

    @property
    def select(self) -> str:
        return f"select {', '.join(COLUMNS)} from {TABLE} where id = {self.placeholder}"

    @property
    def update(self) -> str:
        # All members written back, as an object mapper without change tracking does (seed 002's ODB).
        sets = ", ".join(f"{c} = {self.placeholder}" for c in MEMBERS)
        return f"update {TABLE} set {sets} where id = {self.placeholder}"

    @property
    def delete(self) -> str:
        return f"delete from {TABLE} where id = {self.placeholder}"


def _psycopg_manual(conn) -> None:
    conn.autocommit = False


def _pymysql_manual(conn) -> None:
    conn.autocommit(False)


def _sqlite_manual(conn) -> None:
    conn.isolation_level = "DEFERRED"


def _no_switch(conn) -> None:
    """DuckDB's Python connection has no autocommit switch: `begin` opens each transaction."""


def _duckdb_begin(conn) -> None:
    conn.begin()


SERVER_TYPES = {"id": "bigint", "int": "bigint", "float": "double precision", "str": "varchar(64)",
                "ts": "timestamp"}

DIALECTS: dict[str, ApiDialect] = {
    "postgres": ApiDialect(types=SERVER_TYPES, placeholder="%s", manual_commit=_psycopg_manual,
                           prepare={"prepare": True}, plain={"prepare": False}),
    "mysql": ApiDialect(types={**SERVER_TYPES, "float": "double", "ts": "datetime(6)"}, placeholder="%s",
                        manual_commit=_pymysql_manual,
                        no_prepare_reason="PyMySQL has no server-side prepared statements (it interpolates "
                                          "parameters into the text)"),
    "sqlite": ApiDialect(types={"id": "integer", "int": "integer", "float": "real", "str": "text", "ts": "text"},
                         placeholder="?", manual_commit=_sqlite_manual,
                         # Python 3.12 deprecates sqlite3's default datetime adapter; SQLAlchemy
                         # stores this same ISO text.
                         timestamp=lambda t: t.isoformat(" "),
                         no_prepare_reason="sqlite3 already prepares every statement once and caches it: its plain "
                                           "path is the prepared one"),
    "duckdb": ApiDialect(types={**SERVER_TYPES, "float": "double"}, placeholder="?", manual_commit=_no_switch,
                         begin=_duckdb_begin, cursor=lambda conn: conn,
                         no_prepare_reason="measured only through duckdb's plain execute() (its own statement cache)",
                         processes_reason="DuckDB lets one process at a time open a database file"),
}


def dialect_for(engine: Engine) -> ApiDialect | None:
    return engine.lookup(DIALECTS)
