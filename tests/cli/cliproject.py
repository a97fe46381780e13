"""Helpers of the CLI tests: the `benchlib` command as a user runs it (a subprocess of the
installed entry point) against a throw-away project (its own notebooks, parameter sets, store and
reports), so that kernels run a tiny notebook in seconds instead of the real benchmarks."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

BENCHLIB = Path(sys.executable).parent / "benchlib"
ROOT = Path(__file__).resolve().parents[2]

TINY_WORKLOAD = '''
from benchlib.core.errors import ParameterError


def validate_parameters(params):
    n = params["n"]
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ParameterError(f"n must be an integer >= 1, got {n!r}")
    return params
'''

TINY_PARAMETERS = '''n = 2  # steps
seconds = 0.0  # sleep per step
marker = ""  # a file the kernel writes its pid to, once it runs
fail = False'''

TINY_BODY = '''import os, pathlib, time
import benchlib
from benchlib.run.progress import Progress

with benchlib.Run("tiny", {"n": n, "seconds": seconds}, notebook=NOTEBOOK) as run:
    if marker:  # once the run exists: an interrupt from now on must close it
        pathlib.Path(marker).write_text(str(os.getpid()))
    with benchlib.start("sqlite") as eng:
        run.record_instance(eng)
        with Progress(total=n, unit="steps", desc="tiny") as progress:
            for i in range(n):
                with progress.step(engine="sqlite", repetition=i + 1, repetitions=n, phase="sleep"):
                    time.sleep(seconds)
assert not fail, "asked to fail"'''


def tiny_notebook(stem: str, title: str = "A tiny notebook", question: str = "*Does the runner work?*",
                  workload: str | None = "tinywork", closing_markdown: str | None = None) -> dict:
    """A minimal numbered notebook: title and question, a parameters cell of plain values, one
    cell that records a real run (sqlite, no container) with progress steps, and
    `closing_markdown` as a last markdown cell when given."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (benchlib)", "language": "python"}
    if workload:
        nb.metadata["benchlib"] = {"workload": workload}
    params = nbformat.v4.new_code_cell(TINY_PARAMETERS)
    params.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {title}\n\n{question}\n\nMore text."), params,
                nbformat.v4.new_code_cell(f"NOTEBOOK = {stem!r}\n" + TINY_BODY)]
    if closing_markdown is not None:
        nb.cells.append(nbformat.v4.new_markdown_cell(closing_markdown))
    return json.loads(nbformat.writes(nb))


@dataclass
class Project:
    root: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def reports(self) -> Path:
        return self.root / "reports"

    @property
    def data(self) -> Path:
        return self.root / "data"

    def add_notebook(self, stem: str, sets: dict[str, str] | None = None, **kwargs) -> Path:
        path = self.root / "notebooks" / f"{stem}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(tiny_notebook(stem, **kwargs), indent=1))
        for name, text in (sets if sets is not None else {"tiny": "n: 2\n", "default": "n: 3\n"}).items():
            pfile = self.root / "papermill_params" / stem / f"{name}.yaml"
            pfile.parent.mkdir(parents=True, exist_ok=True)
            pfile.write_text(text)
        return path

    def report_folders(self) -> list[Path]:
        if not self.reports.exists():
            return []
        return sorted(p for p in self.reports.iterdir() if p.is_dir() and not p.is_symlink())

    def run(self, *args: str, timeout: float = 300, **kwargs) -> subprocess.CompletedProcess:
        return subprocess.run([str(BENCHLIB), *args], env=self.env, capture_output=True, text=True,
                              timeout=timeout, cwd=self.root, **kwargs)

    def popen(self, *args: str, **kwargs) -> subprocess.Popen:
        return subprocess.Popen([str(BENCHLIB), *args], env=self.env, cwd=self.root, text=True, **kwargs)


def make_project(root: Path) -> Project:
    (root / "pylib").mkdir(parents=True)
    (root / "pylib" / "tinywork.py").write_text(textwrap.dedent(TINY_WORKLOAD))
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHLIB_")}
    env.update(BENCHLIB_PROJECT_ROOT=str(root), BENCHLIB_DATA_DIR=str(root / "data"),
               BENCHLIB_REPORTS_DIR=str(root / "reports"),
               PYTHONPATH=os.pathsep.join(filter(None, [str(root / "pylib"), env.get("PYTHONPATH")])))
    project = Project(root, env)
    project.add_notebook("01-tiny")
    return project


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got:\n{stderr}"
    return lines[0]
