"""Run notebooks headless with papermill and publish them.

Every run or batch gets its own folder, `reports/<UTC time>-<6 hex>-<notebook or set>/`, with the
executed notebook, a self-contained HTML report (code hidden, figures interactive, plotly.js
embedded once, no CDN script), PNG + SVG of every figure, `summary.txt`, `index.html` and
`manifest.json` (the outcomes and the batch's harness share, machine-readable).
`reports/index.html` lists every folder and the latest report of each notebook; it is rewritten
after every run and batch.

One module per job: `plan` (notebooks, parameter sets, checks before any kernel starts),
`prepare` (engine images before the first notebook), `execute` (one notebook through papermill),
`render` (HTML report and figure files), `harness` (time outside measured windows), `site` (the
report folders and the site index) and `runner` (a plan from start to published folder).

The layer under the CLI only: it may import every layer below (the explorer page from
benchlib.compare); nothing but the CLI imports it."""
from ..core.errors import ParameterError
from ..core.settings import get_settings
from .execute import Interrupted, NotebookOutcome, engines_of, execute, measured_seconds, recorded_runs
from .harness import HarnessShare, harness_shares
from .plan import (BATCHES_FILE, NotebookSpec, Planned, batch_sets, check_parameters, engines_to_run,
                   find_notebook, load_params, notebooks, parameter_sets, params_file, parse_override,
                   plan_batch, plan_engines, plan_valgrind, read_notebook, valgrind_to_run)
from .prepare import Prepared, prepare_engines
from .render import PLOTLY_MIME, export_figures, render_html
from .runner import run_notebooks
from ..present.pages import read_manifests
from .site import new_report_dir, write_folder, write_site_index

__all__ = [
    "BATCHES_FILE", "PLOTLY_MIME", "HarnessShare", "Interrupted", "NotebookOutcome", "NotebookSpec",
    "ParameterError", "Planned", "Prepared", "batch_sets", "check_parameters", "engines_of", "engines_to_run", "execute",
    "export_figures", "find_notebook", "get_settings", "harness_shares", "load_params", "measured_seconds",
    "new_report_dir", "notebooks", "parameter_sets", "params_file", "parse_override", "plan_batch",
    "plan_engines", "plan_valgrind", "prepare_engines", "read_manifests", "read_notebook", "recorded_runs", "render_html",
    "run_notebooks", "valgrind_to_run", "write_folder", "write_site_index",
]
