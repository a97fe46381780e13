"""Seed 000's DML workload: parameters, hooks on the shared driver, its dialects and its report."""
from ...core._lazy import lazy_exports
from .dialects import DIALECTS, PK_KINDS, DmlDialect, dialect_for
from .workload import EXPERIMENT, PARAMETERS, PHASES, WORKLOAD, DmlParams, run, supports, validate_parameters

__getattr__, __dir__ = lazy_exports(__name__, {"DmlReport": ("report", "DmlReport")}, globals())

__all__ = ["run", "DIALECTS", "EXPERIMENT", "PARAMETERS", "PHASES", "PK_KINDS", "WORKLOAD", "DmlDialect", "DmlParams",
           "DmlReport", "dialect_for", "supports", "validate_parameters"]
