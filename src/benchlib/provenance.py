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
    root = get_settings().project_root
    try:
        sha = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=5)
        if sha.returncode != 0:
            return None, None
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5)
        return sha.stdout.strip(), bool(dirty.stdout.strip())
    except (OSError, subprocess.TimeoutExpired):
        return None, None


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
