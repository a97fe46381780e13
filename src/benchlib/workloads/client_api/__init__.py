"""Seed 002's client-API workload: what each layer between an object and its row costs."""
from ..._lazy import lazy_exports
from .dialects import DIALECTS, ApiDialect, dialect_for
from .workload import (EXPERIMENT, LAYER_NAMES, OPERATIONS, PARAMETERS, TRANSPORTS, ClientApiParams,
                       engine_transports, layer_skip_reason, run_client_api, supports,
                       validate_parameters)

run = run_client_api  # the name every workload package answers to (workloads.by_experiment)

__getattr__, __dir__ = lazy_exports(__name__, {"ClientApiReport": ("report", "ClientApiReport")}, globals())

__all__ = ["DIALECTS", "EXPERIMENT", "LAYER_NAMES", "OPERATIONS", "PARAMETERS", "TRANSPORTS", "ApiDialect",
           "ClientApiParams", "ClientApiReport", "dialect_for", "engine_transports", "layer_skip_reason",
           "run", "run_client_api", "supports", "validate_parameters"]
