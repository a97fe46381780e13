"""An embedded engine's phases counted in instructions: its statements run in a child Python
process under valgrind's callgrind, one dump per phase.

    from benchlib import callgrind_embedded as ce

    result = ce.count_phases(
        "sqlite",                                   # an engine with a driver in CHILD_DRIVERS
        [("insert", ["insert into demo(value) ..."]),
         ("update", ["update demo set value = value + 1"]),
         ("select", ["select count(value) from demo"])],
        database=tmp / "bench.sqlite",              # the engine's file (created if missing)
        setup=["create table demo (id integer primary key, value float)"],
        out_dir=tmp / "callgrind")                  # dump files and the child's spec go here
    result.phase("insert").instructions             # the window's count, interpreter included
    result.phase("insert").net                      # minus the empty phase (result.interpreter)
    result.phase("insert").dump                     # its callgrind file: callgrind_profile.read_window([...])
    result.phase("select").rows                     # the last statement's rows (a check reads them)

How it counts. The child (callgrind_child.py, run as a script by `sys.executable`,
the interpreter benchlib itself runs on: a pyenv shim or any wrapper script would put a shell, not
Python, under valgrind) imports the driver, connects, runs `setup`, and then, for the empty phase
and each phase in turn, calls the marker function (`os.getppid`, which neither Python's sqlite3
nor DuckDB call) and runs the phase's statements (`connection.execute(sql).fetchall()` each,
autocommit as the engines' benchlib clients connect). Callgrind runs with `--dump-before=getppid`:
each marker call closes the window before it into a file of its own, `cg.<pid>.<N>`, so

    dump 1            interpreter start, imports, connect, setup      (result.startup)
    dump 2            the empty phase: the marker loop with no statement (result.interpreter)
    dump 3 ...        each phase, in the order given                   (result.phases)
    final dump        closing the connection, interpreter exit         (result.teardown)

The empty phase is what a window costs with no statement in it (the loop, the clock reads, the
marker call): about 4,700 instructions here, shown beside every phase (`interpreter`) and
subtracted in `net`, never hidden. The interpreter's start (76 M instructions here for Python
3.11 with sqlite3, 0.58-1.05 G with duckdb imported: 15 s and 30-55 s of wall time under callgrind) is
in `startup`, outside every phase. PYTHONHASHSEED is fixed and the child's environment minimal:
two runs of SQLite's 2,000-row phases counted the same to the instruction (insert 7,093,942 both
times; tests/valgrind/test_callgrind_embedded.py asserts 0.5%). Every thread of the child is
counted (callgrind's default), DuckDB's worker threads included; valgrind runs them one at a
time, and DuckDB's counts move between runs with how its threads took the work: with its default
threads (2 here) two runs of its 2,000-row phases differed by 0.3-0.5% (insert, update) and
2.3-3.6% (delete, count); with `set threads = 1` among the setup statements by 0.01-0.14%, and
0.5% for the delete.

Checks. The number of dumps must be the number of markers plus the final one, each marker dump
triggered by `--dump-before`: a library that called the marker itself would split a phase, and is
refused with a message naming the files, not counted. `count_phases` raises CallgrindChildError
with the child's stderr when the child fails (a statement's error included), ValueError naming a
bad argument before anything starts, and EngineUnavailableError when valgrind or the driver is
missing. Nothing is retried.

Wiring it into measure.py (for the coordinator): a Meter whose engine is embedded and whose
counter is `valgrind` calls `count_phases` for the start's phases (statements from the workload's
dialect), then, per phase, stores `instructions_user` = `phase.net` with source
`SOURCE` and `tool_version=result.valgrind_version`, the empty phase's `instructions` as a
reading beside it (metric `instructions_interpreter`), and the profile rows of `phase.dump`
(callgrind_profile.read_window + profile_rows, Store.append_profile with the phase's seq). Wall
times under valgrind (`phase.wall_seconds`) are valgrind's, 25-50x a native run's: not a cost."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from .errors import BenchlibError, EngineUnavailableError

SOURCE = "valgrind callgrind (embedded child process)"
MARKER = "getppid"  # the libc function whose every call closes a window (--dump-before)
EMPTY_PHASE = "(empty)"
# The child's program, run as a script: it imports nothing of benchlib.
CHILD_SCRIPT = str(Path(__file__).with_name("callgrind_child.py"))


@dataclass(frozen=True)
class ChildDriver:
    """How the child reaches an engine: a DB-API module and its connect() keywords."""

    module: str
    connect_kwargs: Mapping[str, Any] = field(default_factory=dict)


# The drivers of the embedded SQL engines, connected as their benchlib clients connect (SQLite in
# autocommit: isolation_level=None). The child imports only this module, not benchlib, whose
# engine registry would cost seconds of interpreter start under valgrind.
CHILD_DRIVERS: dict[str, ChildDriver] = {
    "sqlite": ChildDriver("sqlite3", {"isolation_level": None}),
    "duckdb": ChildDriver("duckdb"),
}


class CallgrindChildError(BenchlibError):
    """The child under valgrind failed, or its dumps cannot be told apart into phases."""


@dataclass(frozen=True)
class PhaseInstructions:
    """One window of the child: its instructions (interpreter included), its dump file, the wall
    time the child measured inside it (under valgrind), and the last statement's rows."""

    phase: str
    instructions: int
    dump: Path
    wall_seconds: float | None = None
    rows: list | None = None
    interpreter: int = 0  # the empty phase's instructions, for `net`

    @property
    def net(self) -> int:
        """The phase's instructions less the empty phase's: what its statements cost the process."""
        return self.instructions - self.interpreter


