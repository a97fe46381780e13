"""benchlib: what does this database engine really cost for this work?

    with benchlib.start("postgres") as eng:      # testcontainers, 127.0.0.1, random password
        eng.query("select 1")                     # a session: execute / version / ready
    with benchlib.Run("dml", params) as run:      # one row in the results store
        meter = run.meter(eng)                    # perf per cgroup + cgroup accounting
"""
from __future__ import annotations

try:
    # mysql-connector-python's C extension (the client-API workload's C driver) brings libstdc++
    # with initial-exec TLS: dlopened after pandas/pyarrow have used up the static TLS block, it
    # fails ("cannot allocate memory in static TLS block") and the C layers could never run.
    # Loaded first (26 ms), it always can.
    import _mysql_connector  # noqa: F401
except ImportError:
    pass

from .core._lazy import lazy_exports
from .core.errors import (BenchlibError, DockerUnavailableError, EngineStartError, EngineUnavailableError,
                          ImageBuildError, ParameterError, StoreError, UnknownEngineError)
from .host.provenance import benchlib_version

__version__ = benchlib_version()

__getattr__, __dir__ = lazy_exports(__name__, {
    "engines": ("engines", None),
    "ENGINES": ("engines", "ENGINES"), "get_engine": ("engines", "get_engine"),
    "Instance": ("containers.lifecycle", "Instance"), "start": ("containers.lifecycle", "start"),
    "Meter": ("run.measure", "Meter"), "Run": ("run.measure", "Run"), "SettlePolicy": ("run.measure", "SettlePolicy"),
    "Store": ("data.store", "Store"),
}, globals())

__all__ = [
    "ENGINES", "BenchlibError", "DockerUnavailableError", "EngineStartError", "EngineUnavailableError",
    "ImageBuildError", "Instance", "Meter", "ParameterError", "Run", "SettlePolicy", "Store", "StoreError",
    "UnknownEngineError", "engines", "get_engine", "start",
]
