"""A runner killed with SIGKILL never writes its run's final status: the next benchlib process
tells the dead run from a live one by its owner process, and says when, by whom and why."""
import subprocess
import sys

import pytest

from benchlib.data.liveness import reap_dead_runs
from benchlib.data.store import Store

RUNNER = """
import sys, time
from benchlib.run.measure import Run
from benchlib.data.store import Store

with Run("liveness", {"n": 1}, notebook="test", store=Store(sys.argv[1])) as run:
    print(run.run_id, flush=True)
    time.sleep(600)
"""


def _row(store, run_id):
    return store.query("select status, ended_at, status_note, owner from runs where run_id = ?",
                       [run_id]).iloc[0]


@pytest.mark.perf  # Run() probes perf
def test_killed_runner_reads_aborted_in_benchlib_runs(project):
    store = Store(project.data / "results")
    runner = subprocess.Popen([sys.executable, "-c", RUNNER, str(store.root)], stdout=subprocess.PIPE,
                              text=True, env=project.env)
    try:
        run_id = runner.stdout.readline().strip()
        assert run_id, "the runner did not start its run"
        assert reap_dead_runs(store) == []  # a live owner's run is left alone
        assert _row(store, run_id)["status"] == "running"
    finally:
        runner.kill()
        runner.wait()

    result = project.run("runs")
    assert result.returncode == 0, result.stderr
    line = next(line for line in result.stdout.splitlines() if run_id in line)
    assert " aborted " in line, result.stdout
    row = _row(store, run_id)
    assert row["status"] == "aborted" and row["ended_at"] is not None
    assert row["status_note"].startswith(f"owner process {runner.pid} on ")
    assert "is gone; decided by " in row["status_note"] and " UTC" in row["status_note"]
    assert reap_dead_runs(store) == []  # decided once
