"""What the workloads' reports share: a workload's dialect found from an engine key, a byte count
for a caption, a one-measurement-per-side comparison, a start's settings reading as pairs. Imports
only the shared layers, never a workload."""
from __future__ import annotations

import math
from typing import Any, Callable

from ..engines import find_engine


def finite(x: Any) -> bool:
    """A number that is neither missing, NaN nor infinite."""
    try:
        return x is not None and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def dialect_of(key: str, dialect_for: Callable[[Any], Any]):
    """The workload's dialect for an engine key; None for a key this benchlib no longer declares
    (a stored run's engine) or one the workload has no dialect for."""
    engine = find_engine(key)
    return dialect_for(engine) if engine is not None else None


def size_text(value: float | None) -> str:
    """Bytes in the largest binary unit under the value (`1.5 GiB`); `unknown` for a missing one."""
    if value is None or value != value:
        return "unknown"
    for unit, size in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if value >= size:
            return f"{value / size:.3g} {unit}"
    return f"{value:.0f} B"


def one_each(base: float, subject: float) -> dict:
    """A `results.contrast`-shaped comparison of one measurement per side (a load, a size, a cold
    run): the ratio, no CI and no test, so findings.judge calls it untested."""
    return {"mean": subject, "base_mean": base, "n": 1, "base_n": 1,
            "ratio": subject / base if base and finite(base) and finite(subject) else None, "beyond_noise": None}


# A size on disk measured once is one value a side, however exact the figure: no test (findings.judge).
exact = one_each


def settings(reading: str) -> dict[str, str]:
    """`name=value` pairs of a durability reading ("innodb_flush_log_at_trx_commit=1, log_bin=0"
    or "WriteOptions sync=false (...): ..."), lower-cased names."""
    out = {}
    for token in str(reading or "").replace(",", " ").replace(";", " ").split():
        name, eq, value = token.partition("=")
        if eq and name and value:
            out[name.strip().lower()] = value.strip().strip("()").lower()
    return out
