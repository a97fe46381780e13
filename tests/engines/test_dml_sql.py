"""Each engine's DML dialect runs on the real engine, for both primary-key kinds."""
import pytest
from engine_cases import dml_roundtrip, runnable

import benchlib
from benchlib.engines import ENGINES
from benchlib.workloads.dml import PK_KINDS, dialect_for

pytestmark = pytest.mark.docker


@pytest.mark.parametrize("key, kind", [runnable(key, kind, id=f"{key}-{kind}")
                                       for key, engine in ENGINES.items() if dialect_for(engine)
                                       for kind in PK_KINDS])
def test_dml_dialect_on_the_real_engine(key, kind):
    with benchlib.start(key) as eng:
        dml_roundtrip(eng, kind)
