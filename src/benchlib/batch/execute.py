"""One notebook executed headless by papermill into a report folder, then published: its HTML
report and figure files. A failure at any step (a cell, the kernel, the render, the figure
export) is recorded in the notebook's outcome; only Ctrl-C stops the caller."""
from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from .plan import read_notebook
from .render import export_figures, render_html

KERNEL_NAME = "python3"
# Time a kernel gets after an interrupt to leave its `with` blocks (stop containers, write the run's
# final status) before it is terminated.
KERNEL_SHUTDOWN_WAIT_S = 30.0


def utc_now() -> dt.datetime:
    # Not store.utcnow: importing the store (pyarrow) would cost a rejected parameter ~0.5 s.
    return dt.datetime.now(dt.timezone.utc)


@dataclass
class NotebookOutcome:
    notebook: str
    params_file: str | None
    ok: bool  # executed without error and its HTML report rendered
    seconds: float  # executing the notebook (kernel start to finish)
    executed: Path
    html: Path | None
    figures: list[Path] = field(default_factory=list)
    error: str | None = None
    figure_error: str | None = None
    run_ids: list[str] = field(default_factory=list)  # runs the notebook recorded (see recorded_runs)
    title: str | None = None
    question: str | None = None
    engines: list[str] = field(default_factory=list)  # engines of those runs, from the store
    started_at: str | None = None  # ISO 8601, UTC
    render_error: str | None = None  # the HTML report could not be rendered
    publish_seconds: float = 0.0  # rendering the HTML and exporting figures
    # Wall time inside the runs' measured windows (None: the store could not say); the rest of
    # seconds + publish_seconds is the harness's.
    measured_seconds: float | None = None
    worker: str | None = None  # the cluster worker that executed it (None: this host)
    publish_error: str | None = None  # its runs could not be published to the shared store (they stay local)
    # The HTML report at 1280 px in headless Chromium (batch.layout): what does not fit or cannot
    # be read, [] when everything does; None: not checked (no report, or no chromium).
    layout_problems: list[str] | None = None
    layout: str | None = None  # the check's one-line summary, or why it did not run
    # The report's answer (RunReport.answer's output metadata): its first line and how sure the
    # run is; None where the report states none (a notebook not yet ported, or one that failed first).
    answer: str | None = None
    certainty: str | None = None
    count: str | None = None  # how many comparisons are decided, in the indexes' short form ("2 of 20 decided")

    @property
    def wall_seconds(self) -> float:
        return self.seconds + self.publish_seconds

    def to_json(self, base: Path) -> dict[str, Any]:
        """Paths relative to `base` (the report folder), so a folder can move."""
        def rel(p: Path | None) -> str | None:
            return None if p is None else os.path.relpath(p, base)

        data = asdict(self)
        data.update(executed=rel(self.executed), html=rel(self.html), figures=[rel(p) for p in self.figures])
        return data


def _kernel_manager_class(env: dict[str, str], log_path: Path):
    """A kernel manager adding `env` to the kernel's environment and sending the kernel process's
    own stdout/stderr (connection warnings, zmq tracebacks after an interrupt) to `log_path`
    instead of the console; cell outputs still go to the notebook."""
    from jupyter_client.manager import AsyncKernelManager

    class BenchlibKernelManager(AsyncKernelManager):
        shutdown_wait_time = KERNEL_SHUTDOWN_WAIT_S

        async def _async_launch_kernel(self, kernel_cmd, **kw):
            kw["env"] = {**(kw.get("env") or os.environ), **env}
            log = open(log_path, "ab")
            try:
                kw["stdout"] = kw["stderr"] = log
                return await super()._async_launch_kernel(kernel_cmd, **kw)
            finally:
                log.close()  # the kernel holds its own descriptor

    return BenchlibKernelManager


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a notebook: still a KeyboardInterrupt, carrying what was done so far."""

    def __init__(self, outcome: NotebookOutcome):
        super().__init__("interrupted")
        self.outcome = outcome


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[-1] if text else ''}"


def execute(notebook: Path, out_dir: Path, params: dict[str, Any], *, params_file_name: str | None = None,
            progress: bool = True, output_name: str | None = None, progress_stream: TextIO | None = None,
            kernel_env: dict[str, str] | None = None) -> NotebookOutcome:
    """Execute one notebook into out_dir and render it. A failing notebook still leaves its
    executed copy (with the error) and its HTML. With `progress`, one console line (stderr, or
    `progress_stream`) follows the notebook's benchlib.run.progress.Progress. Ctrl-C interrupts the
    kernel (its `with` blocks stop containers and close the run) and raises `Interrupted`.
    `output_name` names the executed copy, its HTML and figures when one folder holds the notebook
    more than once; `kernel_env` is added to the kernel's environment."""
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    from ..run import progress as prog

    out_dir.mkdir(parents=True, exist_ok=True)
    name = output_name or notebook.stem
    executed = out_dir / f"{name}.ipynb"
    started_at = utc_now()
    started = time.perf_counter()
    error, interrupted = None, False
    with tempfile.TemporaryDirectory(prefix="benchlib-exec-") as tmp:
        progress_file = Path(tmp) / "progress.jsonl"
        kernel_log = Path(tmp) / "kernel.log"
        env = {**(kernel_env or {}), prog.PROGRESS_FILE_ENV: str(progress_file), prog.NOTEBOOK_ENV: notebook.stem}
        follow = prog.follow(progress_file, notebook.stem, progress_stream) if progress else contextlib.nullcontext()
        try:
            with follow:
                pm.execute_notebook(str(notebook), str(executed), parameters=params, cwd=str(notebook.parent),
                                    progress_bar=False, log_output=False, kernel_name=KERNEL_NAME,
                                    kernel_manager_class=_kernel_manager_class(env, kernel_log))
        except KeyboardInterrupt:
            error, interrupted = "interrupted", True
        except Exception as exc:
            error = _one_line(exc)
            if not isinstance(exc, PapermillExecutionError):  # a cell's error is in the notebook already
                _keep_kernel_log(kernel_log, out_dir / f"{name}.kernel.log")
    seconds = time.perf_counter() - started
    html_path, figures, render_error, figure_error, run_ids = None, [], None, None, []
    published = time.perf_counter()
    if executed.exists():
        run_ids = recorded_runs(executed)
        if not interrupted:  # the user is waiting for the prompt, not for a report of half a run
            html_path, render_error = _publish(lambda: render_html(executed, out_dir / f"{name}.html"))
            # Static images are a bonus (the HTML report has the figures): their failure is shown, not fatal.
            figures, figure_error = _publish(lambda: export_figures(executed, out_dir / "figures" / name))
    layout_problems, layout_summary = check_layout(html_path)
    spec = read_notebook(executed if executed.exists() else notebook)
    answered = answer_of(executed) if executed.exists() else {}
    outcome = NotebookOutcome(
        name, params_file_name, error is None and render_error is None, seconds, executed, html_path,
        figures or [], error, figure_error, run_ids, spec.title, spec.question, engines_of(run_ids),
        started_at.isoformat(timespec="seconds"), render_error, time.perf_counter() - published,
        measured_seconds(run_ids), layout_problems=layout_problems, layout=layout_summary,
        answer=answered.get("answer"), certainty=answered.get("certainty"), count=answered.get("count"))
    if interrupted:
        raise Interrupted(outcome)
    return outcome


