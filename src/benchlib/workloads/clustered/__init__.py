"""Seed 003's clustered-vs-heap battery with sysbench, and seed 001's key kinds and insert orders:
parameters, hooks on the shared driver, dialects, analysis and report."""
from ...core._lazy import lazy_exports
from .dialects import DIALECTS, INSERT_ORDERS, KEY_KINDS, ClusteredDialect, dialect_for
from .workload import (EXPERIMENT, PARAMETERS, REGIMES, TESTS, WORKLOAD, ClusteredParams, generate_keys, run, supports,
                       validate_parameters)

__getattr__, __dir__ = lazy_exports(__name__, {"ClusteredReport": ("report", "ClusteredReport"),
                                               "analysis": ("analysis", None)}, globals())

__all__ = ["run", "DIALECTS", "EXPERIMENT", "INSERT_ORDERS", "KEY_KINDS", "PARAMETERS", "REGIMES", "TESTS", "WORKLOAD",
           "ClusteredDialect", "ClusteredParams", "ClusteredReport", "analysis", "dialect_for", "generate_keys",
           "supports", "validate_parameters"]
