"""perf stat, per cgroup (or per process for embedded engines), with exact window boundaries.

Each window gets its own `perf stat` started with counters disabled (`--delay=-1`) and driven
through a control FIFO: `enable`/`disable` are acknowledged, so the counted window is exactly
the phase and perf's own start-up is outside it. perf runs on the host, outside the engine's
cgroup, so it adds no CPU to what it measures."""
from __future__ import annotations

import ctypes
import functools
import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

# Each window's FIFOs and output live in <tmp>/benchlib-perf-<pid>-<start ticks>-XXXXXXXX: the
# owner is in the name, so a later process can tell an orphan (owner SIGKILLed) from a live window.
DIR_PREFIX = "benchlib-perf-"
_PR_SET_PDEATHSIG = 1

# (event as perf names it, metric name in the store, unit in the store, scale from perf's unit)
EVENTS = {
    "task-clock": ("task_clock", "s", 1e-3),  # perf prints msec
    "instructions:u": ("instructions_user", "instructions", 1.0),
    "cycles": ("cycles", "cycles", 1.0),
}


@dataclass(frozen=True)
class Reading:
    event: str
    value: float | None  # None unless status == "ok"
    unit: str
    status: str  # ok | unsupported | not_counted
    running_pct: float | None = None
    parts: tuple["Reading", ...] = ()  # a cluster's: each node's reading, this one their sum

    @classmethod
    def total(cls, parts: tuple["Reading", ...]) -> "Reading":
        """The sum over a cluster's nodes: unsupported anywhere is unsupported; a node never
        scheduled (not counted) adds nothing, and all of them idle is not counted."""
        first = parts[0]
        statuses = {p.status for p in parts}
        if "unsupported" in statuses:
            return cls(first.event, None, first.unit, "unsupported", parts=parts)
        counted = [p.value for p in parts if p.status == "ok"]
        if not counted:
            return cls(first.event, None, first.unit, "not_counted", parts=parts)
        return cls(first.event, sum(counted), first.unit, "ok", parts=parts)


def parse_csv(text: str, cgroup_mode: bool) -> dict[str, Reading]:
    """Parse `perf stat -x,` output (stderr or -o file).

    Fields: value, unit, event, [cgroup,] run-time, %running, metric, metric unit.
    `<not supported>` means the host cannot count the event; `<not counted>` means the counter
    never ran (an idle cgroup is never scheduled) - both are stored without a number."""
    return {event: reading for (_, event), reading in _parse(text, cgroup_mode).items()}


def parse_csv_by_cgroup(text: str) -> dict[str, dict[str, Reading]]:
    """Cgroup mode output of several cgroups: cgroup -> event -> reading."""
    out: dict[str, dict[str, Reading]] = {}
    for (cgroup, event), reading in _parse(text, cgroup_mode=True).items():
        out.setdefault(cgroup, {})[event] = reading
    return out


def _parse(text: str, cgroup_mode: bool) -> dict[tuple[str, str], Reading]:
    readings: dict[tuple[str, str], Reading] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split(",")
        if len(fields) < 3:
            continue
        raw, unit, event = fields[0].strip(), fields[1].strip(), fields[2].strip()
        key = (fields[3].strip() if cgroup_mode and len(fields) > 3 else "", event)
        pct_index = 5 if cgroup_mode else 4
        try:
            pct = float(fields[pct_index]) if len(fields) > pct_index and fields[pct_index] else None
        except ValueError:
            pct = None
        if raw == "<not supported>":
            readings[key] = Reading(event, None, unit, "unsupported")
        elif raw == "<not counted>":
            readings[key] = Reading(event, None, unit, "not_counted")
        else:
            try:
                readings[key] = Reading(event, float(raw), unit, "ok", pct)
            except ValueError:
                continue
    return readings


@dataclass(frozen=True)
class PerfSupport:
    available: bool
    reason: str
    version: str | None
    events: dict[str, str] = field(default_factory=dict)  # event -> supported | unsupported

    @property
    def supported_events(self) -> list[str]:
        return [e for e, s in self.events.items() if s == "supported"]

    def describe(self) -> str:
        if not self.available:
            return f"perf unavailable: {self.reason}"
        return ", ".join(f"{e}: {s}" for e, s in self.events.items())


@functools.lru_cache(maxsize=1)
def probe() -> PerfSupport:
    """Ask the host once which events perf can count system-wide."""
    perf = shutil.which("perf")
    if perf is None:
        return PerfSupport(False, "perf is not installed (Debian: apt-get install linux-perf)", None)
    version = subprocess.run([perf, "--version"], capture_output=True, text=True).stdout.strip() or None
    result = subprocess.run(
        [perf, "stat", "-x,", "-a", "-e", ",".join(EVENTS), "--", "sleep", "0.05"],
        capture_output=True, text=True,
    )
    if result.returncode != 0:
        reason = (result.stderr.strip().splitlines() or ["perf stat failed"])[-1]
        return PerfSupport(False, f"perf stat -a failed: {reason}", version)
    readings = parse_csv(result.stderr, cgroup_mode=False)
    events = {e: ("supported" if readings.get(e) and readings[e].status == "ok" else "unsupported") for e in EVENTS}
    return PerfSupport(True, "ok", version, events)


class PerfError(RuntimeError):
    pass


