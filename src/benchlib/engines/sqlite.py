import sqlite3
from pathlib import Path

from .base import DmlDialect, EmbeddedEngine


def _connect(path: Path) -> sqlite3.Connection:
    # isolation_level=None: autocommit, so each statement is its own transaction as on the servers.
    return sqlite3.connect(path, isolation_level=None, check_same_thread=False)


ENGINE = EmbeddedEngine(
    key="sqlite",
    title="SQLite",
    connect=_connect,
    version_query="select 'SQLite ' || sqlite_version()",
    library=lambda: f"python-sqlite3 (SQLite {sqlite3.sqlite_version})",
    color="#44A8D8",
    file_name="bench.sqlite",
    report_note="The delete phase has a WHERE clause so SQLite deletes row by row instead of taking its "
                "truncate shortcut.",
    dml=DmlDialect(
        pk_columns={"uuid": "id blob default (randomblob(16))", "sequential": "id integer"},
        generate_rows=lambda n: (
            "insert into demo(value) with recursive s(n) as "
            f"(select 1 union all select n + 1 from s where n < {n}) select n from s"
        ),
        sleep=None,
        # A plain `delete from demo` takes SQLite's truncate shortcut (drops the pages without
        # visiting rows); the WHERE clause makes it delete row by row like every other engine.
        delete_all="delete from demo where id is not null",
    ),
)
