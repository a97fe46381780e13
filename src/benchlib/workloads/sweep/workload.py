"""Seed 004's method: sysbench under doubling concurrency, each step measured as one window of
the engine's cgroup and of the sysbench process, so that throughput and latency come with the CPU
each transaction cost the server and the client."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import sysbench
from ...driver import CHILDREN_CLIENT, EngineStart, PerOperation, StartContext, Step, StepContext, Workload
from ...errors import ParameterError
from ...parameters import (RunParameters, int_list, names, number, one_of, param, positive_int, price_map,
                           whole_seconds)

EXPERIMENT = "sweep"
# Test name -> (sysbench test, options). The 90:10 mix is seed 004's oltp_read_write.
TESTS: dict[str, tuple[str, dict[str, Any]]] = {
    "oltp_point_select": ("oltp_point_select", {}),
    "oltp_read_write_90_10": ("oltp_read_write", {"point-selects": 9, "range-selects": "false", "index-updates": 0,
                                                  "non-index-updates": 1, "delete-inserts": 0}),
    "oltp_read_only": ("oltp_read_only", {}),
    "oltp_write_only": ("oltp_write_only", {}),
}


def supports(engine) -> bool:
    """Engines whose wire protocol sysbench has a driver for (pgsql, mysql): not the embedded
    engines, not the document engines (MongoDB, FerretDB), not Oracle or SQL Server."""
    return engine.client.protocol in sysbench.DRIVERS


@dataclass(frozen=True, kw_only=True)
class SweepParams(RunParameters):
    WORKLOAD = "sweep"
    tests: list[str] = param(names(TESTS), "sysbench tests (see sweep.TESTS)")
    threads: list[int] = param(int_list(), "concurrency steps")
    step_seconds: int = param(positive_int(), "seconds per measured step")
    warmup_seconds: int = param(whole_seconds(), "per test, before its first step, not recorded")
    tables: int = param(positive_int(), "sysbench tables")
    table_size: int = param(positive_int(), "rows per table")
    p95_goal_ms: float = param(number(above=True), "seed 004's latency goal for price/performance")
    prices_per_hour: dict = param(price_map(), "engine key -> USD per hour of its host; {} prices nothing")
    rand_type: str = param(one_of(sysbench.RAND_TYPES), "sysbench's access distribution (seed 004: uniform)")
    engine_cpus: float = param(number(), "cores each engine's container may use (a CFS quota, docker --cpus); "
                                         "0: no limit")

    @classmethod
    def runs_engine(cls, engine, checked: dict[str, Any]) -> bool:
        if sysbench.unavailable_reason():
            raise ParameterError(sysbench.unavailable_reason())
        return supports(engine)

    @classmethod
    def check_plain(cls, checked: dict[str, Any], values: dict[str, Any]) -> None:
        if isinstance(values["engines"], list):  # an explicit list: priced or not, known before Docker is asked
            _check_priced(values["engines"], checked["prices_per_hour"])

    @classmethod
    def narrow_engines(cls, runnable, skipped, checked, *, explicit: bool) -> list[str]:
        _check_priced(runnable, checked["prices_per_hour"])
        return runnable


def _check_priced(engines: list[str], prices: dict[str, float]) -> None:
    missing = [k for k in engines if k not in prices]
    if prices and missing:
        raise ParameterError(f"prices_per_hour has no price for {', '.join(map(str, missing))} (price every engine "
                             f"that runs, or none); priced: {', '.join(prices)}")


class Sweep(Workload):
    """Per engine one start: the tables prepared once, an idle baseline, then per repetition every
    test's thread steps (repetition-major within the start, so drift spreads over thread counts).
    A failed step is recorded and the sweep goes on."""

    experiment = EXPERIMENT
    Params = SweepParams
    fresh_start_per_repetition = False
    precision_per = "transactions"  # a saturated engine burns cores x seconds whatever its throughput
    per_operation = PerOperation("reading", "transactions", "transaction")


    def starts(self, params: SweepParams) -> list[EngineStart]:
        return [EngineStart(key, client=CHILDREN_CLIENT, perf_only_for_hardware=True,
                            cpu_limit=params.engine_cpus or None) for key in params.engines]

    def steps(self, params: SweepParams, start: EngineStart, repetition: int) -> list[Step]:
        return [Step(f"{test} x{threads}", {"test": test, "threads": threads,
                                            "warm_up": repetition == 1 and index == 0 and params.warmup_seconds > 0},
                     survives=(sysbench.SysbenchError,))
                for test in params.tests for index, threads in enumerate(params.threads)]

    def prepare(self, ctx: StartContext) -> None:
        sysbench.prepare(ctx.instance, tables=ctx.params.tables, table_size=ctx.params.table_size)

    def measure(self, ctx: StepContext, step: Step) -> None:
        params, test, threads = ctx.params, step.data["test"], step.data["threads"]
        name, options = TESTS[test]
        common = dict(tables=params.tables, table_size=params.table_size, rand_type=params.rand_type, options=options)
        if step.data["warm_up"]:
            # Caches and buffer pools filled at the middle concurrency; recorded nowhere on purpose.
            sysbench.run(ctx.instance, name, threads=params.threads[len(params.threads) // 2],
                         seconds=params.warmup_seconds, **common)
        with ctx.phase(test, labels={"test": test, "threads": threads}) as readings:
            result, _ = sysbench.run(ctx.instance, name, threads=threads, seconds=params.step_seconds, **common)
            sysbench.record(readings, result)


WORKLOAD = Sweep()
validate_parameters = WORKLOAD.validate_parameters
PARAMETERS = SweepParams.declared()
run = WORKLOAD.run
