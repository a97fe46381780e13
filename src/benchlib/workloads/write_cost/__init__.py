"""Issue 15's write sweep: the anatomy of a row write, per engine, over rows per transaction x rows
per statement: parameters, the run, its dialects and its report."""
from ..._lazy import lazy_exports
from .dialects import ARCHITECTURES, DIALECTS, WriteDialect, dialect_for
from .workload import EXPERIMENT, PARAMETERS, Cell, WriteCostParams, run_write_cost, supports, validate_parameters

run = run_write_cost  # the name every workload package answers to (workloads.by_experiment)

__getattr__, __dir__ = lazy_exports(__name__, {"WriteCostReport": ("report", "WriteCostReport")}, globals())

__all__ = ["ARCHITECTURES", "DIALECTS", "EXPERIMENT", "PARAMETERS", "Cell", "WriteCostParams", "WriteCostReport",
           "WriteDialect", "dialect_for", "run", "run_write_cost", "supports", "validate_parameters"]
