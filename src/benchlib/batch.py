"""Run notebooks headless with papermill and publish them.

Every run or batch gets its own folder, `reports/<UTC time>-<6 hex>-<notebook or set>/`, with the
executed notebook, a self-contained HTML report (code hidden, figures interactive, plotly.js
embedded once, no CDN script), PNG + SVG of every figure, `summary.txt`, `index.html` and
`manifest.json` (the outcomes, machine-readable). `reports/index.html` lists every folder and the
latest report of each notebook; it is rewritten after every run and batch.

Parameters are checked before any kernel starts: names against the notebook's parameters cell,
values by the workload's own `validate_parameters` (the module named in the notebook's metadata
`benchlib.workload`)."""
from __future__ import annotations

import contextlib
import datetime as dt
import importlib
import json
import os
import re
import secrets
import socket
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml

from .errors import BenchlibError, ParameterError
from .provenance import benchlib_version
from .settings import REPORT_TEMPLATE_DIR, get_settings

PLOTLY_MIME = "application/vnd.plotly.v1+json"
KERNEL_NAME = "python3"
# Time a kernel gets after an interrupt to leave its `with` blocks (stop containers, write the run's
# final status) before it is terminated.
KERNEL_SHUTDOWN_WAIT_S = 30.0


@dataclass
class NotebookOutcome:
    notebook: str
    params_file: str | None
    ok: bool
    seconds: float
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

    def to_json(self, base: Path) -> dict[str, Any]:
        """Paths relative to `base` (the report folder), so a folder can move."""
        def rel(p: Path | None) -> str | None:
            return None if p is None else os.path.relpath(p, base)

        data = asdict(self)
        data.update(executed=rel(self.executed), html=rel(self.html), figures=[rel(p) for p in self.figures])
        return data


@dataclass(frozen=True)
class NotebookSpec:
    """What the runner reads from a notebook file without starting a kernel."""

    path: Path
    defaults: dict[str, Any]  # the parameters cell's values
    workload: str | None  # metadata benchlib.workload: module exposing validate_parameters(params)
    title: str | None  # the first markdown cell's H1
    question: str | None  # the paragraph after it


def _now() -> dt.datetime:
    # Not store.utcnow: importing the store (pyarrow) would cost a rejected parameter ~0.5 s.
    return dt.datetime.now(dt.timezone.utc)


def notebooks() -> list[Path]:
    return sorted(get_settings().notebooks_dir.glob("[0-9]*.ipynb"))


def find_notebook(name: str) -> Path:
    path = Path(name)
    if path.suffix == ".ipynb" and path.exists():
        return path.resolve()
    for nb in notebooks():
        if nb.stem == name or nb.stem.startswith(f"{name}-") or nb.name == name:
            return nb
    known = ", ".join(nb.stem for nb in notebooks()) or "none"
    raise ParameterError(f"no notebook {name!r}; known notebooks: {known}")


def parameter_sets(notebook: Path) -> list[str]:
    return sorted(p.stem for p in (get_settings().params_dir / notebook.stem).glob("*.yaml"))


def params_file(notebook: Path, params_set: str) -> Path:
    path = get_settings().params_dir / notebook.stem / f"{params_set}.yaml"
    if not path.is_file():
        known = ", ".join(parameter_sets(notebook)) or "none"
        raise ParameterError(f"{notebook.stem} has no parameter set {params_set!r} "
                             f"(papermill_params/{notebook.stem}/{params_set}.yaml); known sets: {known}")
    return path


