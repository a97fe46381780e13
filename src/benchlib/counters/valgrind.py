"""valgrind's callgrind as an instruction counter: the whole server under valgrind, its
instrumentation switched on and off for exactly a window.

Where perf cannot count instructions (a VM without a PMU), callgrind counts them in software,
deterministically: the same work gives the same count to a fraction of a percent. A server engine
started with `counter: valgrind` runs from a derived image (the engine's own image plus Debian's,
or its distribution's, valgrind) in which the server program is a wrapper that starts it under

    valgrind --tool=callgrind --instr-atstart=no --trace-children=yes --callgrind-out-file=<dir>/cg.%p

with HOSTNAME, HOST, USER and LOGNAME unset (valgrind names each process's vgdb FIFOs from them,
and a PostgreSQL child that overwrote its environment for its process title would compute another
name). Forked processes are followed with the counting state of their parent; an exec'd program
starts with its instrumentation off. A window then is

    zero + instrumentation on  ...the phase...  instrumentation off + dump

sent to every process of the container through vgdb, in one `docker exec` (as the server's own
user: vgdb answers that user only) at each end. Its count is the sum of the dumps made at its end
and of the exit dumps written during it (a backend that closed with its connection, an
autovacuum worker): every dump file changed since the window opened. A phase and its settle
window share one exec at their boundary (dump + zero, instrumentation left on).

The exec runs in the container's cgroup: each costs some CPU there (never instructions: vgdb and
the shell are not under valgrind), a few execs per window, which is why every control point is one
exec."""
from __future__ import annotations

import platform
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import BenchlibError

COUNTERS = ("auto", "perf", "valgrind")
SOURCE = "valgrind"  # the measurements' source of a callgrind count
EVENT = "instructions:u"  # what it counts, as perf names the event: every instruction of user space
# Where the derived image's wrapper writes its dumps (a host folder is mounted there), and where
# the image records the valgrind it installed.
DUMP_DIR = "/run/benchlib-callgrind"
VERSION_FILE = "/usr/local/lib/benchlib/valgrind-version"
# vgdb derives its FIFOs' names from these; the server's and every vgdb's must agree.
UNSET = ("HOSTNAME", "HOST", "USER", "LOGNAME")
# Architectures valgrind runs on, as platform.machine() names them.
ARCHITECTURES = ("x86_64", "amd64", "i386", "i686", "aarch64", "arm64", "armv7l", "ppc64", "ppc64le", "s390x",
                 "mips", "mips64", "riscv64")
# The status of perf's other events (task-clock, cycles) in a window of a server under valgrind.
PERF_NOT_RUN = "not run: the server runs under valgrind, which counts instructions only"
# The engine's CPU figures of a server under valgrind: stored under their metric with this suffix,
# so that no report reads them as the engine's CPU cost (valgrind's own work is in them, 25-50x).
NOT_NATIVE = "_under_valgrind"


def not_native(metric: str) -> str:
    """The name a CPU metric (cpu_time, cpu_user_time, maintenance_cpu_time, ...) of a server under
    valgrind is stored as; other metrics keep theirs."""
    cpu = metric.startswith("cpu_") or metric.endswith("cpu_time")
    return f"{metric}{NOT_NATIVE}" if cpu and not metric.endswith(NOT_NATIVE) else metric


# What the method says of each figure counted so, beside the count itself.
SERIALISES = ("valgrind runs one thread of a process at a time (it serialises threads) and slows the server 25-50x, "
              "so work that depends on timing (spin loops, group commit, background threads woken by timers) can "
              "differ from a native run")


class ValgrindError(BenchlibError):
    """A callgrind window could not be switched or read: its count would be wrong, so there is none."""


def host_problem(machine: str | None = None) -> str | None:
    """Why this host cannot count with valgrind, or None. A server's valgrind is in its image, not
    on the host: what the host must offer is an architecture valgrind runs on."""
    machine = machine or platform.machine()
    if machine.lower() not in ARCHITECTURES:
        return f"valgrind does not run on this host's architecture ({machine})"
    return None


def engine_problem(engine) -> str | None:
    """Why `engine` cannot run under valgrind here, from its declaration, or None."""
    if engine.cluster is not None:
        return ("a cluster: its nodes are not started under valgrind (one window would switch every node's "
                "processes; not built)")
    if engine.embedded is not None:
        if engine.embedded.child_driver is None:
            return engine.no_valgrind_reason or "no child driver is declared for it"
        import shutil

        return None if shutil.which("valgrind") else "valgrind is not installed on this host (make setup installs it)"
    if engine.valgrind is None:
        return engine.no_valgrind_reason or "no valgrind wrapper is declared for it"
    return None


