"""How benchlib talks to an engine. A client opens a `Session` on an endpoint; a session offers
`execute(operation)`, `version()` and `ready()`, whatever the protocol underneath:

- `SqlClient`: DB-API drivers (psycopg, pymysql, sqlite3, duckdb); an operation is SQL text.
- `DocumentClient`: the MongoDB wire protocol through pymongo; an operation is a callable taking
  the database object (`lambda db: db.demo.count_documents({})`).
- `KeyValueClient`: an embedded key-value store (RocksDB through rocksdict); an operation is a
  callable taking the store.

Connections are opened in autocommit mode: each statement is its own transaction unless a
workload says otherwise, as on a database console."""
from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol


@dataclass(frozen=True)
class Endpoint:
    """Where a session connects: host/port/credentials for a server, a file for an embedded engine."""

    host: str | None = None
    port: int | None = None
    user: str | None = None
    password: str | None = None
    database: str | None = None
    path: Path | None = None
    socket: Path | None = None  # a server's Unix socket (as seen from this host): used instead of host/port

    def __repr__(self) -> str:
        where = f"unix:{self.socket}" if self.socket else f"{self.host}:{self.port}" if self.port else str(self.path)
        return f"Endpoint({where}, user={self.user!r}, database={self.database!r})"


class Session(Protocol):
    raw: Any  # the driver's own connection (DB-API connection, pymongo Database)

    def execute(self, operation: Any) -> Any: ...
    def version(self) -> str: ...
    def ready(self) -> None: ...
    def close(self) -> None: ...


class Client(Protocol):
    protocol: str
    needs: tuple[str, ...]  # Python modules the driver needs for this engine beyond its own

    def open(self, endpoint: Endpoint, timeout: float = 10.0, *, local_files: bool = False) -> Session: ...


def missing_modules(client: Client) -> list[str]:
    import importlib.util

    return [m for m in client.needs if importlib.util.find_spec(m) is None]


class SqlSession:
    def __init__(self, raw: Any, client: "SqlClient"):
        self.raw = raw
        self._client = client

    @property
    def placeholder(self) -> str:
        """The driver's parameter marker (DB-API paramstyle qmark or format)."""
        return self._client.placeholder

    def execute(self, operation: str, parameters: Any = None) -> list[tuple]:
        cursor = self.raw.cursor()
        try:
            cursor.execute(operation) if parameters is None else cursor.execute(operation, parameters)
            return [tuple(r) for r in cursor.fetchall()] if cursor.description else []
        finally:
            cursor.close()

    def executemany(self, operation: str, rows: Any) -> None:
        cursor = self.raw.cursor()
        try:
            cursor.executemany(operation, rows)
        finally:
            cursor.close()

    def cursor(self) -> Any:
        """One driver cursor for a loop of statements whose cost is measured: a cursor per
        statement would add its own cost (on DuckDB each cursor is its own connection)."""
        return self.raw.cursor()

    def version(self) -> str:
        return str(self.execute(self._client.version_query)[0][0])

    def ready(self) -> None:
        self.execute(self._client.ready_query)

    def close(self) -> None:
        self.raw.close()


@dataclass(frozen=True)
class SqlClient:
    protocol: str  # "postgres wire", "mysql wire", "in-process"
    connect: Callable[[Endpoint, float], Any]  # a DB-API connection in autocommit mode
    version_query: str
    ready_query: str = "select 1"
    sqlalchemy_driver: str | None = None  # None: embedded, the URL names the engine key
    # Wraps a raw connection for SQLAlchemy when its dialect cannot open the file itself beside
    # ours (DuckDB refuses a second configuration of an open file).
    sqlalchemy_wrap: Callable[[Any], Any] | None = None
    needs: tuple[str, ...] = ()
    placeholder: str = "%s"  # DB-API paramstyle marker: format for psycopg/PyMySQL, qmark in-process
    # SQLAlchemy connect_args that reach a server through its Unix socket (the driver's own names).
    sqlalchemy_socket_args: Callable[[Path], dict[str, Any]] | None = None
    # The driver can send a file from this host to the server's bulk load (MySQL's LOAD DATA LOCAL
    # INFILE): `connect` then takes local_files=True. Off unless a session asks for it.
    local_files: bool = False
    has_sqlalchemy_dialect: bool = True  # chDB has none: its workloads use the DB-API connection

    def open(self, endpoint: Endpoint, timeout: float = 10.0, *, local_files: bool = False) -> SqlSession:
        if not local_files:
            return SqlSession(self.connect(endpoint, timeout), self)
        if not self.local_files:
            raise TypeError(f"the {self.protocol} client cannot send local files to its server")
        return SqlSession(self.connect(endpoint, timeout, local_files=True), self)


class DocumentSession:
    def __init__(self, client: Any, database: str):
        self._mongo = client
        self.raw = client[database]

    def execute(self, operation: Callable[[Any], Any]) -> Any:
        return operation(self.raw)

    def version(self) -> str:
        info = self._mongo.server_info()
        if info.get("ferretdbVersion"):  # FerretDB answers MongoDB's version it is compatible with
            return (f"FerretDB {str(info['ferretdbVersion']).removeprefix('v')} (MongoDB wire protocol, compatible "
                    f"with MongoDB {info.get('version')})")
        return f"MongoDB {info.get('version')} (git {info.get('gitVersion', '')})"

    def ready(self) -> None:
        self._mongo.admin.command("ping")

    def close(self) -> None:
        self._mongo.close()