@dataclass(frozen=True)
class EmbeddedCount:
    engine: str
    phases: tuple[PhaseInstructions, ...]
    interpreter: PhaseInstructions  # the empty phase
    startup: PhaseInstructions
    teardown: PhaseInstructions
    valgrind_version: str
    command: tuple[str, ...]
    wall_seconds: float  # the whole child, under valgrind

    def phase(self, name: str) -> PhaseInstructions:
        for p in self.phases:
            if p.phase == name:
                return p
        raise KeyError(f"no phase {name!r}; phases: {', '.join(p.phase for p in self.phases)}")


def valgrind_version() -> str:
    """`valgrind-3.19.0`, or EngineUnavailableError when valgrind is not installed."""
    path = shutil.which("valgrind")
    if path is None:
        raise EngineUnavailableError("valgrind is not installed on this host (Debian: apt-get install valgrind): "
                                     "embedded engines cannot be counted in instructions")
    return subprocess.run([path, "--version"], capture_output=True, text=True, check=True).stdout.strip()


def _check(engine: str, phases: Sequence[tuple[str, Sequence[str]]], setup: Sequence[str]) -> ChildDriver:
    if engine not in CHILD_DRIVERS:
        raise ValueError(f"engine {engine!r} has no child driver for valgrind; known: {', '.join(CHILD_DRIVERS)}")
    names = [name for name, _ in phases]
    if not names:
        raise ValueError("no phases to count")
    bad = [n for n in names if not isinstance(n, str) or not n or n == EMPTY_PHASE]
    if bad or len(set(names)) != len(names):
        raise ValueError(f"phase names must be distinct, non-empty and not {EMPTY_PHASE!r}: {names!r}")
    for name, statements in phases:
        if isinstance(statements, str) or not all(isinstance(s, str) for s in statements):
            raise ValueError(f"phase {name!r}: statements must be a list of SQL strings, got {statements!r}")
    if isinstance(setup, str) or not all(isinstance(s, str) for s in setup):
        raise ValueError(f"setup must be a list of SQL strings, got {setup!r}")
    driver = CHILD_DRIVERS[engine]
    from importlib.util import find_spec

    if find_spec(driver.module) is None:
        raise EngineUnavailableError(f"{engine}: its driver module {driver.module!r} is not installed")
    return driver