# ---------------------------------------------------------------------------------------------
# The derived image


WRAPPER = r"""#!/bin/sh
# benchlib: @SERVER@ under valgrind's callgrind, instrumentation off until a window switches it
# on. Invocations that are not the server (an init step, a version check) run natively.
native="@SERVER@.native"
for arg in "$@"; do
  case "$arg" in
    @NATIVE_WHEN@) exec "$native" "$@" ;;
  esac
done
unset @UNSET@
mkdir -p @DUMP_DIR@ 2>/dev/null || true
as_user=""
if [ "$(id -u)" = 0 ]; then as_user="setpriv --reuid=@USER@ --regid=@USER@ --init-groups"; fi
exec $as_user valgrind --tool=callgrind --instr-atstart=no --trace-children=yes \
  --callgrind-out-file=@DUMP_DIR@/cg.%p "$native" "$@"
"""

DOCKERFILE = """ARG BASE_IMAGE
FROM ${BASE_IMAGE}
USER root
COPY callgrind-wrap.sh /usr/local/lib/benchlib/callgrind-wrap.sh
# valgrind from the image's own package source; the server program becomes the wrapper, the
# program itself moves beside it (same folder: it finds its libraries and share files as before).
RUN set -eu \\
 && if command -v apt-get >/dev/null 2>&1; then \\
      apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends valgrind \\
      && rm -rf /var/lib/apt/lists/*; \\
    elif command -v microdnf >/dev/null 2>&1; then microdnf install -y valgrind && microdnf clean all; \\
    elif command -v dnf >/dev/null 2>&1; then dnf install -y valgrind && dnf clean all; \\
    else echo "no apt-get, microdnf or dnf to install valgrind with" >&2; exit 1; fi \\
 && set -- @PROGRAM@ && test "$#" = 1 && test -x "$1" \\
 && mv "$1" "$1.native" \\
 && sed "s|@SERVER@|$1|g" /usr/local/lib/benchlib/callgrind-wrap.sh > "$1" && chmod 755 "$1" \\
 && mkdir -p @DUMP_DIR@ && chmod 1777 @DUMP_DIR@ \\
 && valgrind --version > @VERSION_FILE@
"""


def build_context(engine) -> dict[str, str]:
    """The files of the derived image's build context for `engine` (name -> text)."""
    spec = engine.valgrind
    assert spec is not None
    # Quoted: an argument is matched as it is, never as a pattern ("-?" would match any option).
    native_when = "|".join("'" + arg.replace("'", "'\\''") + "'" for arg in spec.native_when) or "''"
    wrapper = (WRAPPER.replace("@NATIVE_WHEN@", native_when).replace("@UNSET@", " ".join(UNSET))
               .replace("@DUMP_DIR@", DUMP_DIR).replace("@USER@", spec.user))
    dockerfile = (DOCKERFILE.replace("@PROGRAM@", spec.program).replace("@DUMP_DIR@", DUMP_DIR)
                  .replace("@VERSION_FILE@", VERSION_FILE))
    return {"Dockerfile": dockerfile, "callgrind-wrap.sh": wrapper}


# ---------------------------------------------------------------------------------------------
# Switching and reading windows

VALGRIND_COMMAND = "valgrind --tool=callgrind --instr-atstart=no --trace-children=yes"
# One exec per control point: every process vgdb lists, switched in parallel; a line per process
# (pid, vgdb's exit status, whether the process still exists) tells a failure from a process that
# exited meanwhile. vgdb refuses a process whose thread is still starting (a fork in progress): it
# is asked again, three times at most. It waits 20 ms (not its default 100) for a process to take
# the command by itself before it interrupts the process's system call through ptrace.
CONTROL_SCRIPT = (f"unset {' '.join(UNSET)}; "
                  "pids=${BENCHLIB_PIDS:-$(vgdb -l 2>/dev/null | sed -n 's/^use --pid=\\([0-9]*\\) .*/\\1/p')}; "
                  "for p in $pids; do (n=0; while :; do vgdb --pid=$p --max-invoke-ms=20 \"$@\" >/dev/null 2>&1; rc=$?; "
                  "if kill -0 $p 2>/dev/null; then s=alive; else s=gone; fi; "
                  "if [ $rc = 0 ] || [ $s = gone ] || [ $n -ge 3 ]; then break; fi; n=$((n+1)); sleep 0.05; done; "
                  "echo \"$p $rc $s\") & done; wait")
