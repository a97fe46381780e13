"""The batch's harness share: wall time outside the measured windows of the runs each notebook
recorded, read from a real store."""
from pathlib import Path

import pytest

from benchlib.batch import NotebookOutcome, harness_shares, measured_seconds
from benchlib.batch.harness import summary_lines
from benchlib.run.measure import Run
from benchlib.data.store import Store, utcnow


def _window_rows(run_id: str, seq: int, window: str, wall: float) -> list[dict]:
    now = utcnow()
    common = {"run_id": run_id, "instance_id": "x-1", "engine": "postgres", "experiment": "t", "phase": "insert",
              "repetition": 1, "window": window, "source": "clock", "status": "ok", "started_at": now,
              "ended_at": now, "check_name": None, "check_value": None, "seq": seq, "scope": "server",
              "labels": "{}"}
    # One wall_time row per window, beside the window's other metrics (which must not count).
    return [{**common, "metric": "wall_time", "value": wall, "unit": "s"},
            {**common, "metric": "cpu_time", "value": 99.0, "unit": "s", "source": "cgroup"}]


@pytest.fixture
def default_store(tmp_path, monkeypatch) -> Store:
    monkeypatch.setenv("BENCHLIB_DATA_DIR", str(tmp_path / "data"))
    return Store.default()


def test_measured_seconds_sums_the_wall_time_of_every_window_of_the_runs(default_store):
    run_ids = []
    for windows in ([("baseline", 1.0), ("phase", 2.0), ("settle", 0.5)], [("warmup-phase", 4.0)]):
        with Run("t", {}, store=default_store) as run:
            for seq, (window, wall) in enumerate(windows):
                default_store.append_measurements(run.run_id, seq, _window_rows(run.run_id, seq, window, wall))
        run_ids.append(run.run_id)
    assert measured_seconds(run_ids[:1]) == pytest.approx(3.5)
    assert measured_seconds(run_ids) == pytest.approx(7.5)
    assert measured_seconds([]) == 0.0


def _outcome(name: str, seconds: float, publish: float, measured: float | None) -> NotebookOutcome:
    return NotebookOutcome(name, None, True, seconds, Path(f"{name}.ipynb"), None, publish_seconds=publish,
                           measured_seconds=measured)


def test_harness_share_per_notebook_and_for_the_batch():
    outcomes = [_outcome("01-dml", 90.0, 10.0, 60.0), _outcome("02-clustered", 45.0, 5.0, 10.0)]
    notebook_1, notebook_2, batch = harness_shares(outcomes, batch_wall_s=200.0)
    assert (notebook_1.wall_s, notebook_1.harness_s, notebook_1.share) == (100.0, 40.0, 0.4)
    assert (notebook_2.wall_s, notebook_2.harness_s) == (50.0, 40.0)
    assert (batch.label, batch.measured_s, batch.harness_s, batch.share) == ("batch", 70.0, 130.0, 0.65)
    lines = summary_lines([notebook_1, notebook_2, batch], preparing_s=30.0)
    assert lines == [
        "harness share (wall time outside measured windows):",
        "  01-dml: 40 s of 100 s outside measured windows (40%); measured 60 s",
        "  02-clustered: 40 s of 50 s outside measured windows (80%); measured 10 s",
        "  batch: 130 s of 200 s outside measured windows (65%); measured 70 s",
        "  of which preparing engines: 30 s",
    ]


def test_an_unknown_measured_time_is_said_not_guessed():
    *_, batch = harness_shares([_outcome("01-dml", 10.0, 0.0, None)], batch_wall_s=12.0)
    assert batch.harness_s is None and batch.share is None
    assert batch.line() == "batch: 12 s, measured windows unknown (the store could not say)"
