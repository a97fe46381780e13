"""Seed 003's way of reading results, across runs: two or more runs of one experiment (other
versions, hosts or settings, or runs imported with `benchlib import`) as ratios to the first run,
per engine, variant and phase, each change judged by the one verdict rule (findings.judge).

With no run ids, the newest finished run of the experiment is compared with a fresh rerun of it
on the same parameters: what a reader needs to trust any single run's differences."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.errors import ParameterError
from ..run.parameters import Parameters, boolean, fraction, one_of, param

MATCHES = ("engine", "product")
ALL_ENGINES = "all"


def _experiment(name: str, value: Any, checked: dict) -> str:
    from ..workloads import all_workloads  # workload packages import their own validators only: light

    return one_of(sorted(all_workloads()))(name, value, checked)


def _run_ids(name: str, value: Any, checked: dict) -> list[str]:
    experiment = checked["experiment"]
    if not isinstance(value, (list, tuple)) or not all(isinstance(r, str) and r for r in value):
        raise ParameterError(f"{name} must be a list of run ids (or [] to rerun the newest {experiment} run), "
                             f"got {value!r}")
    if len(value) == 1:
        raise ParameterError(f"{name} names one run ({value[0]}): a comparison needs two or more, or [] to compare "
                             f"the newest {experiment} run with a rerun of it")
    if len(set(value)) != len(value):
        raise ParameterError(f"{name} must list each run once, got {list(value)!r}")
    if value:
        _check_runs(list(value), experiment)
    return list(value)


def _rerun_engines(name: str, value: Any, checked: dict) -> list[str] | str:
    if value != ALL_ENGINES and (not isinstance(value, list) or not value or not all(isinstance(k, str) for k in value)):
        raise ParameterError(f"{name} must be a non-empty list of engine keys or {ALL_ENGINES!r}, got {value!r}")
    return value


@dataclass(frozen=True, kw_only=True)
class CompareParams(Parameters):
    WORKLOAD = "compare"
    experiment: str = param(_experiment, "the experiment whose runs are compared")
    runs: list[str] = param(_run_ids, "run ids, base first; []: the newest finished run against a rerun of it")
    match: str = param(one_of(MATCHES), "engine, or product (postgres@15 paired with postgres@17)")
    threshold: float = param(fraction(), "seed 003's 5%: smaller changes are never highlighted")
    # The rerun's engines ("all": the base run's): run-to-run noise shows on two engines as well as
    # on six, at a third of the time.
    rerun_engines: list[str] | str = param(_rerun_engines, 'with runs = []: the rerun\'s engines, or "all"')
    # A rerun is only needed when no earlier run differs from the newest one by time alone (same
    # parameters, host, clean code and server builds): a second `make report` on one checkout has one.
    reuse_matching_run: bool = param(boolean(), "with runs = []: compare with an earlier stored run that differs "
                                     "only in time, when one exists, instead of a new rerun")

    @property
    def rerun(self) -> bool:
        return not self.runs


validate_parameters = CompareParams.validate
PARAMETERS = CompareParams.declared()


def _check_runs(run_ids: list[str], experiment: str) -> None:
    from ..data.store import Store

    store = Store.default()
    found = store.query("select run_id, experiment, status from runs where run_id in (select unnest(?))", [run_ids])
    missing = [r for r in run_ids if r not in set(found["run_id"])]
    if missing:
        raise ParameterError(f"no run {', '.join(missing)} in {store.where} (`benchlib runs` lists them; "
                             f"`benchlib import` brings runs from another machine)")
    other = found[found["experiment"] != experiment]
    if not other.empty:
        raise ParameterError("runs of different experiments cannot be compared: " + ", ".join(
            f"{r.run_id} is {r.experiment!r}" for r in other.itertuples()) + f", not {experiment!r}")


def newest_finished_run(experiment: str) -> str:
    from ..data.store import Store

    store = Store.default()
    found = store.query("select run_id from runs where experiment = ? and status in ('ok', 'partial') "
                        "order by started_at desc limit 1", [experiment])
    if found.empty:
        raise ParameterError(f"no finished {experiment!r} run in {store.where} to compare with a rerun: run its "
                             f"notebook first, or give run ids")
    return str(found["run_id"][0])


def identity(info: dict) -> tuple:
    """What must match for two runs to differ by time alone: parameters (but the engines), host and
    code."""
    params = {k: v for k, v in info["parameters"].items() if k not in ("skipped", "engines")}
    return params, info["hostname"], info["git_sha"], bool(info["git_dirty"])


def builds(instances) -> set:
    return set(zip(instances["engine"], instances["server_version"], instances["image_id"].astype(str)))


def differ_by_time_only(base_info: dict, base_instances, info: dict, instances) -> bool:
    """`info`'s run is `base_info`'s again (some of its engines, each on the same build), later."""
    engines = set(info["parameters"].get("engines") or [])
    return (identity(base_info) == identity(info) and engines <= set(base_info["parameters"].get("engines") or [])
            and builds(instances) <= builds(base_instances))


def earlier_matching_run(run_id: str, experiment: str) -> str | None:
    """The newest finished run before `run_id` that it repeats with nothing but time changed."""
    from ..data import results
    from ..data.store import Store

    info, instances = results.run_info(run_id), results.instances(run_id)
    if info["git_dirty"]:  # uncommitted code: two runs of it cannot be known to have run the same code
        return None
    earlier = Store.default().query(
        "select run_id from runs where experiment = ? and status = 'ok' and started_at < ? and run_id <> ? "
        "and hostname = ? and git_sha = ? order by started_at desc",
        [experiment, info["started_at"], run_id, info["hostname"], info["git_sha"]])
    for candidate in earlier["run_id"]:
        if differ_by_time_only(results.run_info(candidate), results.instances(candidate), info, instances):
            return str(candidate)
    return None


def prepare_runs(params: CompareParams, *, notebook: str | None = None) -> list[str]:
    """The run ids to compare: as given, or the newest finished run beside an earlier one that it
    repeats (`reuse_matching_run`, when one is stored) or else a rerun of it with the same
    parameters (the rerun is a new run in the store, like any other)."""
    if not params.rerun:
        return params.runs
    from ..data import results
    from ..workloads import by_experiment

    base = newest_finished_run(params.experiment)
    if params.reuse_matching_run:
        earlier = earlier_matching_run(base, params.experiment)
        if earlier is not None:
            return [earlier, base]
    workload = by_experiment(params.experiment)
    stored = results.run_info(base)["parameters"]
    missing = [k for k in workload.PARAMETERS if k not in stored]
    if missing:
        raise ParameterError(f"run {base} was stored by a benchlib without the parameter(s) {', '.join(missing)}: it "
                             f"cannot be rerun as it was; give two run ids to compare instead")
    values = {k: v for k, v in stored.items() if k in workload.PARAMETERS}
    if params.rerun_engines != ALL_ENGINES:
        kept = [k for k in stored["engines"] if k in params.rerun_engines]
        if not kept:
            raise ParameterError(f"rerun_engines {params.rerun_engines} names none of run {base}'s engines "
                                 f"({', '.join(stored['engines'])})")
        values["engines"] = kept
        if "engine_config" in values:  # settings only for engines that run
            values["engine_config"] = {k: v for k, v in values["engine_config"].items() if k in kept}
    again = workload.validate_parameters(values)
    rerun = workload.run(again, notebook=notebook)
    return [base, rerun.run_id]
