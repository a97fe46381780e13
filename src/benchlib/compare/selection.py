"""Seed 003's way of reading results, across runs: two or more runs of one experiment (other
versions, hosts or settings, or runs imported with `benchlib import`) as ratios to the first run,
per engine, variant and phase, with Welch's test saying which changes are beyond noise.

With no run ids, the newest finished run of the experiment is compared with a fresh rerun of it
on the same parameters: what a reader needs to trust any single run's differences."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ParameterError
from ..validation import choice, fraction, require

PARAMETERS = ("experiment", "runs", "match", "threshold")
MATCHES = ("engine", "product")


@dataclass(frozen=True)
class CompareParams:
    experiment: str
    runs: list[str]  # empty: the newest finished run, then a rerun of it
    match: str
    threshold: float

    @property
    def rerun(self) -> bool:
        return not self.runs


def validate_parameters(params: dict[str, Any]) -> CompareParams:
    require(params, PARAMETERS, "compare")
    from ..workloads import all_workloads  # workload packages import their own validators only: light

    experiment = choice("experiment", params["experiment"], sorted(all_workloads()))
    threshold = fraction("threshold", params["threshold"])
    runs = params["runs"]
    if not isinstance(runs, (list, tuple)) or not all(isinstance(r, str) and r for r in runs):
        raise ParameterError(f"runs must be a list of run ids (or [] to rerun the newest {experiment} run), "
                             f"got {runs!r}")
    if len(runs) == 1:
        raise ParameterError(f"runs names one run ({runs[0]}): a comparison needs two or more, or [] to compare "
                             f"the newest {experiment} run with a rerun of it")
    if len(set(runs)) != len(runs):
        raise ParameterError(f"runs lists a run twice: {list(runs)!r}")
    match = choice("match", params["match"], MATCHES)
    if runs:
        _check_runs(list(runs), experiment)
    return CompareParams(experiment, list(runs), match, threshold)


def _check_runs(run_ids: list[str], experiment: str) -> None:
    from ..store import Store

    store = Store.default()
    found = store.query("select run_id, experiment, status from runs where run_id in (select unnest(?))", [run_ids])
    missing = [r for r in run_ids if r not in set(found["run_id"])]
    if missing:
        raise ParameterError(f"no run {', '.join(missing)} in {store.root} (`benchlib runs` lists them; "
                             f"`benchlib import` brings runs from another machine)")
    other = found[found["experiment"] != experiment]
    if not other.empty:
        raise ParameterError("runs of different experiments cannot be compared: " + ", ".join(
            f"{r.run_id} is {r.experiment!r}" for r in other.itertuples()) + f", not {experiment!r}")


def newest_finished_run(experiment: str) -> str:
    from ..store import Store

    store = Store.default()
    found = store.query("select run_id from runs where experiment = ? and status in ('ok', 'partial') "
                        "order by started_at desc limit 1", [experiment])
    if found.empty:
        raise ParameterError(f"no finished {experiment!r} run in {store.root} to compare with a rerun: run its "
                             f"notebook first, or give run ids")
    return str(found["run_id"][0])


def prepare_runs(params: CompareParams, *, notebook: str | None = None) -> list[str]:
    """The run ids to compare: as given, or the newest finished run and a rerun of it with the
    same parameters (the rerun is a new run in the store, like any other)."""
    if not params.rerun:
        return params.runs
    from .. import results
    from ..workloads import by_experiment

    base = newest_finished_run(params.experiment)
    workload = by_experiment(params.experiment)
    stored = results.run_info(base)["parameters"]
    missing = [k for k in workload.PARAMETERS if k not in stored]
    if missing:
        raise ParameterError(f"run {base} was stored by a benchlib without the parameter(s) {', '.join(missing)}: it "
                             f"cannot be rerun as it was; give two run ids to compare instead")
    again = workload.validate_parameters({k: v for k, v in stored.items() if k in workload.PARAMETERS})
    rerun = workload.run(again, notebook=notebook)
    return [base, rerun.run_id]
