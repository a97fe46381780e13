from .base import ChildDriver, Embedded, Engine
from .clients import SqlClient


def _connect(endpoint, timeout):
    import duckdb

    return duckdb.connect(str(endpoint.path))


def _library() -> str:
    import duckdb

    return f"duckdb=={duckdb.__version__}"


def _sqlalchemy_wrap(conn):
    from duckdb_engine import ConnectionWrapper

    return ConnectionWrapper(conn)


ENGINE = Engine(
    key="duckdb",
    title="DuckDB",
    color="#B8A600",
    family="duckdb",
    client=SqlClient("in-process", _connect, "select 'DuckDB ' || version()", sqlalchemy_wrap=_sqlalchemy_wrap,
                     placeholder="?"),
    embedded=Embedded(library=_library, file_name="bench.duckdb", child_driver=ChildDriver("duckdb")),
    durability_note="no durability setting to read: DuckDB writes its WAL at each commit and checkpoints it into "
                    "the database file past checkpoint_threshold",
    isolation_note="snapshot isolation, DuckDB's only level (MVCC with optimistic concurrency control: a "
                   "conflicting update fails; no setting to read)",
)
