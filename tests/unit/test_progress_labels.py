"""Console and bar labels of a step: repetitions beyond the base count shown as such."""
import pytest

from benchlib.run.progress import _describe, console_line


@pytest.mark.parametrize("labels, expected", [
    (dict(engine="postgres", repetition=2, repetitions=3, phase="insert"), "postgres rep 2/3 | insert"),
    (dict(engine="postgres", repetition=2, repetitions=3, max_repetitions=3), "postgres rep 2/3"),
    (dict(engine="postgres", repetition=2, repetitions=3, max_repetitions=5), "postgres rep 2 (3..5)"),
    (dict(engine="postgres", repetition=4, repetitions=3, max_repetitions=5, phase="update"),
     "postgres rep 4 (3..5) | update"),
    (dict(engine="mariadb", repetition=4, repetitions=3), "mariadb rep 4 (3+)"),
    (dict(engine="mariadb", repetition=4, repetitions=3, max_repetitions=3), "mariadb rep 4 (3+)"),
    (dict(repetition=1), "rep 1"),
    (dict(engine="duckdb", phase="select", threads=4), "duckdb | select | threads=4"),
])
def test_repetition_labels(labels, expected):
    assert _describe(labels) == expected


def test_console_line_shows_a_repetition_beyond_the_base_count():
    record = {"t": 0.0, "labels": dict(engine="postgres", repetition=5, repetitions=3, max_repetitions=5,
                                       phase="delete"), "done": 20, "total": 20, "unit": "phases", "eta_s": None}
    line = console_line("01-dml-cpu-cost", record, 75.0)
    assert line == "01-dml-cpu-cost | postgres rep 5 (3..5) | delete | 20/20 phases | 1m15s elapsed"
