"""Ctrl-C during `benchlib run`: one line, exit 130; the kernel is interrupted first, so the
notebook's own `with` blocks close its run (failed, not left running) before the kernel goes."""
import json
import os
import signal
import subprocess
import time

import pytest

from benchlib.data.store import Store


def _interruptible() -> None:
    # A shell gives its foreground job the default Ctrl-C handling; a suite started in the
    # background (`make test &` from a script) hands its children SIGINT *ignored*, and Python
    # keeps an inherited SIG_IGN, so the runner would never see the interrupt.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.notebook
def test_ctrl_c_prints_one_line_and_closes_the_run(project, tmp_path):
    marker = tmp_path / "kernel.pid"
    # Its own session, like a shell's foreground job: Ctrl-C goes to the whole group.
    proc = project.popen("run", "01", "--set", "tiny", "-P", "seconds=60", "-P", f"marker={marker}",
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                         preexec_fn=_interruptible)
    try:
        deadline = time.monotonic() + 120
        while not (marker.exists() and marker.read_text()):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the kernel never started the notebook"
            time.sleep(0.1)
        time.sleep(2)  # inside the measured run
        os.killpg(proc.pid, signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130
    lines = stderr.strip().splitlines()
    assert lines[-1] == "benchlib: interrupted", stderr
    assert all(line.startswith("01-tiny | ") for line in lines[:-1]), stderr  # progress lines only
    kernel_pid = int(marker.read_text())
    assert not os.path.exists(f"/proc/{kernel_pid}"), "the kernel outlived the runner"

    (run,) = Store(project.data / "results").query("select status, error from runs").to_dict("records")
    assert run["status"] == "failed" and "KeyboardInterrupt" in run["error"]
    (folder,) = project.report_folders()
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["complete"] is False
    assert [(o["notebook"], o["error"]) for o in manifest["outcomes"]] == [("01-tiny", "interrupted")]
    assert "incomplete" in (project.reports / "index.html").read_text()
