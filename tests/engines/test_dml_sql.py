"""Each engine's dialect pieces run on the real engine, for both primary-key kinds."""
import pytest

import benchlib
from benchlib.engines import PK_KINDS


@pytest.mark.parametrize("key", ["postgres", "mariadb", "sqlite", "duckdb"])
def test_dml_dialect_on_the_real_engine(key):
    with benchlib.start(key) as eng:
        dml = eng.engine.dml
        conn = eng.connect()
        for kind in PK_KINDS:
            eng.query("drop table if exists demo", conn)
            if kind == "sequential" and key == "duckdb":
                eng.query("drop sequence if exists demo_id_seq", conn)
            for sql in dml.create_statements(kind):
                eng.query(sql, conn)
            eng.query(dml.generate_rows(500), conn)
            eng.query(dml.generate_rows(501), conn)
            assert eng.query("select count(*), count(distinct id), min(value), max(value) from demo", conn)[0] == \
                (1001, 1001, 1, 501)
            if dml.sleep:
                eng.query(dml.sleep(0.01), conn)
            if dml.vacuum:
                eng.query(dml.vacuum, conn)
            eng.query("update demo set value = value + 1", conn)
            assert eng.query("select min(value) from demo", conn)[0][0] == 2
            eng.query(dml.delete_all, conn)
            assert eng.query("select count(*) from demo", conn)[0][0] == 0
