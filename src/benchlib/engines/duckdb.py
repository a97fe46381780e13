from pathlib import Path

from .base import DmlDialect, EmbeddedEngine


def _connect(path: Path):
    import duckdb

    return duckdb.connect(str(path))


def _library() -> str:
    import duckdb

    return f"duckdb=={duckdb.__version__}"


def _sqlalchemy_wrap(conn):
    from duckdb_engine import ConnectionWrapper

    return ConnectionWrapper(conn)


ENGINE = EmbeddedEngine(
    key="duckdb",
    title="DuckDB",
    connect=_connect,
    version_query="select 'DuckDB ' || version()",
    library=_library,
    color="#B8A600",
    file_name="bench.duckdb",
    sqlalchemy_wrap=_sqlalchemy_wrap,
    dml=DmlDialect(
        pk_columns={
            "uuid": "id uuid default gen_random_uuid()",
            "sequential": "id bigint default nextval('demo_id_seq')",
        },
        pre_create={"sequential": ("create sequence demo_id_seq",)},
        generate_rows=lambda n: f"insert into demo(value) select range from range(1, {n} + 1)",
        sleep=None,
    ),
)
