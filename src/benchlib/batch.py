"""Run notebooks headless with papermill and publish them: the executed notebook, a
self-contained HTML report (code hidden, figures interactive, plotly.js embedded once, no CDN
script) and PNG + SVG of every figure, per batch under reports/<batch id>/."""
from __future__ import annotations

import html
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .errors import ParameterError
from .provenance import benchlib_version
from .settings import REPORT_TEMPLATE_DIR, get_settings
from .store import utcnow

PLOTLY_MIME = "application/vnd.plotly.v1+json"


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


def notebooks() -> list[Path]:
    return sorted(get_settings().notebooks_dir.glob("[0-9]*.ipynb"))


def find_notebook(name: str) -> Path:
    path = Path(name)
    if path.suffix == ".ipynb" and path.exists():
        return path.resolve()
    for nb in notebooks():
        if nb.stem == name or nb.stem.startswith(f"{name}-") or nb.name == name:
            return nb
    known = ", ".join(nb.stem for nb in notebooks())
    raise ParameterError(f"no notebook {name!r}; known notebooks: {known}")


def params_file(notebook: Path, params_set: str) -> Path | None:
    path = get_settings().params_dir / notebook.stem / f"{params_set}.yaml"
    return path if path.exists() else None


def load_params(path: Path | None, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if path is not None:
        loaded = yaml.safe_load(path.read_text()) or {}
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
    return key.strip(), yaml.safe_load(value)


def execute(notebook: Path, out_dir: Path, params: dict[str, Any], *, params_file_name: str | None = None,
            progress: bool = False) -> NotebookOutcome:
    """Execute one notebook into out_dir and render it. A failing notebook still leaves its
    executed copy (with the error) and its HTML."""
    import papermill as pm

    out_dir.mkdir(parents=True, exist_ok=True)
    executed = out_dir / notebook.name
    started = time.perf_counter()
    error = None
    try:
        pm.execute_notebook(str(notebook), str(executed), parameters=params, cwd=str(notebook.parent),
                            progress_bar=progress, log_output=False, kernel_name="python3")
    except Exception as exc:
        error = f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else ''}"
    seconds = time.perf_counter() - started
    html_path, figures, figure_error = None, [], None
    if executed.exists():
        html_path = render_html(executed, out_dir / f"{notebook.stem}.html")
        try:
            figures = export_figures(executed, out_dir / "figures" / notebook.stem)
        except Exception as exc:  # static images are a bonus: the HTML report already has the figures
            figure_error = f"{type(exc).__name__}: {exc}"
    return NotebookOutcome(notebook.stem, params_file_name, error is None, seconds, executed, html_path,
                           figures, error, figure_error)


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


def run_batch(params_set: str = "default", only: list[str] | None = None, overrides: dict[str, Any] | None = None,
              out_root: Path | None = None) -> tuple[Path, list[NotebookOutcome]]:
    """Every numbered notebook with papermill_params/<notebook>/<params_set>.yaml; the batch
    goes on after a failure and says so in its summary."""
    selected = [find_notebook(n) for n in only] if only else notebooks()
    batch_id = f"{utcnow():%Y%m%dT%H%M%SZ}-{params_set}"
    out_dir = (out_root or get_settings().reports_dir) / batch_id
    outcomes = []
    for nb in selected:
        pfile = params_file(nb, params_set)
        if pfile is None:
            raise ParameterError(f"{nb.stem}: no parameter file papermill_params/{nb.stem}/{params_set}.yaml")
        outcomes.append(execute(nb, out_dir, load_params(pfile, overrides), params_file_name=str(pfile.name)))
    write_index(out_dir, batch_id, outcomes)
    latest = out_dir.parent / "latest"
    if latest.is_symlink() or not latest.exists():
        latest.unlink(missing_ok=True)
        latest.symlink_to(out_dir.name)
    return out_dir, outcomes


def write_index(out_dir: Path, batch_id: str, outcomes: list[NotebookOutcome]) -> None:
    rows = []
    lines = [f"batch {batch_id}"]
    for o in outcomes:
        status = "ok" if o.ok else f"FAILED: {o.error}"
        figures = f"{len(o.figures)} figure files" if not o.figure_error else f"figures not exported: {o.figure_error}"
        lines.append(f"{o.notebook}: {status} ({o.seconds:.0f} s, {figures})")
        link = f'<a href="{html.escape(o.html.name)}">{html.escape(o.notebook)}</a>' if o.html else html.escape(o.notebook)
        rows.append(f"<tr><td>{link}</td><td>{html.escape(status)}</td><td>{o.seconds:.0f} s</td></tr>")
    (out_dir / "summary.txt").write_text("\n".join(lines) + "\n")
    (out_dir / "index.html").write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>benchlib reports "
        f"{html.escape(batch_id)}</title></head><body><h1>benchlib reports {html.escape(batch_id)}</h1>"
        f"<table><tr><th>notebook</th><th>status</th><th>time</th></tr>{''.join(rows)}</table></body></html>\n")
