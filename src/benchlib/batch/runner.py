"""A checked plan executed into a new report folder: engines prepared, then each notebook in
turn (a failure is recorded and the next one runs), then the folder's summary, index and
manifest and the site index, written even after an interrupt."""
from __future__ import annotations

from pathlib import Path

from ..settings import get_settings
from .execute import Interrupted, NotebookOutcome, execute, utc_now
from .plan import Planned, plan_engines
from .prepare import prepare_engines
from .site import new_report_dir, point_latest, write_folder, write_site_index


def run_notebooks(name: str, kind: str, plan: list[Planned], *, out_dir: Path | None = None,
                  out_root: Path | None = None, progress: bool = True) -> tuple[Path, list[NotebookOutcome]]:
    """Execute a checked plan into a new report folder (`kind` run or batch, named after `name`),
    then write the folder's summary, index and manifest and the site index. An interrupted run
    still gets them, listing what finished."""
    root = Path(out_root or get_settings().reports_dir)
    out_dir = Path(out_dir) if out_dir else new_report_dir(name, root)
    out_dir.mkdir(parents=True, exist_ok=True)
    started_at = utc_now()
    outcomes: list[NotebookOutcome] = []
    complete = False
    preparing_seconds = 0.0
    try:
        preparing_seconds = prepare_engines(plan_engines(plan)).seconds
        for item in plan:
            try:
                outcomes.append(execute(item.notebook, out_dir, item.params, params_file_name=item.params_file,
                                        progress=progress, output_name=item.output_name))
            except Interrupted as exc:
                outcomes.append(exc.outcome)
                raise
        complete = True
    finally:
        write_folder(out_dir, kind, name, outcomes, started_at, complete, preparing_seconds)
        if out_dir.parent.resolve() == root.resolve():
            point_latest(root, out_dir)
            write_site_index(root)
    return out_dir, outcomes
