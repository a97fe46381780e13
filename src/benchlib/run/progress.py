"""Progress of a long notebook, where the user waits.

In a notebook (JupyterLab or papermill) a workload reports its steps::

    from benchlib.run.progress import Progress

    with Progress(total=len(engines) * repetitions * len(phases), unit="phases", desc="dml") as progress:
        for engine in engines:
            for rep in range(1, repetitions + 1):
                for phase in phases:
                    with progress.step(engine=engine, repetition=rep, repetitions=repetitions, phase=phase):
                        ...  # the work of one step

`total` counts the steps the notebook will run; each `with progress.step(**labels)` announces the
step now being worked on (labels: engine, repetition, repetitions (the base count),
max_repetitions (the bound when more may follow), phase, or anything short) and
counts it done when the block ends, even if it raises. A skipped step can be counted with
`progress.skip(n)` so the ETA stays honest.

Two outputs, both cheap enough to call per phase:
- a tqdm bar on stderr (JupyterLab renders it in place; papermill keeps it out of the report);
- when `BENCHLIB_PROGRESS_FILE` is set (the batch runner sets it for each kernel it starts), one
  JSON line per event appended to that file: {"t", "event" (start|done|close), "notebook",
  "desc", "unit", "labels", "done", "total", "elapsed_s", "eta_s"}. The runner tails the file and
  prints one console line per notebook (`follow`)."""
from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator, TextIO

PROGRESS_FILE_ENV = "BENCHLIB_PROGRESS_FILE"
NOTEBOOK_ENV = "BENCHLIB_NOTEBOOK"
CONSOLE_INTERVAL_S = 5.0  # console line rate when stderr is not a terminal (CI logs, pipes)
# A step can run for minutes (a load, a sysbench prepare): without a new line a log reader cannot
# tell it from a hang, so the unchanged line is printed again, with its elapsed time, this often.
STILL_RUNNING_S = 20.0


class Progress:
    """Steps of a notebook: a tqdm bar, plus JSON lines for the runner's console line. See the
    module docstring for an example."""

    def __init__(self, total: int, *, notebook: str | None = None, desc: str = "", unit: str = "steps",
                 bar: bool = True):
        if total < 0:
            raise ValueError(f"total must be >= 0, got {total}")
        self.total = total
        self.notebook = notebook or os.environ.get(NOTEBOOK_ENV)
        self.desc = desc
        self.unit = unit
        self.done = 0
        self.labels: dict[str, Any] = {}
        self._started = time.monotonic()
        self._file = os.environ.get(PROGRESS_FILE_ENV)
        self._bar = None
        if bar:
            from tqdm.std import tqdm  # plain text: tqdm.auto would need ipywidgets in the kernel

            self._bar = tqdm(total=total, desc=desc or None, unit=f" {unit}", file=sys.stderr,
                             mininterval=1.0, dynamic_ncols=True, leave=True)
        self._emit("start" if total else "close")

    @contextlib.contextmanager
    def step(self, **labels: Any) -> Iterator[None]:
        """Announce the step now being worked on; it counts as done when the block ends."""
        self.labels = labels
        if self._bar is not None:
            self._bar.set_postfix_str(_describe(labels), refresh=True)
        self._emit("start")
        try:
            yield
        finally:
            self.advance(1)

    def skip(self, n: int = 1) -> None:
        """Count steps that will not run (an engine skipped, a failure that ends a section)."""
        self.advance(n)

    def advance(self, n: int = 1) -> None:
        self.done = min(self.total, self.done + n)
        if self._bar is not None:
            self._bar.update(self.done - self._bar.n)
        self._emit("done")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        self._emit("close")
        self._file = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self._started

    @property
    def eta_s(self) -> float | None:
        if not self.done:
            return None
        return self.elapsed_s / self.done * (self.total - self.done)

    def _emit(self, event: str) -> None:
        if not self._file:
            return
        record = {"t": time.time(), "event": event, "notebook": self.notebook, "desc": self.desc,
                  "unit": self.unit, "labels": self.labels, "done": self.done, "total": self.total,
                  "elapsed_s": round(self.elapsed_s, 3),
                  "eta_s": None if self.eta_s is None else round(self.eta_s, 3)}
        try:
            # One write of one line in append mode: concurrent writers never interleave within it.
            with open(self._file, "a") as f:
                f.write(json.dumps(record, default=str) + "\n")
        except OSError:
            self._file = None  # progress must never break a measurement