def _yaml(text: str, where: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ParameterError(f"{where}: invalid YAML{at}: {problem}") from None


def load_params(path: Path | None, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if path is not None:
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise ParameterError(f"cannot read parameter file {path}: {exc.strerror}") from None
        loaded = _yaml(text, str(path)) or {}
        if not isinstance(loaded, dict):
            raise ParameterError(f"{path}: expected a mapping of parameter names to values")
        params.update(loaded)
    params.update(overrides or {})
    return params


def parse_override(text: str) -> tuple[str, Any]:
    """`rows=2000000`, `engines=[postgres, mariadb]`: values are YAML."""
    if "=" not in text:
        raise ParameterError(f"override {text!r} must look like name=value")
    key, _, value = text.partition("=")
    return key.strip(), _yaml(value, f"-P {text!r}")


def read_notebook(path: Path) -> NotebookSpec:
    """Defaults, workload, title and question of a notebook; no kernel, no nbformat (fast)."""
    try:
        nb = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise ParameterError(f"cannot read notebook {path}: {exc}") from None
    cells = nb.get("cells", [])
    tagged = [c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    defaults: dict[str, Any] = {}
    if tagged:
        namespace: dict[str, Any] = {}
        try:
            # The parameters cell holds plain values only (a project rule), so running it is safe and cheap.
            exec(compile(_source(tagged[0]), f"{Path(path).name} parameters cell", "exec"), namespace)
        except Exception as exc:
            raise ParameterError(f"{Path(path).stem}: the parameters cell is not plain values: {exc}") from None
        defaults = {k: v for k, v in namespace.items() if not k.startswith("_")}
    title, question = _title_and_question(cells)
    workload = (nb.get("metadata", {}).get("benchlib") or {}).get("workload")
    return NotebookSpec(Path(path), defaults, workload, title, question)


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _title_and_question(cells: list[dict]) -> tuple[str | None, str | None]:
    """The first H1 of the markdown cells and the paragraph after it. Not simply the first markdown
    cell: papermill puts an error banner above a failed notebook's cells."""
    for cell in cells:
        if cell.get("cell_type") != "markdown":
            continue
        lines = _source(cell).splitlines()
        for i, line in enumerate(lines):
            if not line.startswith("# "):
                continue
            paragraph: list[str] = []
            for after in lines[i + 1:]:
                if after.strip():
                    paragraph.append(after.strip())
                elif paragraph:
                    break
            return line[2:].strip(), _plain(" ".join(paragraph)) or None
    return None, None


def _plain(markdown: str) -> str:
    """Markdown emphasis, code spans and links as plain text (the site index shows it as text)."""
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", markdown)
    text = re.sub(r"\*+|`|(?<!\w)_+|_+(?!\w)", "", text)
    return text.strip()


def check_parameters(notebook: Path, params: dict[str, Any]) -> None:
    """Reject unknown parameter names and bad values before any kernel starts, with the
    workload's own validator (raises ParameterError, UnknownEngineError, EngineUnavailableError)."""
    spec = read_notebook(notebook)
    unknown = sorted(set(params) - set(spec.defaults))
    if unknown:
        raise ParameterError(f"{notebook.stem} has no parameter(s) {', '.join(unknown)}; "
                             f"its parameters are: {', '.join(sorted(spec.defaults))}")
    if not spec.workload:
        raise ParameterError(f"{notebook.stem}: its metadata names no workload (metadata.benchlib.workload), "
                             "so its parameters cannot be checked before a kernel starts")
    try:
        module = importlib.import_module(spec.workload)
    except ImportError as exc:
        raise ParameterError(f"{notebook.stem}: workload module {spec.workload!r} cannot be imported: {exc}") from None
    validate = getattr(module, "validate_parameters", None)
    if validate is None:
        raise ParameterError(f"{notebook.stem}: workload module {spec.workload!r} has no validate_parameters")
    validate({**spec.defaults, **params})


def new_report_dir(name: str, root: Path | None = None) -> Path:
    """`<root>/<UTC time>-<6 hex>-<name>/`, created here: unique even for runs started in the same
    second (mkdir fails on a collision and another suffix is drawn)."""
    root = Path(root or get_settings().reports_dir)
    root.mkdir(parents=True, exist_ok=True)
    while True:
        path = root / f"{_now():%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}-{name}"
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue


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

    def __init__(self, outcome: "NotebookOutcome"):
        super().__init__("interrupted")
        self.outcome = outcome


def execute(notebook: Path, out_dir: Path, params: dict[str, Any], *, params_file_name: str | None = None,
            progress: bool = True, output_name: str | None = None) -> NotebookOutcome:
    """Execute one notebook into out_dir and render it. A failing notebook still leaves its
    executed copy (with the error) and its HTML. With `progress`, one console line (stderr)
    follows the notebook's benchlib.progress.Progress. Ctrl-C interrupts the kernel (its `with`
    blocks stop containers and close the run) and raises `Interrupted`. `output_name` names the
    executed copy, its HTML and figures when one folder holds the notebook more than once."""
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    from . import progress as prog

    out_dir.mkdir(parents=True, exist_ok=True)
    name = output_name or notebook.stem
    executed = out_dir / f"{name}.ipynb"
    started_at = _now()
    started = time.perf_counter()
    error, interrupted = None, False
    with tempfile.TemporaryDirectory(prefix="benchlib-exec-") as tmp:
        progress_file = Path(tmp) / "progress.jsonl"
        kernel_log = Path(tmp) / "kernel.log"
        env = {prog.PROGRESS_FILE_ENV: str(progress_file), prog.NOTEBOOK_ENV: notebook.stem}
        follow = prog.follow(progress_file, notebook.stem) if progress else contextlib.nullcontext()
        try:
            with follow:
                pm.execute_notebook(str(notebook), str(executed), parameters=params, cwd=str(notebook.parent),
                                    progress_bar=False, log_output=False, kernel_name=KERNEL_NAME,
                                    kernel_manager_class=_kernel_manager_class(env, kernel_log))
        except KeyboardInterrupt:
            error, interrupted = "interrupted", True
        except Exception as exc:
            error = f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else ''}"
            if not isinstance(exc, PapermillExecutionError):  # a cell's error is in the notebook already
                _keep_kernel_log(kernel_log, out_dir / f"{name}.kernel.log")
    seconds = time.perf_counter() - started
    html_path, figures, figure_error, run_ids = None, [], None, []
    if executed.exists():
        run_ids = recorded_runs(executed)
        if not interrupted:  # the user is waiting for the prompt, not for a report of half a run
            html_path = render_html(executed, out_dir / f"{name}.html")
            try:
                figures = export_figures(executed, out_dir / "figures" / name)
            except Exception as exc:  # static images are a bonus: the HTML report already has the figures
                figure_error = f"{type(exc).__name__}: {exc}"
    spec = read_notebook(executed if executed.exists() else notebook)
    outcome = NotebookOutcome(name, params_file_name, error is None, seconds, executed, html_path,
                              figures, error, figure_error, run_ids, spec.title, spec.question,
                              engines_of(run_ids), started_at.isoformat(timespec="seconds"))
    if interrupted:
        raise Interrupted(outcome)
    return outcome


def _keep_kernel_log(log: Path, dest: Path) -> None:
    """A kernel that died or never started: its own output (a crash, an import error) is kept
    beside the report."""
    with contextlib.suppress(OSError):
        if log.stat().st_size:
            dest.write_bytes(log.read_bytes())


def recorded_runs(executed: Path) -> list[str]:
    """Run ids the notebook recorded (measure.Run displays one RUN_MIME output per run), in order,
    once each."""
    from .measure import RUN_MIME

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


def engines_of(run_ids: list[str]) -> list[str]:
    """Engines the runs started, from the store (empty when the store cannot say)."""
    if not run_ids:
        return []
    from .store import Store

    try:
        con = Store.default().connect()
        try:
            rows = con.execute("select distinct engine from instances where run_id in (select unnest(?)) "
                               "order by engine", [run_ids]).fetchall()
        finally:
            con.close()
    except Exception:  # a report must not fail because the store is unreadable
        return []
    return [r[0] for r in rows]


def render_html(executed: Path, dest: Path) -> Path:
    import nbformat
    import plotly.offline
    from nbconvert import HTMLExporter
    from nbconvert.preprocessors import Preprocessor

    class DropStderr(Preprocessor):
        """Progress bars and warnings go to stderr: useful live, noise in a published report."""

        def preprocess_cell(self, cell, resources, index):
            if cell.cell_type == "code":
                cell.outputs = [o for o in cell.outputs if not (o.get("output_type") == "stream"
                                                                and o.get("name") == "stderr")]
            return cell, resources

    exporter = HTMLExporter(template_name="benchlib", extra_template_basedirs=[str(REPORT_TEMPLATE_DIR)])
    exporter.exclude_input = True
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    exporter.register_preprocessor(DropStderr(), enabled=True)
    nb = nbformat.read(executed, as_version=4)
    body, _ = exporter.from_notebook_node(nb, resources={
        "plotly_js": plotly.offline.get_plotlyjs(), "benchlib_version": benchlib_version(),
        "metadata": {"name": executed.stem},
    })
    dest.write_text(body)
    return dest


def export_figures(executed: Path, dest_dir: Path) -> list[Path]:
    """PNG and SVG of each plotly figure in the executed notebook, named by layout.meta."""
    import nbformat
    import plotly.io as pio

    nb = nbformat.read(executed, as_version=4)
    specs: list[dict] = []
    names: set[str] = set()
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if PLOTLY_MIME not in data:
                continue
            fig = pio.from_json(json.dumps(data[PLOTLY_MIME]))
            meta = fig.layout.meta if isinstance(fig.layout.meta, dict) else {}
            name = meta.get("benchlib_name") or f"figure-{len(names) + 1}"
            while name in names:
                name += "-2"
            names.add(name)
            for fmt in ("png", "svg"):
                specs.append({"fig": fig, "path": str(dest_dir / f"{name}.{fmt}"),
                              "opts": {"format": fmt, "width": 1000, "height": 450, "scale": 2 if fmt == "png" else 1}})
    if not specs:
        return []
    dest_dir.mkdir(parents=True, exist_ok=True)
    import kaleido

    kaleido.write_fig_from_object_sync(specs)
    return [Path(s["path"]) for s in specs if Path(s["path"]).exists()]


@dataclass(frozen=True)
class Planned:
    """A notebook with its checked parameters, ready to execute."""

    notebook: Path
    params: dict[str, Any]
    params_file: str | None = None
    output_name: str | None = None  # when a batch runs one notebook with several sets


BATCHES_FILE = "batches.yaml"


def batch_sets(params_set: str) -> Callable[[Path], list[str]]:
    """notebook -> the parameter sets a batch named `params_set` runs it with: the set of that
    name, unless papermill_params/batches.yaml lists more for the notebook (e.g. the report's DML
    run at its default scale and again with every available engine at a scale FerretDB can take)."""
    path = get_settings().params_dir / BATCHES_FILE
    batches = _yaml(path.read_text(), str(path)) if path.exists() else {}
    listed = (batches or {}).get(params_set, {}) or {}
    if not isinstance(listed, dict):
        raise ParameterError(f"{path}: {params_set} must map notebooks to lists of parameter-set names; "
                             f"got {listed!r}")

    def sets_of(notebook: Path) -> list[str]:
        sets = listed.get(notebook.stem, [params_set])
        if not isinstance(sets, list) or not sets or not all(isinstance(s, str) for s in sets):
            raise ParameterError(f"{path}: {params_set}.{notebook.stem} must be a list of parameter-set names; "
                                 f"got {sets!r}")
        return sets

    return sets_of


def plan_batch(params_set: str = "default", only: list[str] | None = None,
               overrides: dict[str, Any] | None = None) -> list[Planned]:
    """Every numbered notebook (or `only` these) with papermill_params/<notebook>/<params_set>.yaml,
    each file read and each notebook's parameters checked, all before the first one runs: a typo
    in the last notebook's file must not surface after an hour of the first ones."""
    selected = [find_notebook(n) for n in only] if only else notebooks()
    if not selected:
        raise ParameterError(f"no notebooks in {get_settings().notebooks_dir}")
    sets_of = batch_sets(params_set)
    plan, problems = [], []
    for nb in selected:
        try:
            sets = sets_of(nb)
        except BenchlibError as exc:
            problems.append(str(exc))
            continue
        for name in sets:
            try:
                pfile = params_file(nb, name)
                params = load_params(pfile, overrides)
                check_parameters(nb, params)
                plan.append(Planned(nb, params, pfile.name, f"{nb.stem}--{name}" if len(sets) > 1 else None))
            except BenchlibError as exc:
                problems.append(str(exc))
    if problems:
        raise ParameterError("; ".join(problems))
    return plan


def run_notebooks(name: str, kind: str, plan: list[Planned], *, out_dir: Path | None = None,
                  out_root: Path | None = None, progress: bool = True) -> tuple[Path, list[NotebookOutcome]]:
    """Execute a checked plan into a new report folder (`kind` run or batch, named after `name`),
    then write the folder's summary, index and manifest and the site index. An interrupted run
    still gets them, listing what finished."""
    root = Path(out_root or get_settings().reports_dir)
    out_dir = Path(out_dir) if out_dir else new_report_dir(name, root)
    out_dir.mkdir(parents=True, exist_ok=True)
    started_at = _now()
    outcomes: list[NotebookOutcome] = []
    complete = False
    try:
        for item in plan:
            try:
                outcomes.append(execute(item.notebook, out_dir, item.params, params_file_name=item.params_file,
                                        progress=progress, output_name=item.output_name))
            except Interrupted as exc:
                outcomes.append(exc.outcome)
                raise
        complete = True
    finally:
        write_folder(out_dir, kind, name, outcomes, started_at, complete)
        if out_dir.parent.resolve() == root.resolve():
            _point_latest(root, out_dir)
            write_site_index(root)
    return out_dir, outcomes


def _point_latest(root: Path, out_dir: Path) -> None:
    latest = root / "latest"
    if latest.exists() and not latest.is_symlink():
        return  # someone's own folder: not ours to replace
    tmp = root / f".latest.{os.getpid()}"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(out_dir.name)
    os.replace(tmp, latest)  # never a moment without `latest`


def write_folder(out_dir: Path, kind: str, name: str, outcomes: list[NotebookOutcome], started_at,
                 complete: bool = True) -> None:
    """summary.txt, index.html and manifest.json of one run or batch folder."""
    lines = [f"{kind} {out_dir.name}" + ("" if complete else " (interrupted)")]
    for o in outcomes:
        status = "ok" if o.ok else f"FAILED: {o.error}"
        figures = f"{len(o.figures)} figure files" if not o.figure_error else f"figures not exported: {o.figure_error}"
        lines.append(f"{o.notebook}: {status} ({o.seconds:.0f} s, {figures})")
    (out_dir / "summary.txt").write_text("\n".join(lines) + "\n")
    manifest = {
        "kind": kind, "name": name, "folder": out_dir.name, "complete": complete,
        "started_at": started_at.isoformat(timespec="seconds"),
        "finished_at": _now().isoformat(timespec="seconds"),
        "host": socket.gethostname(), "benchlib_version": benchlib_version(),
        "outcomes": [o.to_json(out_dir) for o in outcomes],
    }
    _write_text(out_dir / "manifest.json", json.dumps(manifest, indent=2, default=str) + "\n")
    _write_text(out_dir / "index.html", _render("folder.html.j2", manifest=_with_status(manifest)))


def read_manifests(root: Path) -> list[dict]:
    """Manifests of every report folder under root, newest first. A folder without one (an older
    benchlib's, or one whose runner was killed) is listed with what its name says."""
    manifests = []
    for folder in Path(root).iterdir() if Path(root).is_dir() else []:
        if not folder.is_dir() or folder.is_symlink() or folder.name.startswith("."):
            continue
        try:
            manifest = json.loads((folder / "manifest.json").read_text())
        except (OSError, ValueError):
            manifest = {"kind": "unknown", "name": folder.name, "complete": False, "outcomes": [],
                        "started_at": None, "note": "no manifest (an older benchlib's folder, or its runner was killed)"}
        manifest["folder"] = folder.name
        manifests.append(_with_status(manifest))
    # Folder names start with the UTC start time, so they sort by age even without a manifest.
    return sorted(manifests, key=lambda m: m["folder"], reverse=True)


def _with_status(manifest: dict) -> dict:
    outcomes = manifest.get("outcomes", [])
    failed = sum(1 for o in outcomes if not o.get("ok"))
    if not manifest.get("complete"):
        status = "incomplete"
    elif failed:
        status = f"{failed} of {len(outcomes)} failed"
    else:
        status = "ok"
    return {**manifest, "status": status}


def write_site_index(root: Path | None = None) -> Path:
    """reports/index.html: every run and batch folder, newest first, and the latest report of
    each notebook (title, question, date, engines, status). Self-contained: inline CSS only."""
    root = Path(root or get_settings().reports_dir)
    manifests = read_manifests(root)
    latest: dict[str, dict] = {}
    for manifest in manifests:
        for outcome in manifest.get("outcomes", []):
            if outcome["notebook"] not in latest:
                latest[outcome["notebook"]] = {**outcome, "folder": manifest["folder"]}
    path = root / "index.html"
    _write_text(path, _render("index.html.j2", folders=manifests,
                              notebooks=[latest[k] for k in sorted(latest)], generated=_now()))
    importlib.import_module(".explorer", __package__).write_explorer(root)  # late: the explorer imports batch
    return path


def _render(template: str, **context: Any) -> str:
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(REPORT_TEMPLATE_DIR / "site"),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True)
    return env.get_template(template).render(**context, benchlib_version=benchlib_version())


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)  # readers (a browser, a concurrent run's index) never see half a page
