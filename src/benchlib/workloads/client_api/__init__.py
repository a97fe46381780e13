"""Seed 002's client-API workload: what each layer between an object and its row costs:
parameters, hooks on the shared driver, layers, dialects and report."""
from ...core._lazy import lazy_exports
from .dialects import DIALECTS, ApiDialect, dialect_for
from .workload import (EXPERIMENT, LAYER_NAMES, OPERATIONS, PARAMETERS, TRANSPORTS, WORKLOAD, ClientApiParams,
                       engine_transports, layer_skip_reason, run, supports, validate_parameters)

__getattr__, __dir__ = lazy_exports(__name__, {"ClientApiReport": ("report", "ClientApiReport")}, globals())

__all__ = ["DIALECTS", "EXPERIMENT", "LAYER_NAMES", "OPERATIONS", "PARAMETERS", "TRANSPORTS", "WORKLOAD", "ApiDialect",
           "ClientApiParams", "ClientApiReport", "dialect_for", "engine_transports", "layer_skip_reason",
           "run", "supports", "validate_parameters"]
