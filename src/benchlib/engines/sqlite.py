import sqlite3

from .base import ChildDriver, Embedded, Engine
from .clients import SqlClient


def _connect(endpoint, timeout):
    # isolation_level=None: autocommit, so each statement is its own transaction as on the servers.
    return sqlite3.connect(endpoint.path, isolation_level=None, check_same_thread=False, timeout=timeout)


ENGINE = Engine(
    key="sqlite",
    title="SQLite",
    color="#44A8D8",
    family="sqlite",
    client=SqlClient("in-process", _connect, "select 'SQLite ' || sqlite_version()", placeholder="?"),
    embedded=Embedded(library=lambda: f"python-sqlite3 (SQLite {sqlite3.sqlite_version})", file_name="bench.sqlite",
                      child_driver=ChildDriver("sqlite3", {"isolation_level": None, "check_same_thread": False})),
    durability=(("synchronous", "pragma synchronous"), ("journal_mode", "pragma journal_mode")),
    isolation_note="SERIALIZABLE, SQLite's only level (one writer at a time; no setting to read)",
)
