"""perf helpers die with their owner, and what a killed owner left (its window folder, a perf
started before the death signal existed) is removed by the next benchlib process."""
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchlib.host import perf

pytestmark = [pytest.mark.perf, pytest.mark.skipif(shutil.which("perf") is None, reason="needs linux perf")]

OWNER = """
import os, sys, time
from benchlib.host.perf import PerfWindow

window = PerfWindow(pid=os.getpid()).prepare()
print(window._dir, flush=True)
time.sleep(600)
"""


def _wait_for(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_perf_dies_with_its_sigkilled_owner_and_its_folder_is_reaped(tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    owner = subprocess.Popen([sys.executable, "-c", OWNER], stdout=subprocess.PIPE, text=True, env=env)
    try:
        folder = Path(owner.stdout.readline().strip())
        assert folder.parent == tmp_path and folder.name.startswith(f"benchlib-perf-{owner.pid}-")
        assert _wait_for(lambda: perf._processes_using(folder), 10), "perf never started"
        assert perf.reap_orphans(tmp_path) == []  # a live owner's window is left alone
    finally:
        owner.kill()
        owner.wait()
        owner.stdout.close()
    assert _wait_for(lambda: not perf._processes_using(folder), 1.0), "perf outlived its SIGKILLed owner"
    assert perf.reap_orphans(tmp_path) == [folder]
    assert not folder.exists()


@pytest.mark.docker  # `benchlib cleanup` also reaps containers
def test_cleanup_kills_an_orphaned_perf_and_removes_its_folder(tmp_path):
    """A perf re-parented to PID 1 (started without the death signal, as before): cleanup ends it."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    folder = tmp_path / f"{perf.DIR_PREFIX}{gone.pid}-1-legacy"  # owner: a process that has exited
    folder.mkdir()
    for fifo in ("ctl", "ack"):
        os.mkfifo(folder / fifo)
    orphan = subprocess.Popen(["perf", "stat", "-x,", "-o", str(folder / "out.csv"), "--delay=-1",
                               f"--control=fifo:{folder / 'ctl'},{folder / 'ack'}", "-e", "task-clock",
                               "-p", str(os.getpid())], start_new_session=True, stderr=subprocess.DEVNULL)
    try:
        env = {**os.environ, "TMPDIR": str(tmp_path)}
        result = subprocess.run([str(Path(sys.executable).parent / "benchlib"), "cleanup"], env=env,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        assert "removed 1 perf window folder(s) of dead processes" in result.stdout
        assert orphan.wait(timeout=5) == -signal.SIGKILL
        assert not folder.exists()
    finally:
        if orphan.poll() is None:
            orphan.kill()
            orphan.wait()
