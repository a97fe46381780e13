"""The batch's own cost: wall time outside the runs' measured windows (kernel starts, image
builds, engine starts, loads, checks, rendering). Every measured window stores its wall time in
the results store, and every notebook records its run ids in its executed copy, so the share is
known per notebook and for the whole batch."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from .execute import NotebookOutcome


@dataclass(frozen=True)
class HarnessShare:
    label: str  # a notebook, or "batch"
    wall_s: float
    measured_s: float | None  # None: the store could not say

    @property
    def harness_s(self) -> float | None:
        # Windows of one run never overlap, so their sum is within the wall time; clamped all the same
        # so that a clock step can never show a negative harness.
        return None if self.measured_s is None else max(0.0, self.wall_s - self.measured_s)

    @property
    def share(self) -> float | None:
        harness = self.harness_s
        return None if harness is None or self.wall_s <= 0 else harness / self.wall_s

    def line(self) -> str:
        """`01-dml-cpu-cost: 412 s of 1030 s outside measured windows (40%); measured 618 s`."""
        if self.harness_s is None:
            return f"{self.label}: {self.wall_s:.0f} s, measured windows unknown (the store could not say)"
        return (f"{self.label}: {self.harness_s:.0f} s of {self.wall_s:.0f} s outside measured windows "
                f"({self.share:.0%}); measured {self.measured_s:.0f} s")

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "harness_s": self.harness_s, "share": self.share}


def harness_shares(outcomes: list[NotebookOutcome], batch_wall_s: float) -> list[HarnessShare]:
    """One share per notebook (its execution and publishing), then the batch's (its whole wall
    time: preparing engines and the gaps between notebooks included)."""
    shares = [HarnessShare(o.notebook, o.wall_seconds, o.measured_seconds) for o in outcomes]
    known = [o.measured_seconds for o in outcomes]
    total = None if any(m is None for m in known) else sum(known)
    if any(o.worker for o in outcomes):
        # On a cluster the notebooks ran side by side: their measured windows add up to more than
        # the batch's wall time, so the share is of the tasks' own time, summed over the workers.
        return [*shares, HarnessShare("batch (tasks summed over workers)", sum(o.wall_seconds for o in outcomes),
                                      total)]
    return [*shares, HarnessShare("batch", batch_wall_s, total)]


def summary_lines(shares: list[HarnessShare], preparing_s: float) -> list[str]:
    lines = ["harness share (wall time outside measured windows):"]
    lines += [f"  {share.line()}" for share in shares]
    if preparing_s:
        lines.append(f"  of which preparing engines: {preparing_s:.0f} s")
    return lines
