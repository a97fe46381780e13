"""Seed 004's concurrency sweeps with sysbench: parameters, the run, its arithmetic and report."""
from . import analysis
from .report import SweepReport
from .workload import EXPERIMENT, PARAMETERS, TESTS, SweepParams, run_sweep, validate_parameters

__all__ = ["EXPERIMENT", "PARAMETERS", "TESTS", "SweepParams", "SweepReport", "analysis", "run_sweep",
           "validate_parameters"]
