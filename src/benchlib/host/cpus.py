"""Keeping the harness and the measured engine apart on the CPUs.

On a small host the notebook kernel, perf and the engine share cores, and whatever the harness
does (Python, polling cgroup files, perf's own threads) lands beside the engine's work as
scheduling noise. Pinning server engines to every CPU but the first (Docker `cpuset_cpus`) and
the harness process to the first keeps them apart. Embedded engines run inside the harness
process and cannot be separated from it: they share the harness's CPU."""
from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import Iterator


@dataclass(frozen=True)
class CpuPlan:
    engine_cpus: str | None  # Docker cpuset_cpus for server engines; None: not pinned
    harness_cpus: frozenset[int] | None
    note: str

    @property
    def pinned(self) -> bool:
        return self.engine_cpus is not None


def plan(pin: bool) -> CpuPlan:
    available = sorted(os.sched_getaffinity(0))
    if not pin:
        return CpuPlan(None, None, "not pinned: engines and harness share all CPUs")
    if len(available) < 2:
        return CpuPlan(None, None, f"not pinned: only CPU {available} is available to the harness")
    harness, engine = available[:1], available[1:]
    return CpuPlan(",".join(map(str, engine)), frozenset(harness),
                   f"server engines pinned to CPU {','.join(map(str, engine))}, the harness (the notebook thread "
                   f"that runs the workload, and the perf and client processes it starts) to CPU {harness[0]}; "
                   f"embedded engines run in that thread, so on CPU {harness[0]} with it")


def parse_cpuset(cpuset: str | None) -> frozenset[int] | None:
    """Docker's cpuset string ("1", "1,3", "1-3") as CPU numbers; None stays None."""
    if not cpuset:
        return None
    cpus: set[int] = set()
    for part in cpuset.split(","):
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return frozenset(cpus)


@contextlib.contextmanager
def harness_pinned(cpu_plan: CpuPlan) -> Iterator[CpuPlan]:
    """Pin this thread (and so the processes it starts: perf, sysbench) for the duration."""
    if cpu_plan.harness_cpus is None:
        yield cpu_plan
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpu_plan.harness_cpus)
    try:
        yield cpu_plan
    finally:
        os.sched_setaffinity(0, before)
