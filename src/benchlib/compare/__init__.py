"""Comparing runs of one experiment (seed 003's way of reading results): a helper and a notebook,
not an experiment of its own; a rerun it asks for is a run of the compared experiment. With it,
what reads across runs: the changes between consecutive runs of a series (`changes`) and the
explorer page over every run in the store (`explorer`, with its vendored plotly.js).

Above benchlib.workloads (a run's operation count is its workload's): it imports workloads and
every layer below; batch and the CLI import it."""
from ..core._lazy import lazy_exports
from .selection import MATCHES, PARAMETERS, CompareParams, newest_finished_run, prepare_runs, validate_parameters

__getattr__, __dir__ = lazy_exports(__name__, {"ComparisonReport": ("report", "ComparisonReport")}, globals())

__all__ = ["MATCHES", "PARAMETERS", "CompareParams", "ComparisonReport", "newest_finished_run", "prepare_runs",
           "validate_parameters"]
