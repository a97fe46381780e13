"""Seed 004's concurrency sweeps with sysbench: parameters, hooks on the shared driver, its
arithmetic and report."""
from ...core._lazy import lazy_exports
from .workload import EXPERIMENT, PARAMETERS, TESTS, WORKLOAD, SweepParams, run, supports, validate_parameters

__getattr__, __dir__ = lazy_exports(__name__, {"SweepReport": ("report", "SweepReport"),
                                               "analysis": ("analysis", None)}, globals())

__all__ = ["run", "EXPERIMENT", "PARAMETERS", "TESTS", "WORKLOAD", "SweepParams", "SweepReport", "analysis",
           "supports", "validate_parameters"]
