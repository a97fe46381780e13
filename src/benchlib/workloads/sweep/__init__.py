"""Seed 004's concurrency sweeps with sysbench: parameters, the run, its arithmetic and report."""
from ..._lazy import lazy_exports
from .workload import EXPERIMENT, PARAMETERS, TESTS, SweepParams, run_sweep, supports, validate_parameters

run = run_sweep  # the name every workload package answers to (workloads.by_experiment)

__getattr__, __dir__ = lazy_exports(__name__, {"SweepReport": ("report", "SweepReport"),
                                               "analysis": ("analysis", None)}, globals())

__all__ = ["run", "EXPERIMENT", "PARAMETERS", "TESTS", "SweepParams", "SweepReport", "analysis", "run_sweep",
           "supports", "validate_parameters"]
