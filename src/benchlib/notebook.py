"""The first call of every notebook: report renderer installed, parameters validated by the
workload's own validator (the same one the CLI runs before a kernel starts), and what will run
said in one line.

    params = benchlib.notebook.begin(dml, engines=engines, rows=rows, ...)
"""
from __future__ import annotations

from types import ModuleType
from typing import Any

from .plots import use_report_renderer


def begin(workload: ModuleType, **parameters: Any) -> Any:
    use_report_renderer()
    params = workload.validate_parameters(parameters)
    engines = getattr(params, "engines", None)
    if engines is not None:
        print(f"engines: {', '.join(engines)}")
        for key, reason in (getattr(params, "skipped", None) or {}).items():
            print(f"skipped {key}: {reason}")
    return params
