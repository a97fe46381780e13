"""benchlib: what does this database engine really cost for this work?

    with benchlib.start("postgres") as eng:      # testcontainers, 127.0.0.1, random password
        eng.query("select 1")                     # a session: execute / version / ready
    with benchlib.Run("dml", params) as run:      # one row in the results store
        meter = run.meter(eng)                    # perf per cgroup + cgroup accounting
"""
from . import engines, notebook, plots, report, results
from .engines import ENGINES, get_engine
from .errors import (BenchlibError, DockerUnavailableError, EngineStartError, EngineUnavailableError,
                     ImageBuildError, ParameterError, StoreError, UnknownEngineError)
from .lifecycle import Instance, start
from .measure import Meter, Run, SettlePolicy
from .provenance import benchlib_version
from .store import Store

__version__ = benchlib_version()

__all__ = [
    "ENGINES", "BenchlibError", "DockerUnavailableError", "EngineStartError", "EngineUnavailableError",
    "ImageBuildError", "Instance", "Meter", "ParameterError", "Run", "SettlePolicy", "Store", "StoreError",
    "UnknownEngineError", "engines", "get_engine", "notebook", "plots", "report", "results", "start",
]
