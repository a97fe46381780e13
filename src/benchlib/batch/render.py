"""An executed notebook published: a self-contained HTML report (code hidden, figures interactive,
plotly.js embedded once, no CDN script) and PNG + SVG files of its figures for blog posts."""
from __future__ import annotations

import json
from pathlib import Path

from ..host.provenance import benchlib_version
from ..core.settings import REPORT_TEMPLATE_DIR
from . import browser

PLOTLY_MIME = "application/vnd.plotly.v1+json"


def render_html(executed: Path, dest: Path) -> Path:
    import nbformat
    import plotly.offline
    from nbconvert import HTMLExporter
    from nbconvert.preprocessors import Preprocessor

    from ..run.measure import RUN_MIME

    class DropStderr(Preprocessor):
        """Progress bars and warnings go to stderr: useful live, noise in a published report. The
        run's announcement (its id, for the batch to read) stays in the executed notebook: in the
        report it would stand between the question and the answer, and the appendix has the id."""

        def preprocess_cell(self, cell, resources, index):
            if cell.cell_type == "code":
                cell.outputs = [o for o in cell.outputs
                                if not (o.get("output_type") == "stream" and o.get("name") == "stderr")
                                and RUN_MIME not in o.get("data", {})]
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
    browser.shared().write_figures(specs)
    return [Path(s["path"]) for s in specs if Path(s["path"]).exists()]
