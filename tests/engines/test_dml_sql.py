"""Each engine's DML dialect runs on the real engine, for both primary-key kinds: one start per
engine, the table dropped between the kinds (a start costs seconds, the statements milliseconds)."""
import pytest
from engine_cases import dml_roundtrip, runnable

import benchlib
from benchlib.engines import ENGINES, DocumentClient
from benchlib.workloads.dml import PK_KINDS, dialect_for

pytestmark = pytest.mark.docker


@pytest.mark.parametrize("key", [runnable(key) for key, engine in ENGINES.items() if dialect_for(engine)])
def test_dml_dialect_on_the_real_engine(key):
    with benchlib.start(key) as eng:
        for i, kind in enumerate(PK_KINDS):
            # A document dialect's create drops its collection itself.
            if i and not isinstance(eng.engine.client, DocumentClient):
                eng.session().execute("drop table demo")
            dml_roundtrip(eng, kind)
