"""The first call of every notebook: report renderer installed, parameters validated by the
workload's own validator (the same one the CLI runs before a kernel starts).

    params = benchlib.present.notebook.begin(dml)

The values are the notebook's own variables named by the workload's declared parameters (its
parameters cell, overridden by papermill): a parameter is declared once, in the workload."""
from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

import pandas as pd

from .plots import use_report_renderer


def begin(workload: ModuleType, **overrides: Any) -> Any:
    use_report_renderer()
    # A report's tables hold sentences (notes, settings read at start): pandas would cut every cell
    # at 50 characters with "...", and the reader would never see the end of a caveat.
    pd.set_option("display.max_colwidth", None)
    namespace = sys._getframe(1).f_globals  # the notebook's: its parameters cell ran there
    values = {name: namespace[name] for name in workload.PARAMETERS if name in namespace}
    # Nothing printed: the answer is the report's first output. The engines run and those skipped
    # (with why) are in the report's appendix (host parameters, run conditions).
    return workload.validate_parameters({**values, **overrides})
