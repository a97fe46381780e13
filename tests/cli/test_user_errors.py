"""A user's mistake costs one line on stderr and exit 2, before any kernel starts and before any
report folder exists; `--debug` brings the traceback back."""
import os
import signal
import subprocess
import sys

import pytest

from cliproject import BENCHLIB, ROOT, one_line


def test_unknown_parameter_set_names_it_and_lists_the_known_sets(project):
    project.add_notebook("01-tiny", sets={"tiny": "n: 2\n", "default": "n: 3\n"})
    result = project.run("run", "01", "--set", "nosuchset")
    assert result.returncode == 2
    line = one_line(result.stderr)
    assert "'nosuchset'" in line and "known sets: default, tiny" in line, line
    assert project.report_folders() == []


def test_batch_checks_every_notebook_before_running_any(project):
    project.add_notebook("02-second", sets={"default": "n: 2\n"})  # no `tiny` set
    project.add_notebook("03-third", sets={"tiny": "n: 0\n"})  # a value its workload rejects
    result = project.run("batch", "--set", "tiny")
    assert result.returncode == 2
    line = one_line(result.stderr)
    assert "02-second has no parameter set 'tiny'" in line and "known sets: default" in line, line
    assert "n must be an integer >= 1, got 0" in line, line
    assert project.report_folders() == [] and not (project.data / "results" / "runs").exists()


@pytest.mark.parametrize("args, expected", [
    (["run", "01", "-p", "missing.yaml"], "cannot read parameter file missing.yaml"),
    (["run", "01", "-p", "bad.yaml"], "bad.yaml: invalid YAML at line 2, column 10: mapping values are not allowed here"),
    (["run", "01", "-P", "n=[1"], "-P 'n=[1': invalid YAML"),
    (["run", "nosuch"], "no notebook 'nosuch'; known notebooks: 01-tiny"),
    (["run", "01", "-P", "rows=5"], "01-tiny has no parameter(s) rows; its parameters are: fail, marker, n, seconds"),
    (["run", "01", "-P", "n=0"], "n must be an integer >= 1, got 0"),
    (["start", "nosuch"], "unknown engine 'nosuch'"),
])
def test_user_errors_are_one_line(project, args, expected):
    (project.root / "bad.yaml").write_text("n: 2\n  seconds: 1\n")
    result = project.run(*args)
    assert result.returncode == 2, result.stderr
    line = one_line(result.stderr)
    assert line.startswith("benchlib: error: ") and expected in line, line
    assert project.report_folders() == []


def test_a_notebook_without_a_workload_cannot_run_unchecked(project):
    project.add_notebook("01-tiny", workload=None)
    result = project.run("run", "01", "--set", "tiny")
    assert result.returncode == 2
    assert "metadata names no workload" in one_line(result.stderr)
    assert project.report_folders() == []


def test_debug_shows_the_traceback(project):
    result = project.run("--debug", "run", "01", "--set", "nosuchset")
    assert result.returncode != 0
    assert "Traceback (most recent call last)" in result.stderr and "ParameterError" in result.stderr
    result = project.run("run", "01", "--set", "nosuchset", "--debug")
    assert "Traceback (most recent call last)" in result.stderr


def test_real_notebook_rejects_a_bad_value_before_a_kernel_starts(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHLIB_")}
    env.update(BENCHLIB_DATA_DIR=str(tmp_path / "data"), BENCHLIB_REPORTS_DIR=str(tmp_path / "reports"))
    result = subprocess.run([str(BENCHLIB), "run", "01", "-P", "rows=0"], env=env, capture_output=True, text=True,
                            cwd=ROOT, timeout=120)
    assert result.returncode == 2
    assert "rows must be an integer >= 2, got 0" in one_line(result.stderr)
    assert not (tmp_path / "reports").exists()


def test_closed_pipe_is_not_an_error(project):
    """`benchlib runs | head -1`: the reader leaves early; no BrokenPipeError, exit like SIGPIPE."""
    proc = project.popen("runs", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # before benchlib writes: its first write meets a closed pipe
    stderr = proc.stderr.read()
    proc.wait(timeout=60)
    assert stderr == "", stderr
    assert proc.returncode == 128 + signal.SIGPIPE


_IMPORTED = """
import sys
from benchlib.cli import main

code = main(["run", "01", "-P", "n=0"])
print(" ".join(sorted(m for m in {MODULES} if m in sys.modules)))
sys.exit(code)
"""


def _imported_when_rejecting(project, modules):
    result = subprocess.run([sys.executable, "-c", _IMPORTED.replace("{MODULES}", repr(modules))], env=project.env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "n must be an integer >= 1, got 0" in result.stderr, result.stderr
    return result.stdout.split()


def test_rejecting_a_parameter_loads_no_kernel_machinery(project):
    assert _imported_when_rejecting(project, ("papermill", "jupyter_client", "nbconvert", "kaleido", "zmq")) == []


def test_rejecting_a_parameter_loads_no_data_stack(project):
    """What keeps a rejected parameter under a second on a 2-core host (pandas alone: ~2.3 s)."""
    assert _imported_when_rejecting(project, ("pandas", "plotly", "pyarrow", "duckdb")) == []
