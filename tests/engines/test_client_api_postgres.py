"""The client-API workload on PostgreSQL: the SQLAlchemy layers send plain statements like the
driver layer they are set beside, so a layer's server CPU is not psycopg's own preparing."""
import pytest

import benchlib
from benchlib.workloads.client_api.dialects import dialect_for
from benchlib.workloads.client_api.layers import LAYERS

pytestmark = pytest.mark.docker


def _prepared_after_repeats(engine, table) -> int:
    """Statements the server holds prepared for a connection after 10 executions of one text
    (psycopg prepares a text by itself from its 5th execution unless told not to)."""
    from sqlalchemy import bindparam, select

    query = select(table).where(table.c.id == bindparam("key"))
    with engine.connect() as c:
        for key in range(10):
            c.execute(query, {"key": key})
        return c.exec_driver_sql("select count(*) from pg_prepared_statements").scalar()


def test_core_sends_plain_statements_like_the_driver_layer():
    dialect = dialect_for(benchlib.get_engine("postgres"))
    with benchlib.start("postgres") as eng:
        eng.query(dialect.create_table())
        core = LAYERS["core"](dialect, eng, False, 10)
        try:
            assert _prepared_after_repeats(core.engine, core.table) == 0
        finally:
            core.close()
        # The check can fail: psycopg's default on the same engine prepares the repeated text.
        default = eng.sqlalchemy_engine()
        try:
            assert _prepared_after_repeats(default, core.table) >= 1
        finally:
            default.dispose()