def check_layout(html: Path | None) -> tuple[list[str] | None, str | None]:
    """(problems, summary) of the report at 1280 px; (None, why) when it could not be checked. A
    layout problem is shown in the batch's summary, never a reason to fail the notebook."""
    from . import layout

    if html is None:
        return None, None
    if not layout.available():
        return None, "layout not checked: chromium is not installed"
    try:
        checked = layout.check(html)
    except layout.LayoutError as exc:
        return None, f"layout not checked: {exc}"
    return checked.problems(), checked.summary()


def _publish(step):
    """(result, None), or (None, the error in one line): one notebook's report failing to render
    or export must not stop the notebooks after it."""
    try:
        return step(), None
    except Exception as exc:
        return None, _one_line(exc)


def _keep_kernel_log(log: Path, dest: Path) -> None:
    """A kernel that died or never started: its own output (a crash, an import error) is kept
    beside the report."""
    with contextlib.suppress(OSError):
        if log.stat().st_size:
            dest.write_bytes(log.read_bytes())


def recorded_runs(executed: Path) -> list[str]:
    """Run ids the notebook recorded (measure.Run displays one RUN_MIME output per run), in order,
    once each."""
    from ..run.measure import RUN_MIME

    nb = json.loads(Path(executed).read_text())
    run_ids: list[str] = []
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []):
            data = output.get("data", {}).get(RUN_MIME)
            if isinstance(data, str):
                with contextlib.suppress(ValueError):
                    data = json.loads(data)
            run_id = data.get("run_id") if isinstance(data, dict) else None
            if run_id and run_id not in run_ids:
                run_ids.append(run_id)
    return run_ids


def answer_of(executed: Path) -> dict[str, Any]:
    """The answer a report stated (RunReport.answer's output metadata `benchlib`: answer, lines,
    certainty, seed), from the executed notebook; {} when it states none."""
    nb = json.loads(Path(executed).read_text())
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []):
            found = (output.get("metadata") or {}).get("benchlib")
            if isinstance(found, dict) and "answer" in found:
                return found
    return {}


def _from_store(sql: str, run_ids: list[str]) -> list[tuple] | None:
    """Rows of a query over the runs' ids (the query's one parameter), None when the store cannot
    answer: a report must not fail because the store is unreadable."""
    from ..data.store import Store

    try:
        # This host's own store: the runs were just measured here (a shared store would only add a listing).
        con = Store.default_local().connect()
        try:
            return con.execute(sql, [run_ids]).fetchall()
        finally:
            con.close()
    except Exception:
        return None


def engines_of(run_ids: list[str]) -> list[str]:
    """Engines the runs started, from the store (empty when the store cannot say)."""
    if not run_ids:
        return []
    rows = _from_store("select distinct engine from instances where run_id in (select unnest(?)) "
                       "order by engine", run_ids)
    return [r[0] for r in rows or []]


def measured_seconds(run_ids: list[str]) -> float | None:
    """Wall time the runs spent inside measured windows (baseline, phase, settle, warm-up): each
    window stores one wall_time row (a cluster's nodes their own copies, not counted)."""
    if not run_ids:
        return 0.0
    rows = _from_store("select coalesce(sum(value), 0) from measurements "
                       "where metric = 'wall_time' and scope <> 'node' and run_id in (select unnest(?))", run_ids)
    return None if rows is None else float(rows[0][0])
