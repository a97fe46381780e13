"""Comparing runs of one experiment (seed 003's way of reading results): a helper and a notebook,
not an experiment of its own; a rerun it asks for is a run of the compared experiment."""
from ..core._lazy import lazy_exports
from .selection import MATCHES, PARAMETERS, CompareParams, newest_finished_run, prepare_runs, validate_parameters

__getattr__, __dir__ = lazy_exports(__name__, {"ComparisonReport": ("report", "ComparisonReport")}, globals())

__all__ = ["MATCHES", "PARAMETERS", "CompareParams", "ComparisonReport", "newest_finished_run", "prepare_runs",
           "validate_parameters"]
