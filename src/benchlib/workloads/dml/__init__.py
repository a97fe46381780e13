"""Seed 000's DML workload: parameters, the run, its dialects and its report."""
from .dialects import DIALECTS, PK_KINDS, DmlDialect, dialect_for
from .report import DmlReport
from .workload import EXPERIMENT, PARAMETERS, PHASES, DmlParams, run_dml, validate_parameters

__all__ = ["DIALECTS", "EXPERIMENT", "PARAMETERS", "PHASES", "PK_KINDS", "DmlDialect", "DmlParams", "DmlReport",
           "dialect_for", "run_dml", "validate_parameters"]
