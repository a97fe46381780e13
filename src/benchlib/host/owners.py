"""Who owns a resource benchlib leaves on this host (a container, a volume, a perf folder, a run
row): this process, labelled so that a later process can tell whether its owner still runs, even
after its pid was reused."""
from __future__ import annotations

import os
import socket
from pathlib import Path


def process_start_ticks(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]  # field 22: start time, tells a reused pid apart


def owner_label() -> str:
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{process_start_ticks(pid)}"


def owner_alive(owner: str) -> bool:
    host, _, rest = owner.partition(":")
    pid, _, ticks = rest.partition(":")
    if host != socket.gethostname():
        return True  # another machine's container on a shared engine: not ours to judge
    return pid.isdigit() and process_start_ticks(int(pid)) == ticks
