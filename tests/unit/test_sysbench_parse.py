"""The sysbench report parser on real captured output (sysbench 1.0.20, Debian)."""
from pathlib import Path

import pytest

from benchlib.run.sysbench import SysbenchError, parse

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sysbench"


def test_read_write_summary_and_histogram():
    result = parse((FIXTURES / "pgsql_oltp_read_write_histogram.txt").read_text())
    assert (result.transactions, result.tps) == (1156, 574.56)
    assert (result.queries, result.qps) == (17366, 8631.34)
    assert (result.ignored_errors, result.reconnects) == (2, 0)
    assert result.total_time_s == 2.0102
    assert (result.latency_min_ms, result.latency_avg_ms, result.latency_max_ms) == (2.11, 3.47, 70.01)
    assert result.latency_pct_ms == 4.74
    # The histogram counts every event, and sysbench's own percentile line is read off it.
    assert sum(c for _, c in result.histogram) == result.transactions
    assert result.percentile_ms(95) == pytest.approx(result.latency_pct_ms, rel=0.02)
    assert result.percentile_ms(99) >= result.percentile_ms(95)


@pytest.mark.parametrize("name", ["pgsql_oltp_point_select_histogram.txt", "mysql_oltp_write_only_histogram.txt"])
def test_other_captures_parse_consistently(name):
    result = parse((FIXTURES / name).read_text())
    assert result.transactions > 0 and result.tps > 0
    assert sum(c for _, c in result.histogram) == result.transactions
    assert result.latency_min_ms <= result.latency_avg_ms <= result.latency_max_ms


def test_truncated_output_is_an_error_naming_what_is_missing():
    text = (FIXTURES / "pgsql_oltp_read_write_histogram.txt").read_text()
    with pytest.raises(SysbenchError, match="transactions"):
        parse(text.split("SQL statistics")[0])