def _describe(labels: dict[str, Any]) -> str:
    """`postgres rep 2/3 | insert`, other labels as key=value."""
    labels = dict(labels)
    parts = []
    engine = labels.pop("engine", None)
    rep = _repetition(labels.pop("repetition", None), labels.pop("repetitions", None),
                      labels.pop("max_repetitions", None))
    head = " ".join(str(p) for p in (engine, rep) if p is not None)
    if head:
        parts.append(head)
    phase = labels.pop("phase", None)
    if phase is not None:
        parts.append(str(phase))
    if labels:
        parts.append(" ".join(f"{k}={v}" for k, v in labels.items()))
    return " | ".join(parts)


def _repetition(rep: Any, reps: Any, max_reps: Any) -> str | None:
    """`rep 2/3` for a fixed count; `rep 4 (3..5)` where repetitions go beyond the base count (up
    to max_repetitions while a CI is too wide): "4/3" would read as a counting error. Past the
    base count with no bound known, `rep 4 (3+)`."""
    if rep is None:
        return None
    if not reps:
        return f"rep {rep}"
    if (max_reps and max_reps > reps) or rep > reps:
        bound = max_reps if max_reps and max_reps >= rep else None
        return f"rep {rep} ({reps}..{bound})" if bound else f"rep {rep} ({reps}+)"
    return f"rep {rep}/{reps}"


def duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def console_line(notebook: str, record: dict | None, elapsed_s: float, now: float | None = None) -> str:
    """`01-dml-cpu-cost | postgres rep 2/3 | insert | 14/60 phases | 1m12s elapsed | ETA 3m05s`."""
    parts = [notebook]
    if record is None:
        parts.append("starting")
    else:
        described = _describe(record.get("labels") or {})
        if described:
            parts.append(described)
        parts.append(f"{record['done']}/{record['total']} {record.get('unit') or 'steps'}")
    parts.append(f"{duration(elapsed_s)} elapsed")
    if record is not None and record.get("eta_s") is not None:
        # The ETA was true when the line was written: count it down since.
        since = max(0.0, (now or time.time()) - record["t"])
        parts.append(f"ETA {duration(max(0.0, record['eta_s'] - since))}")
    return " | ".join(parts)


class _Follower(threading.Thread):
    def __init__(self, path: Path, notebook: str, stream: TextIO, interval: float, still_running: float):
        super().__init__(name=f"benchlib-progress-{notebook}", daemon=True)
        self.path, self.notebook, self.stream = path, notebook, stream
        try:
            self.tty = stream.isatty()
        except (AttributeError, ValueError):
            self.tty = False
        self.interval, self.still_running = interval, still_running
        self.stopping = threading.Event()
        self.started = time.monotonic()
        self.record: dict | None = None
        self._offset = 0
        self._partial = ""
        self._shown: dict | None = None
        self._printed_at: float | None = None
        self._width = 0
        self._console_gone = False

    def _read(self) -> None:
        try:
            with open(self.path) as f:
                f.seek(self._offset)
                chunk = f.read()
                self._offset = f.tell()
        except OSError:
            return  # not written yet
        lines = (self._partial + chunk).split("\n")
        self._partial = lines.pop()  # a line still being written
        for line in lines:
            with contextlib.suppress(ValueError):
                self.record = json.loads(line)

    def _write(self, text: str) -> None:
        if self._console_gone:
            return
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            self._console_gone = True  # a closed pipe: the run goes on without its console line

    def _show(self) -> None:
        line = console_line(self.notebook, self.record, time.monotonic() - self.started)
        if self.tty:
            self._write(f"\r{line}{' ' * max(0, self._width - len(line))}")
            self._width = len(line)
        else:
            self._write(line + "\n")
        self._shown, self._printed_at = self.record, time.monotonic()

    def run(self) -> None:
        while not self.stopping.wait(1.0 if self.tty else 0.5):
            self._read()
            if self.tty:
                self._show()  # elapsed and ETA tick every second
            else:
                since = time.monotonic() - self._printed_at if self._printed_at is not None else None
                if (since is None or (self.record is not self._shown and since >= self.interval)
                        or since >= self.still_running):
                    self._show()

    def finish(self) -> None:
        self.stopping.set()
        self.join(timeout=5)
        self._read()
        if self.tty:
            self._show()
            self._write("\n")
        elif self.record is not self._shown:
            self._show()


@contextlib.contextmanager
def follow(path: Path, notebook: str, stream: TextIO | None = None,
           interval: float = CONSOLE_INTERVAL_S, still_running: float = STILL_RUNNING_S) -> Iterator[None]:
    """Tail a progress file written by a kernel and keep one console line about it: updated in
    place on a terminal, otherwise a new line at most every `interval` seconds, and the same line
    again (its elapsed time moved on) after `still_running` seconds without one."""
    follower = _Follower(Path(path), notebook, stream or sys.stderr, interval, still_running)
    follower.start()
    try:
        yield
    finally:
        follower.finish()
