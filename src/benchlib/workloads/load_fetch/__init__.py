"""Seed 001's database benchmark: load an SSB line-order table through each engine's own bulk
path, insert one row, fetch all line orders of a customer; B-tree engines against LSM engines.
Parameters, hooks on the shared driver, dialects, analysis and report."""
from ...core._lazy import lazy_exports
from .dialects import COMPARISONS, DIALECTS, dialect_for
from .workload import (EXPERIMENT, FETCH, INSERT, OPERATIONS, PARAMETERS, REGIMES, WORKLOAD, LoadFetchParams, run,
                       supports, validate_parameters)

__getattr__, __dir__ = lazy_exports(__name__, {"LoadFetchReport": ("report", "LoadFetchReport"),
                                               "analysis": ("analysis", None)}, globals())

__all__ = ["run", "DIALECTS", "EXPERIMENT", "FETCH", "INSERT", "OPERATIONS", "COMPARISONS", "PARAMETERS", "REGIMES",
           "WORKLOAD", "LoadFetchParams", "LoadFetchReport", "analysis", "dialect_for", "supports",
           "validate_parameters"]