class PerfWindow:
    """One counting window. `prepare()` starts perf disabled; `enable()` / `disable()` are exact;
    `result()` stops perf and returns its readings. Several cgroups (a cluster's nodes) are counted
    by one perf: each reading is their sum, with each cgroup's reading in its `parts`, in order."""

    ACK_TIMEOUT = 10.0

    def __init__(self, *, cgroup: str | tuple[str, ...] | None = None, pid: int | None = None,
                 events: list[str] | None = None):
        if (cgroup is None) == (pid is None):
            raise ValueError("give exactly one of cgroup (a container) or pid (an embedded engine)")
        self.cgroups = (cgroup,) if isinstance(cgroup, str) else cgroup
        self.pid = pid
        self.events = events or list(EVENTS)
        self._dir = Path(tempfile.mkdtemp(prefix=_dir_prefix()))
        self._proc: subprocess.Popen | None = None
        self._ctl = self._ack = -1

    def command(self) -> list[str]:
        ctl, ack, out = self._dir / "ctl", self._dir / "ack", self._dir / "out.csv"
        cmd = ["perf", "stat", "-x,", "--no-big-num", "-o", str(out), "--delay=-1",
               f"--control=fifo:{ctl},{ack}", "-e", ",".join(self.events)]
        if self.cgroups is not None:
            # -e must come before -G, with one cgroup entry per event: the events repeat per cgroup.
            cmd[-1] = ",".join(self.events * len(self.cgroups))
            cmd += ["-a", "-G", ",".join(c for c in self.cgroups for _ in self.events)]
        else:
            cmd += ["-p", str(self.pid)]
        return cmd

    def prepare(self) -> "PerfWindow":
        os.mkfifo(self._dir / "ctl")
        os.mkfifo(self._dir / "ack")
        # O_RDWR on our ends: opening a FIFO never blocks then, whatever order perf opens them in.
        self._ctl = os.open(self._dir / "ctl", os.O_RDWR)
        self._ack = os.open(self._dir / "ack", os.O_RDWR)
        # Own session: Ctrl-C in a notebook must not reach perf. Death signal: a SIGKILLed owner
        # (no finally, no atexit) must not leave perf counting a cgroup for ever.
        self._proc = subprocess.Popen(self.command(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                      start_new_session=True, preexec_fn=_die_with_parent(os.getpid()))
        return self

    def _command(self, word: str) -> None:
        os.write(self._ctl, f"{word}\n".encode())
        ready, _, _ = select.select([self._ack], [], [], self.ACK_TIMEOUT)
        if not ready:
            self.abort()
            raise PerfError(f"perf did not acknowledge '{word}' within {self.ACK_TIMEOUT}s")
        os.read(self._ack, 64)

    def enable(self) -> None:
        self._command("enable")

    def disable(self) -> None:
        self._command("disable")

    def hand_over(self, tail: "PerfWindow") -> None:
        """End this window and start `tail`, the window that follows it (a phase's settle window)."""
        self.disable()
        tail.enable()

    def result(self) -> dict[str, Reading]:
        assert self._proc is not None
        self._proc.send_signal(signal.SIGINT)
        _, stderr = self._proc.communicate(timeout=30)
        out = self._dir / "out.csv"
        text = out.read_text() if out.exists() else ""
        self._close()
        if self.cgroups is not None and len(self.cgroups) > 1:
            by_cgroup = parse_csv_by_cgroup(text)
            readings = {}
            if all(c in by_cgroup for c in self.cgroups):
                events = [e for e in self.events if all(e in by_cgroup[c] for c in self.cgroups)]
                readings = {e: Reading.total(tuple(by_cgroup[c][e] for c in self.cgroups)) for e in events}
        else:
            readings = parse_csv(text, cgroup_mode=self.cgroups is not None)
        if not readings:
            raise PerfError(f"perf stat produced no counts (exit {self._proc.returncode}): {stderr.decode()[-500:]}")
        return readings

    def abort(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        self._close()

    def _close(self) -> None:
        for fd in (self._ctl, self._ack):
            if fd >= 0:
                os.close(fd)
        self._ctl = self._ack = -1
        shutil.rmtree(self._dir, ignore_errors=True)


def _die_with_parent(parent_pid: int):
    """preexec_fn: SIGKILL this child when the thread that started it exits. Windows are prepared
    and read by the thread that measures, which outlives them."""
    libc = ctypes.CDLL(None, use_errno=True)

    def preexec() -> None:
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent_pid:  # the parent died before prctl took effect
            os.kill(os.getpid(), signal.SIGKILL)

    return preexec


def _dir_prefix() -> str:
    from .owners import process_start_ticks

    pid = os.getpid()
    return f"{DIR_PREFIX}{pid}-{process_start_ticks(pid)}-"


def _dir_owner(path: Path) -> str | None:
    """The owner label (lifecycle's host:pid:ticks format) of a window folder, None if not ours."""
    pid, _, rest = path.name[len(DIR_PREFIX):].partition("-")
    ticks, _, _ = rest.partition("-")
    if not (pid.isdigit() and ticks.isdigit()):
        return None  # an older benchlib's folder: no owner in its name
    return f"{socket.gethostname()}:{pid}:{ticks}"


def _processes_using(path: Path) -> list[int]:
    """Processes whose command line names a file in `path` (perf's --control FIFOs and -o file)."""
    needle = str(path).encode() + b"/"
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if needle in (proc / "cmdline").read_bytes():
                pids.append(int(proc.name))
        except OSError:
            continue  # exited meanwhile, or not ours to read
    return pids


def reap_orphans(tmp_dir: Path | None = None) -> list[Path]:
    """Remove the window folders of dead owners, after killing any perf still using them (one
    started before perf got a death signal, or by a thread that was already gone). Returns the
    folders removed."""
    from .owners import owner_alive

    removed = []
    for path in Path(tmp_dir or tempfile.gettempdir()).glob(f"{DIR_PREFIX}*"):
        owner = _dir_owner(path)
        if owner is None or owner_alive(owner):
            continue
        for pid in _processes_using(path):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed
