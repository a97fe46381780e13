"""The perf CSV parser on real output captured on this kind of host (see fixtures/perf/README.md)."""
from pathlib import Path

from benchlib.host.perf import EVENTS, parse_csv

PERF = Path(__file__).resolve().parents[1] / "fixtures" / "perf"


def test_cgroup_mode_counts_task_clock_and_flags_unsupported_events():
    readings = parse_csv((PERF / "cgroup_busy.csv").read_text(), cgroup_mode=True)
    assert set(readings) == set(EVENTS)
    clock = readings["task-clock"]
    assert clock.status == "ok" and clock.value == 146.04 and clock.unit == "msec" and clock.running_pct == 100.0
    for event in ("instructions:u", "cycles"):
        assert readings[event].status == "unsupported"
        assert readings[event].value is None  # never 0


def test_idle_cgroup_is_not_counted_not_zero():
    readings = parse_csv((PERF / "cgroup_idle.csv").read_text(), cgroup_mode=True)
    assert readings["task-clock"].status == "not_counted"
    assert readings["task-clock"].value is None


def test_process_mode_has_no_cgroup_column():
    readings = parse_csv((PERF / "process.csv").read_text(), cgroup_mode=False)
    assert readings["task-clock"].value == 117.85
    assert readings["task-clock"].running_pct == 100.0
    assert readings["instructions:u"].status == "unsupported"


def test_comment_and_blank_lines_are_ignored():
    assert parse_csv("# started on Sat\n\n", cgroup_mode=True) == {}