def count_phases(engine: str, phases: Sequence[tuple[str, Sequence[str]]], *, database: str | os.PathLike,
                 out_dir: str | os.PathLike, setup: Sequence[str] = (), timeout: float = 600.0,
                 valgrind_options: Sequence[str] = ()) -> EmbeddedCount:
    """Run `setup`, an empty phase and `phases` ((name, [sql, ...]) in order) in one child
    process under callgrind, on `database`; return each phase's instructions and dump file (see
    the module's docstring). `out_dir` must not hold an earlier run's dumps."""
    driver = _check(engine, phases, setup)
    phases = [(name, list(statements)) for name, statements in phases]
    version = valgrind_version()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if any(out.glob("cg.*")):
        raise ValueError(f"{out} already holds callgrind files: give each count a folder of its own")
    spec_path, result_path = out / "child-spec.json", out / "child-result.json"
    spec_path.write_text(json.dumps({
        "module": driver.module, "connect_kwargs": dict(driver.connect_kwargs), "database": str(database),
        "setup": list(setup), "phases": [[EMPTY_PHASE, []], *phases], "result": str(result_path),
        "marker": MARKER}))
    command = ("valgrind", "--tool=callgrind", f"--dump-before={MARKER}",
               f"--callgrind-out-file={out}/cg.%p", *valgrind_options,
               sys.executable, "-s", CHILD_SCRIPT, str(spec_path))
    # A fixed hash seed and a minimal environment: Python's dict layout and the size of the
    # environment block both move an interpreter's instruction count between runs.
    env = {"PATH": os.defpath, "PYTHONHASHSEED": "0", "LC_ALL": "C.UTF-8"}
    t0 = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout, cwd=out)
    except subprocess.TimeoutExpired as exc:
        raise CallgrindChildError(f"{engine}: the child under valgrind ran past {timeout:.0f} s (killed); "
                                  f"command: {' '.join(command)}") from exc
    wall = time.perf_counter() - t0
    if done.returncode != 0 or not result_path.exists():
        tail = "\n".join((done.stderr or "").strip().splitlines()[-15:])
        raise CallgrindChildError(f"{engine}: the child under valgrind exited {done.returncode}:\n{tail}")
    child = json.loads(result_path.read_text())
    return _assemble(engine, out, [EMPTY_PHASE, *[n for n, _ in phases]], child, version, command, wall)


def _assemble(engine: str, out: Path, names: list[str], child: dict, version: str,
              command: tuple[str, ...], wall: float) -> EmbeddedCount:
    from .callgrind_profile import read_file

    pid = child["pid"]
    numbered = sorted(out.glob(f"cg.{pid}.*"), key=lambda p: int(p.suffix[1:]))
    final = out / f"cg.{pid}"
    markers = len(names) + 1  # one after setup, one after each phase (the empty one included)
    if len(numbered) != markers or not final.exists():
        raise CallgrindChildError(
            f"{engine}: expected {markers} dumps before {MARKER}() and a final one from pid {pid}, found "
            f"{', '.join(p.name for p in numbered)}{' and ' + final.name if final.exists() else ''}: something in "
            f"the process called {MARKER}() itself, so its windows cannot be told apart")
    summaries = [read_file(p)[0] for p in numbered] + [read_file(final)[0]]
    for s in summaries[:-1]:
        if s.trigger != f"--dump-before={MARKER}":
            raise CallgrindChildError(f"{s.path}: dumped by {s.trigger!r}, not by the phase marker")
    walls, rows = child["wall_seconds"], child["rows"]

    def window(i: int, name: str, interpreter: int = 0) -> PhaseInstructions:
        s = summaries[i]
        k = i - 1  # the child's phase index (the empty phase is 0)
        return PhaseInstructions(name, s.total, Path(s.path), walls[k] if 0 <= k < len(walls) else None,
                                 rows[k] if 0 <= k < len(rows) else None, interpreter)

    empty = window(1, EMPTY_PHASE)
    phases = tuple(window(i + 2, name, empty.instructions) for i, name in enumerate(names[1:]))
    return EmbeddedCount(engine, phases, empty, window(0, "startup"), window(len(summaries) - 1, "teardown"),
                         version, tuple(command), wall)
