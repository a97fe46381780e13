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

from .errors import BenchlibError

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