TOTALS = re.compile(rb"^totals:\s+(\d+)", re.M)
DUMP_NAME = re.compile(r"^cg\.(\d+)(?:\.(\d+))?$")


def dump_folder() -> Path:
    """A host folder for one start's dumps: in a private (0700) folder of its own, itself open to
    the server's user inside the container (whose uid this host does not know)."""
    import tempfile

    outer = Path(tempfile.mkdtemp(prefix="benchlib-callgrind-"))
    inner = outer / "dumps"
    inner.mkdir()
    inner.chmod(0o1777)
    return inner


def dump_total(path: Path) -> int | None:
    """The instruction total of one callgrind dump (its `totals:` line), None while it has none (a
    process still writing its exit dump)."""
    data = path.read_bytes()
    found = TOTALS.search(data)
    return int(found.group(1)) if found else None


@dataclass
class Callgrind:
    """The processes of a running engine under callgrind, where `run` executes a command beside
    them (in the server's container as the server's own user, or on this host for an embedded
    engine's child), the host folder of their dumps and the valgrind that runs them. `pids`: the
    processes to switch (a child of this process), else every process vgdb lists there."""

    run: Any  # argv -> (exit code, output bytes)
    folder: Path
    version: str
    user: str
    pids: tuple[int, ...] = ()
    # An embedded engine's child: the instructions it spends on one request of its own protocol,
    # counted at start, so that a window's count is net of them (`Counted.harness`).
    child: Any = None

    @classmethod
    def attach(cls, instance, folder: Path) -> "Callgrind":
        """The callgrind of a started server, checked to be there: vgdb must list the server."""
        from ..host.docker_host import docker_client
        from ..core.errors import EngineStartError

        spec = instance.engine.valgrind
        version = instance.host_path(VERSION_FILE).read_text().strip()
        container = docker_client().containers.get(instance.container_id)
        found = cls(lambda argv: tuple(container.exec_run(argv, user=spec.user)), folder, version, spec.user)
        if not found.processes():
            raise EngineStartError(f"{instance.key} does not run under valgrind: vgdb lists no process in its "
                                   f"container (image {instance.provenance['image_ref']})")
        return found

    @classmethod
    def local(cls, child) -> "Callgrind":
        """The callgrind of an embedded engine's child process (`valgrind_child.Child`)."""
        import getpass
        import os
        import subprocess

        env = {k: v for k, v in os.environ.items() if k not in UNSET} | {"BENCHLIB_PIDS": str(child.pid)}

        def run(argv: list[str]) -> tuple[int, bytes]:
            done = subprocess.run(argv, capture_output=True, env=env)
            return done.returncode, done.stdout + done.stderr

        return cls(run, child.folder, child.version, getpass.getuser(), (child.pid,), child=child)

    def describe(self) -> dict[str, Any]:
        """What the instance's provenance says of its counter."""
        out = {"tool": "valgrind", "version": self.version, "command": VALGRIND_COMMAND, "vgdb_user": self.user}
        if self.child is not None:
            out["harness_per_request"] = self.child.per_request
        return out

    def processes(self) -> list[int]:
        """The pids under valgrind beside the engine: every one vgdb lists there."""
        code, output = self.run(["sh", "-c", f"unset {' '.join(UNSET)}; vgdb -l"])
        listed = [int(pid) for pid in re.findall(r"^use --pid=(\d+) ", output.decode(errors="replace"), re.M)]
        return [pid for pid in listed if not self.pids or pid in self.pids]

    def control(self, *commands: str) -> dict[int, str]:
        """Send `commands` (vgdb monitor commands, in order) to every process under valgrind in the
        container at once; returns pid -> "alive" | "gone". A process still alive whose vgdb failed
        makes the window's count unknown: ValgrindError."""
        args: list[str] = []
        for command in commands:
            args += [*(["-c"] if args else []), *command.split()]
        code, output = self.run(["sh", "-c", CONTROL_SCRIPT, "benchlib-control", *args])
        if code != 0:
            raise ValgrindError(f"callgrind control ({' '.join(args)}) failed in the container (exit {code}): "
                                f"{output.decode(errors='replace')[-300:]}")
        status: dict[int, str] = {}
        failed = []
        for line in output.decode(errors="replace").splitlines():
            fields = line.split()
            if len(fields) != 3 or not fields[0].isdigit():
                continue
            pid, rc, state = int(fields[0]), fields[1], fields[2]
            status[pid] = state
            if rc != "0" and state == "alive":
                failed.append(pid)
        if failed:
            raise ValgrindError(f"vgdb could not send {' / '.join(commands) or 'a listing'} to process(es) "
                                f"{', '.join(map(str, failed))}, which still run: their count would be wrong")
        return status

    def listing(self) -> dict[str, tuple[int, int]]:
        """Dump file -> (mtime in ns, size): what a window compares with to find its dumps."""
        out = {}
        for entry in self.folder.iterdir():
            if DUMP_NAME.match(entry.name):
                stat = entry.stat()
                out[entry.name] = (stat.st_mtime_ns, stat.st_size)
        return out

    def window(self, name: str) -> "CallgrindWindow":
        return CallgrindWindow(self, name)


