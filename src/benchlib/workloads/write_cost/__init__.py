"""Issue 15's write sweep: the anatomy of a row write, per engine, over rows per transaction x rows
per statement: parameters, hooks on the shared driver, its dialects and its report."""
from ...core._lazy import lazy_exports
from .dialects import ARCHITECTURES, DIALECTS, WriteDialect, dialect_for
from .workload import EXPERIMENT, PARAMETERS, WORKLOAD, Cell, WriteCostParams, run, supports, validate_parameters

__getattr__, __dir__ = lazy_exports(__name__, {"WriteCostReport": ("report", "WriteCostReport")}, globals())

__all__ = ["ARCHITECTURES", "DIALECTS", "EXPERIMENT", "PARAMETERS", "WORKLOAD", "Cell", "WriteCostParams",
           "WriteCostReport", "WriteDialect", "dialect_for", "run", "supports", "validate_parameters"]
