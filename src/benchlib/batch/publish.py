"""A notebook's runs published to the shared store once the notebook is over: each run's Parquet
files, the executed notebook, its HTML report and figures, then the run's completion marker
(shared_store.py). Runs measured on a host without a shared store stay in its own store."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from .execute import NotebookOutcome


def notebook_files(outcome: NotebookOutcome, out_dir: Path) -> dict[str, Path]:
    """The outcome's files by their name in the report folder (`01-dml-cpu-cost.html`,
    `figures/01-dml-cpu-cost/ratios.png`)."""
    paths = [outcome.executed, outcome.html, *outcome.figures]
    return {p.relative_to(out_dir).as_posix(): p for p in paths if p is not None and Path(p).exists()}


def publish_outcome(shared, outcome: NotebookOutcome, out_dir: Path, *, local=None,
                    meta: dict[str, Any] | None = None) -> tuple[list[str], float]:
    """Publish every run the notebook recorded, with the notebook's files beside each. Returns
    (the runs published now, seconds spent). A run already published is left as it is."""
    from ..data.store import Store

    local = local or Store.default_local()
    started = time.perf_counter()
    files = notebook_files(outcome, out_dir)
    meta = {"notebook": outcome.notebook, "params_file": outcome.params_file, **(meta or {})}
    published = [run_id for run_id in outcome.run_ids if shared.publish(local, run_id, files, meta)]
    return published, time.perf_counter() - started
