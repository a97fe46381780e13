"""ClickHouse as a library in this process through chDB (PyPI: the ClickHouse server's engine
compiled into a Python extension): MergeTree tables on local files, the ClickHouse SQL dialect, no
server and no network. Seed 001's ClickHouse ran as a server (8 vCPU, 32 GB); the engine that
stores and scans the columns is the same code. chDB initialises one embedded server per process,
at one data path: every connection of a start must be closed before the next start opens another
path (the lifecycle closes a start's sessions when it stops)."""
from __future__ import annotations

from .base import Embedded, Engine
from .clients import SqlClient


def _connect(endpoint, timeout):
    from chdb import dbapi

    return dbapi.connect(str(endpoint.path))


def _library() -> str:
    from importlib.metadata import version

    return f"chdb=={version('chdb')} (chdb-core {version('chdb-core')})"


ENGINE = Engine(
    key="chdb",
    title="ClickHouse (chDB)",
    color="#E8590C",
    family="clickhouse",
    client=SqlClient("in-process", _connect, "select 'ClickHouse ' || version() || ' (chDB)'", placeholder="%s",
                     needs=("chdb",), has_sqlalchemy_dialect=False),
    # MergeTree merges parts on threads of its own after an insert returns: measured in settle windows.
    embedded=Embedded(library=_library, file_name="bench.chdb", background_work=True),
    # A MergeTree insert writes a new part; whether it is fsynced before the insert returns is a table setting.
    durability=(("fsync_after_insert", "select value from system.merge_tree_settings where name = "
                                       "'fsync_after_insert'"),),
    note="ClickHouse's engine embedded through chDB, one process for client and engine: its CPU is the notebook "
         "process's, driver included, and it uses the host's cores (max_threads = cores).",
    no_valgrind_reason="ClickHouse's whole engine in one 500 MB library with its own thread pools: never tried "
                       "under valgrind, so no child driver is declared for it",
)
