"""Where a figure came from: host, kernel, CPU, benchlib version and git sha, and the host's
fingerprint (what makes two hosts comparable) with its declared class and price."""
from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import platform
import socket
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from ..core.errors import ParameterError
from ..core.settings import get_settings

# A host's class (an instance type, a rack's model) and its price are declared, not detected: a VM
# cannot see what it is billed as. Workers of a cluster set them in their environment.
HOST_CLASS_ENV = "BENCHLIB_HOST_CLASS"
HOST_PRICE_ENV = "BENCHLIB_HOST_PRICE"  # "0.085 USD/h"


def _first(path: str, prefix: str) -> str | None:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(prefix):
                return line.split(":", 1)[1].strip() if ":" in line else line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    return None


def benchlib_version() -> str:
    try:
        return metadata.version("benchlib")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def git_state() -> tuple[str | None, bool | None]:
    """(sha, dirty) of the project checkout; either is None when git cannot say."""
    root = str(get_settings().project_root)

    def git(*args: str, timeout: float) -> subprocess.CompletedProcess | None:
        try:
            return subprocess.run(["git", "-C", root, *args], capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired):
            return None

    head = git("rev-parse", "HEAD", timeout=10)
    if head is None or head.returncode != 0:
        return None, None
    # Slower (it runs the nbstripout clean filter on notebooks): its failure must not lose the sha.
    status = git("status", "--porcelain", "--untracked-files=no", timeout=60)
    dirty = bool(status.stdout.strip()) if status is not None and status.returncode == 0 else None
    return head.stdout.strip(), dirty


@functools.lru_cache(maxsize=1)
def host_facts() -> dict:
    mem_kib = _first("/proc/meminfo", "MemTotal")
    return {
        "hostname": socket.gethostname(),
        "kernel": platform.release(),
        "os": _first("/etc/os-release", "PRETTY_NAME=") or platform.platform(),
        "cpu_model": _first("/proc/cpuinfo", "model name") or platform.processor() or None,
        "cpu_cores": os.cpu_count(),
        "memory_bytes": int(mem_kib.split()[0]) * 1024 if mem_kib else None,
        "python_version": sys.version.split()[0],
    }


def declared_host_class() -> tuple[str | None, float | None, str | None]:
    """(class, price, price unit) as the host's environment declares them; a malformed price is
    refused, never recorded as something else."""
    host_class = os.environ.get(HOST_CLASS_ENV, "").strip() or None
    price_text = os.environ.get(HOST_PRICE_ENV, "").strip()
    if not price_text:
        return host_class, None, None
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([A-Za-z]{3})\s*/\s*(h|hour|month)", price_text)
    if match is None:
        raise ParameterError(f"{HOST_PRICE_ENV} must be a price per hour or month like '0.085 USD/h', "
                             f"got {price_text!r}")
    value, currency, per = match.groups()
    return host_class, float(value), f"{currency.upper()}/{'h' if per in ('h', 'hour') else 'month'}"


def has_pmu(perf_events: dict[str, str]) -> bool:
    """Whether perf could count hardware events (instructions, cycles) on this host."""
    return any(perf_events.get(event) == "supported" for event in ("instructions:u", "cycles"))


def host_fingerprint(facts: dict, cgroup_layout: str, pmu: bool) -> str:
    """Twelve hex digits naming what makes two hosts' figures comparable: CPU model, cores,
    memory, kernel, cgroup layout and PMU support. Not the host name: two identical VMs share a
    fingerprint, one VM after a kernel upgrade does not."""
    identity = {key: facts.get(key) for key in ("cpu_model", "cpu_cores", "memory_bytes", "kernel")}
    identity.update(cgroup_layout=cgroup_layout, pmu=pmu)
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:12]
