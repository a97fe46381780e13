"""A sysbench load that did not complete is refused before anything is measured on it: a real
PostgreSQL, a real sysbench prepare, then the table made short the way a killed load leaves it."""
import pytest

import benchlib
from benchlib import sysbench

pytestmark = [pytest.mark.docker,
              pytest.mark.skipif(sysbench.unavailable_reason() is not None, reason=str(sysbench.unavailable_reason()))]


def test_a_short_table_is_refused_with_its_counts():
    with benchlib.start("postgres") as eng:
        sysbench.prepare(eng, tables=1, table_size=500)  # complete: checked and accepted
        eng.query("delete from sbtest1 where id > 450")
        with pytest.raises(sysbench.SysbenchError, match=r"sbtest1 on postgres with 450 rows of 500: the load did "
                                                         r"not complete"):
            sysbench.check_loaded(eng, tables=1, table_size=500)
