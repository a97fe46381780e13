"""Seed 000's DML workload: parameters, the run, its dialects and its report."""
from ..._lazy import lazy_exports
from .dialects import DIALECTS, PK_KINDS, DmlDialect, dialect_for
from .workload import EXPERIMENT, PARAMETERS, PHASES, DmlParams, run_dml, supports, validate_parameters

run = run_dml  # the name every workload package answers to (workloads.by_experiment)

__getattr__, __dir__ = lazy_exports(__name__, {"DmlReport": ("report", "DmlReport")}, globals())

__all__ = ["run", "DIALECTS", "EXPERIMENT", "PARAMETERS", "PHASES", "PK_KINDS", "DmlDialect", "DmlParams", "DmlReport",
           "dialect_for", "run_dml", "supports", "validate_parameters"]
