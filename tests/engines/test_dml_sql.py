"""Each engine's DML dialect runs on the real engine, for both primary-key kinds."""
import pytest

import benchlib
from benchlib.engines import ENGINES
from benchlib.validation import unavailable_reason
from benchlib.workloads.dml import PK_KINDS, dialect_for

pytestmark = pytest.mark.docker


def _supported_and_runnable():
    for key, engine in ENGINES.items():
        if dialect_for(engine) is None:
            continue
        reason = unavailable_reason(key)
        for kind in PK_KINDS:
            marks = [pytest.mark.skip(reason=f"{key}: {reason}")] if reason else []
            yield pytest.param(key, kind, marks=marks, id=f"{key}-{kind}")


@pytest.mark.parametrize("key, kind", list(_supported_and_runnable()))
def test_dml_dialect_on_the_real_engine(key, kind):
    with benchlib.start(key) as eng:
        dialect = dialect_for(eng.engine)
        session = eng.session()
        for statement in dialect.create(kind):
            session.execute(statement)
        session.execute(dialect.insert_generated(500))
        session.execute(dialect.insert_generated(501))
        assert session.execute("select count(*), count(distinct id), min(value), max(value) from demo")[0] == \
            (1001, 1001, 1, 501)
        assert dialect.scalar(session.execute(dialect.count_values)) == 1001
        if dialect.sleep:
            session.execute(dialect.sleep(0.01))
        if dialect.maintain:
            session.execute(dialect.maintain)
        session.execute(dialect.update_all)
        assert session.execute("select min(value) from demo")[0][0] == 2
        session.execute(dialect.delete_all)
        assert dialect.scalar(session.execute(dialect.count_rows)) == 0
