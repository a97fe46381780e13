"""Workloads: what a notebook measures, built on one lifecycle and one measurement path.

Each workload package declares `EXPERIMENT` (the name its runs carry in the store),
`PARAMETERS`, `validate_parameters(dict)`, `supports(engine)` and
`run(params, notebook=..., store=...)`.

The layer above benchlib.present: a workload imports presenting, the run and everything below
(and benchlib.datagen); compare, batch and the CLI import it."""
from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from ..core.errors import ParameterError


def all_workloads() -> dict[str, ModuleType]:
    """Experiment name -> workload package, found by looking (a new workload needs no registry entry)."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        experiment = getattr(module, "EXPERIMENT", None)
        if experiment and callable(getattr(module, "run", None)):
            found[experiment] = module
    return found


def by_experiment(name: str) -> ModuleType:
    known = all_workloads()
    if name not in known:
        raise ParameterError(f"no workload runs experiment {name!r}; known: {', '.join(sorted(known))}")
    return known[name]


def per_operation(experiment: str):
    """The experiment's workload's `per_operation` (None: it names none, or no workload of this
    benchlib runs it, as for a stored run of a workload since removed): what results divides a
    cost by, passed to it by the layers above."""
    module = all_workloads().get(experiment)
    return getattr(getattr(module, "WORKLOAD", None), "per_operation", None)


def supporting(engine) -> list[str]:
    """The experiments whose workload can run `engine` (what `benchlib engines` prints per engine)."""
    return [name for name, module in sorted(all_workloads().items()) if module.supports(engine)]