@dataclass(frozen=True)
class Counted:
    """One window's count: the total, each dump file it sums (the paths stay until the instance
    stops, for a profile reader) with its own total, and the control execs it took."""

    total: int
    files: dict[Path, int] = field(default_factory=dict)
    # An embedded engine's child: what its requests inside the window cost the child's own protocol
    # (requests x the per-request count measured at start), not the engine; `net` leaves it out.
    harness: float = 0.0

    @property
    def net(self) -> float:
        return self.total - self.harness

    def per_process(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for path, total in self.files.items():
            pid = int(DUMP_NAME.match(path.name).group(1))
            out[pid] = out.get(pid, 0) + total
        return out


class CallgrindWindow:
    """One counting window, with the interface of perf.PerfWindow: `prepare`, `enable`,
    `disable` (or `hand_over` to the window that follows without a gap), `result`, `abort`."""

    source = SOURCE
    READ_WAIT = 2.0  # longest wait for an exit dump being written as the window closes
    SETTLE_READ = 0.05  # between the two listings that must agree

    def __init__(self, callgrind: Callgrind, name: str):
        self.callgrind = callgrind
        self.name = re.sub(r"[^A-Za-z0-9_.-]", "-", name)
        self._before: dict[str, tuple[int, int]] | None = None
        self._requests = 0  # the child's requests served when the window opened
        self._open = False
        self.counted: Counted | None = None

    def prepare(self) -> "CallgrindWindow":
        return self

    def enable(self) -> None:
        self._before = self.callgrind.listing()
        self._requests = self._served()
        self._open = True
        self.callgrind.control("zero", "instrumentation on")

    def _served(self) -> int:
        child = self.callgrind.child
        return child.requests if child is not None else 0

    def disable(self) -> None:
        self.callgrind.control("instrumentation off", f"dump {self.name}")
        self._close()

    def hand_over(self, tail: "CallgrindWindow") -> None:
        """End this window and open `tail` at the same moment: one exec dumps and zeroes every
        process, instrumentation stays on (switching it would also discard valgrind's translations)."""
        self.callgrind.control(f"dump {self.name}", "zero")
        tail._before = self._close()
        tail._requests = self._served()
        tail._open = True

    def _close(self) -> dict[str, tuple[int, int]]:
        """The dumps written since the window opened, read once two listings a moment apart agree
        (an exit dump may be in the writing). An empty file is no dump: callgrind creates each
        process's `cg.<pid>` empty when the process starts (and touches it again at its first dump),
        and writes it only when the process exits."""
        assert self._before is not None, "a window closed before it opened"
        self._open = False
        deadline = time.monotonic() + self.READ_WAIT
        previous: dict[str, tuple[int, int]] | None = None
        while True:
            after = self.callgrind.listing()
            changed = {name: state for name, state in after.items() if self._before.get(name) != state}
            files = {self.callgrind.folder / name: dump_total(self.callgrind.folder / name)
                     for name, (_, size) in changed.items() if size > 0}
            if changed == previous and all(total is not None for total in files.values()):
                break
            if time.monotonic() > deadline:  # an exit dump never finished: no count rather than a short one
                unread = ", ".join(p.name for p, t in files.items() if t is None) or "(still changing)"
                raise ValgrindError(f"callgrind window {self.name}: dump(s) {unread} have no totals line")
            previous = changed
            time.sleep(self.SETTLE_READ)
        child = self.callgrind.child
        harness = (self._served() - self._requests) * child.per_request if child is not None else 0.0
        self.counted = Counted(sum(files.values()), dict(sorted(files.items())), harness)
        return after

    def result(self) -> dict[str, Any]:
        from ..host.perf import Reading

        assert self.counted is not None
        return {EVENT: Reading(EVENT, float(self.counted.net), "instructions", "ok")}

    def abort(self) -> None:
        """Leave the server uncounted after a failure (best effort: it may be gone)."""
        if self._open:
            self._open = False
            try:
                self.callgrind.control("instrumentation off")
            except Exception:
                pass
