"""Seed 001's Star Schema Benchmark: five generated tables and lineorder_flat loaded into column
stores (ClickHouse through chDB, DuckDB) and a row store (PostgreSQL), the 13 SSB queries cold and
hot, every answer checked against DuckDB's. Parameters, hooks on the shared driver, dialects,
queries, analysis and report."""
from ...core._lazy import lazy_exports
from .dialects import DIALECTS, dialect_for
from .queries import FINE_GRAINED, NAMES as QUERY_NAMES
from .workload import EXPERIMENT, PARAMETERS, WORKLOAD, SsbParams, run, supports, validate_parameters

__getattr__, __dir__ = lazy_exports(__name__, {"SsbReport": ("report", "SsbReport"),
                                               "analysis": ("analysis", None)}, globals())

__all__ = ["run", "DIALECTS", "EXPERIMENT", "FINE_GRAINED", "PARAMETERS", "QUERY_NAMES", "WORKLOAD", "SsbParams",
           "SsbReport", "analysis", "dialect_for", "supports", "validate_parameters"]