@dataclass(frozen=True)
class DocumentClient:
    protocol: str = "mongodb wire"
    needs: tuple[str, ...] = ()
    # MongoClient options an engine needs beyond host and credentials (an authentication mechanism).
    options: tuple[tuple[str, Any], ...] = ()

    def open(self, endpoint: Endpoint, timeout: float = 10.0, *, local_files: bool = False) -> DocumentSession:
        import pymongo

        if local_files:
            raise TypeError(f"the {self.protocol} client cannot send local files to its server")

        client = pymongo.MongoClient(
            host=endpoint.host, port=endpoint.port, username=endpoint.user, password=endpoint.password,
            serverSelectionTimeoutMS=int(timeout * 1000), connectTimeoutMS=int(timeout * 1000), **dict(self.options),
        )
        return DocumentSession(client, endpoint.database or "bench")


def _postgres_socket(socket: Path) -> dict[str, Any]:
    # libpq takes the socket's directory as host and finds `.s.PGSQL.<port>` there.
    return {"host": str(socket.parent), "port": int(socket.suffix.lstrip("."))}


def _mysql_socket(socket: Path) -> dict[str, Any]:
    return {"unix_socket": str(socket)}


def _connect_postgres(endpoint: Endpoint, timeout: float) -> Any:
    import psycopg

    where = _postgres_socket(endpoint.socket) if endpoint.socket else {"host": endpoint.host, "port": endpoint.port}
    return psycopg.connect(**where, user=endpoint.user, password=endpoint.password,
                           dbname=endpoint.database, autocommit=True, connect_timeout=max(1, int(timeout)))


def _connect_mysql(endpoint: Endpoint, timeout: float, local_files: bool = False) -> Any:
    import pymysql

    where = _mysql_socket(endpoint.socket) if endpoint.socket else {"host": endpoint.host, "port": endpoint.port}
    return pymysql.connect(**where, user=endpoint.user, password=endpoint.password, local_infile=local_files,
                           database=endpoint.database, autocommit=True, connect_timeout=max(1, int(timeout)))


def postgres_wire(version_query: str = "select version()") -> SqlClient:
    return SqlClient("postgres wire", _connect_postgres, version_query, sqlalchemy_driver="postgresql+psycopg",
                     sqlalchemy_socket_args=_postgres_socket)


def mysql_wire(version_query: str, needs: tuple[str, ...] = ()) -> SqlClient:
    return SqlClient("mysql wire", _connect_mysql, version_query, sqlalchemy_driver="mysql+pymysql", needs=needs,
                     sqlalchemy_socket_args=_mysql_socket, local_files=True)


class KeyValueSession:
    """A session on an embedded key-value store. Every session of one path shares one open store
    (RocksDB locks its directory against a second opener, even in the same process); the last
    session to close closes it."""

    def __init__(self, shared: "_SharedStore"):
        self._shared = shared
        self.raw = shared.store
        self._closed = False

    def execute(self, operation: Callable[[Any], Any]) -> Any:
        return operation(self.raw)

    def family(self, name: str) -> Any:
        """The store's column family `name` (a key space of its own), created on first use."""
        return self._shared.family(name)

    def version(self) -> str:
        return self._shared.client.version(self.raw, self._shared.path)

    def ready(self) -> None:
        self.raw.get(b"")

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._shared.release()


class _SharedStore:
    def __init__(self, client: "KeyValueClient", path: Path):
        self.client, self.path = client, path
        self.store = client.open_store(path)
        self.families: dict[str, Any] = {}
        self.users = 0

    def family(self, name: str) -> Any:
        if name not in self.families:
            self.families[name] = self.client.create_family(self.store, name)
        return self.families[name]

    def release(self) -> None:
        with _stores_lock:
            self.users -= 1
            if self.users:
                return
            _stores.pop(self.path, None)
        for handle in self.families.values():  # a family's handle keeps the store (and its lock) alive
            handle.close()
        self.store.close()


_stores: dict[Path, _SharedStore] = {}
_stores_lock = threading.Lock()


@dataclass(frozen=True)
class KeyValueClient:
    """An embedded key-value store: `open_store(path)` opens (creating) it, `create_family(store,
    name)` adds a key space, `version(store, path)` names the library and the store's version."""

    open_store: Callable[[Path], Any]
    create_family: Callable[[Any, str], Any]
    version: Callable[[Any, Path], str]
    protocol: str = "in-process key-value"
    needs: tuple[str, ...] = ()

    def open(self, endpoint: Endpoint, timeout: float = 10.0, *, local_files: bool = False) -> KeyValueSession:
        if local_files:
            raise TypeError(f"the {self.protocol} client has no server to send files to")
        path = Path(endpoint.path)
        with _stores_lock:
            shared = _stores.get(path)
            if shared is None:
                shared = _stores[path] = _SharedStore(self, path)
            shared.users += 1
        return KeyValueSession(shared)
