"""Helpers shared by the engine tests (a plain module: conftest modules are not importable by name)."""
import pytest

from benchlib.run.validation import unavailable_reason


def runnable(key, *values, id=None):
    """A test parameter for `key`, skipped with the reason `benchlib engines` gives when this host
    cannot run it."""
    reason = unavailable_reason(key)
    marks = [pytest.mark.skip(reason=reason if reason.startswith(key) else f"{key}: {reason}")] if reason else []
    return pytest.param(key, *values, marks=marks, id=id or key)


def dml_roundtrip(eng, kind):
    """The DML workload's statements, each checked, on a running engine at a small scale."""
    from benchlib.engines import DocumentClient
    from benchlib.workloads.dml import dialect_for

    dialect = dialect_for(eng.engine)
    if isinstance(eng.engine.client, DocumentClient):
        return document_roundtrip(eng, dialect, kind)
    session = eng.session()
    for statement in dialect.create(kind):
        session.execute(statement)
    session.execute(dialect.insert(500, kind))
    session.execute(dialect.insert(501, kind))
    # The MySQL family's digit cross join with LIMIT may pick any of its numbers (MySQL 9 does):
    # counts and distinct keys are exact, values only >= 1.
    count, distinct, low, total = session.execute("select count(*), count(distinct id), min(value), sum(value) "
                                                  "from demo")[0]
    assert (count, distinct) == (1001, 1001) and low >= 1
    assert dialect.scalar(session.execute(dialect.count_values)) == 1001
    if dialect.sleep:
        session.execute(dialect.sleep(0.01))
    if dialect.maintain:
        session.execute(dialect.maintain)
    session.execute(dialect.update_all)
    assert session.execute("select sum(value) from demo")[0][0] == total + 1001
    session.execute(dialect.delete_all)
    assert dialect.scalar(session.execute(dialect.count_rows)) == 0
    return session


def document_roundtrip(eng, dialect, kind):
    """The same phases as pymongo operations, each checked through an aggregation of its own."""
    session = eng.session()
    for operation in dialect.create(kind):
        session.execute(operation)
    session.execute(dialect.insert(500, kind))
    session.execute(dialect.insert(501, kind))
    # Checked in this process from the documents themselves: FerretDB 1.24 lacks some of
    # MongoDB's aggregation accumulators ($min), and the check must not depend on them.
    values = lambda db: [d["value"] for d in db.demo.find({}, {"value": 1})]  # noqa: E731
    before = session.execute(values)
    assert (len(before), min(before), sum(before)) == (1001, 1, 500 * 501 // 2 + 501 * 502 // 2), \
        (len(before), min(before), sum(before))
    assert len(session.execute(lambda db: db.demo.distinct("_id"))) == 1001
    assert dialect.scalar(session.execute(dialect.count_values)) == 1001
    session.execute(dialect.update_all)
    assert sum(session.execute(values)) == sum(before) + 1001
    session.execute(dialect.delete_all)
    assert dialect.scalar(session.execute(dialect.count_rows)) == 0
    return session
