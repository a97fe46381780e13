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
class CDriver:
    """A second DB-API driver for an engine whose default driver is pure Python: a C extension
    speaking the same protocol, so that a driver's own cost can be told from the server's."""

    title: str
    connect: Callable[[Any, float], Any]  # (Endpoint, timeout) -> connection in autocommit
    available: Callable[[], str | None]  # None, or why the C path cannot run here
    prepared_cursor: Callable[[Any], Any] | None = None  # a cursor executing server-side prepared statements


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
    # The same for the SQLAlchemy layers' connections (connect arguments): Core and the ORM are
    # set beside the driver layer, so they send plain statements too, or their server CPU would
    # include psycopg's own preparing (after 5 executions of a text) and not only the layer's cost.
    sqlalchemy_plain: Mapping[str, Any] = field(default_factory=dict)
    no_prepare_reason: str = ""
    timestamp: Callable[[datetime], Any] = lambda t: t  # how the raw driver passes a timestamp
    processes_reason: str = ""  # why the contended test cannot run in several processes ("" : it can)
    c_driver: CDriver | None = None
    no_c_driver_reason: str = ""
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

    def query_by(self, member: str) -> str:
        return f"select {', '.join(COLUMNS)} from {TABLE} where {member} = {self.placeholder}"

    @property
    def delete(self) -> str:
        return f"delete from {TABLE} where id = {self.placeholder}"


def _mysql_connector_c(endpoint, timeout: float):
    import mysql.connector

    where = {"unix_socket": str(endpoint.socket)} if endpoint.socket else {"host": endpoint.host, "port": endpoint.port}
    # use_pure=False: the C extension (libmysqlclient inside the wheel), never its pure-Python
    # fallback, which would measure a second pure-Python driver.
    return mysql.connector.connect(**where, user=endpoint.user, password=endpoint.password, database=endpoint.database,
                                   autocommit=True, use_pure=False, connection_timeout=max(1, int(timeout)))


def _mysql_connector_c_missing() -> str | None:
    try:
        import mysql.connector  # noqa: F401
    except ImportError:
        return "mysql-connector-python is not installed"
    try:
        from mysql.connector import connection_cext  # noqa: F401
    except ImportError as exc:  # e.g. a wheel's C extension built against a newer OpenSSL than the host's
        hint = " (import benchlib before pandas or pyarrow)" if "static TLS" in str(exc) else ""
        return f"mysql-connector-python's C extension does not load here ({exc}){hint}"
    return None


MYSQL_CONNECTOR_C = CDriver(
    title="mysql-connector-python (C extension)", connect=_mysql_connector_c,
    available=_mysql_connector_c_missing,
    # Binary protocol: COM_STMT_PREPARE once per statement text and cursor, then COM_STMT_EXECUTE.
    prepared_cursor=lambda conn: conn.cursor(prepared=True))


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
                           prepare={"prepare": True}, plain={"prepare": False},
                           sqlalchemy_plain={"prepare_threshold": None},
                           no_c_driver_reason="psycopg already is the C driver (libpq): `driver` and `prepared` are "
                                              "the C paths"),
    "mysql": ApiDialect(types={**SERVER_TYPES, "float": "double", "ts": "datetime(6)"}, placeholder="%s",
                        manual_commit=_pymysql_manual,
                        no_prepare_reason="PyMySQL has no server-side prepared statements (it interpolates "
                                          "parameters into the text): `c_prepared` has them",
                        c_driver=MYSQL_CONNECTOR_C),
    "sqlite": ApiDialect(types={"id": "integer", "int": "integer", "float": "real", "str": "text", "ts": "text"},
                         placeholder="?", manual_commit=_sqlite_manual,
                         # Python 3.12 deprecates sqlite3's default datetime adapter; SQLAlchemy
                         # stores this same ISO text.
                         timestamp=lambda t: t.isoformat(" "),
                         no_prepare_reason="sqlite3 already prepares every statement once and caches it: its plain "
                                           "path is the prepared one",
                         no_c_driver_reason="sqlite3 is already C: `driver` is the C path"),
    "duckdb": ApiDialect(types={**SERVER_TYPES, "float": "double"}, placeholder="?", manual_commit=_no_switch,
                         begin=_duckdb_begin, cursor=lambda conn: conn,
                         no_prepare_reason="measured only through duckdb's plain execute() (its own statement cache)",
                         processes_reason="DuckDB lets one process at a time open a database file",
                         no_c_driver_reason="duckdb's Python module is already C++: `driver` is the native path"),
}


def dialect_for(engine: Engine) -> ApiDialect | None:
    return engine.lookup(DIALECTS)
