"""Where a figure came from: host, kernel, CPU, benchlib version and git sha."""
from __future__ import annotations

import functools
import os
import platform
import socket
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from .settings import get_settings


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
