"""Seed 004's method: sysbench under doubling concurrency, each step measured as one window of
the engine's cgroup and of the sysbench process, so that throughput and latency come with the CPU
each transaction cost the server and the client."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ... import cgroups, sysbench
from ...errors import ParameterError
from ...progress import Progress
from ...validation import choice, engine_selection, non_negative_number, positive_int, require

if TYPE_CHECKING:  # the measurement stack loads pyarrow: not needed to validate parameters
    from ...lifecycle import start
    from ...measure import Run, RunResult, SettlePolicy

EXPERIMENT = "sweep"
# Test name -> (sysbench test, options). The 90:10 mix is seed 004's oltp_read_write.
TESTS: dict[str, tuple[str, dict[str, Any]]] = {
    "oltp_point_select": ("oltp_point_select", {}),
    "oltp_read_write_90_10": ("oltp_read_write", {"point-selects": 9, "range-selects": "false", "index-updates": 0,
                                                  "non-index-updates": 1, "delete-inserts": 0,
                                                  "rand-type": "uniform"}),
    "oltp_read_only": ("oltp_read_only", {}),
    "oltp_write_only": ("oltp_write_only", {}),
}
PARAMETERS = ("engines", "tests", "threads", "step_seconds", "warmup_seconds", "tables", "table_size",
              "repetitions", "p95_goal_ms", "prices_per_hour", "max_settle_seconds")


@dataclass(frozen=True)
class SweepParams:
    engines: list[str]
    tests: list[str]
    threads: list[int]
    step_seconds: int
    warmup_seconds: int
    tables: int
    table_size: int
    repetitions: int
    p95_goal_ms: float
    prices_per_hour: dict[str, float]
    max_settle_seconds: float
    skipped: dict[str, str] = field(default_factory=dict)

    def as_record(self) -> dict[str, Any]:
        return asdict(self)


def _positive_number(name: str, value: Any) -> float:
    number = non_negative_number(name, value)
    if number <= 0:
        raise ParameterError(f"{name} must be a number > 0, got {value!r}")
    return number


def supports(engine) -> bool:
    """Engines whose wire protocol sysbench has a driver for (pgsql, mysql): not the embedded
    engines, not the document engines (MongoDB, FerretDB), not Oracle or SQL Server."""
    return engine.client.protocol in sysbench.DRIVERS


def validate_parameters(params: dict[str, Any]) -> SweepParams:
    """Plain values first (no Docker needed to reject them), then the engines, then that every
    engine that will run has a price when any is priced."""
    require(params, PARAMETERS, "sweep")
    tests = params["tests"]
    if not isinstance(tests, list) or not tests:
        raise ParameterError(f"tests must be a non-empty list of {', '.join(TESTS)}; got {tests!r}")
    tests = [choice("tests", t, TESTS) for t in tests]
    threads = params["threads"]
    if not isinstance(threads, list) or not threads:
        raise ParameterError(f"threads must be a non-empty list of integers >= 1, got {threads!r}")
    threads = sorted({positive_int("threads", t) for t in threads})
    prices = params["prices_per_hour"] or {}
    if not isinstance(prices, dict):
        raise ParameterError(f"prices_per_hour must map engine keys to USD per hour, got {prices!r}")
    checked_prices = {k: _positive_number(f"prices_per_hour[{k}]", v) for k, v in prices.items()}
    values = dict(
        step_seconds=positive_int("step_seconds", params["step_seconds"]),
        warmup_seconds=int(non_negative_number("warmup_seconds", params["warmup_seconds"])),
        tables=positive_int("tables", params["tables"]), table_size=positive_int("table_size", params["table_size"]),
        repetitions=positive_int("repetitions", params["repetitions"]),
        p95_goal_ms=_positive_number("p95_goal_ms", params["p95_goal_ms"]),
        max_settle_seconds=non_negative_number("max_settle_seconds", params["max_settle_seconds"]),
    )
    explicit = params["engines"] if isinstance(params["engines"], list) else []
    _check_priced(explicit, checked_prices)
    if sysbench.available():
        raise ParameterError(sysbench.available())
    runnable, skipped = engine_selection(params["engines"], supports,
                                         "the sweep workload (sysbench has pgsql and mysql drivers)")
    _check_priced(runnable, checked_prices)
    return SweepParams(engines=runnable, tests=tests, threads=threads, prices_per_hour=checked_prices,
                       skipped=skipped, **values)


def _check_priced(engines: list[str], prices: dict[str, float]) -> None:
    missing = [k for k in engines if k not in prices]
    if prices and missing:
        raise ParameterError(f"prices_per_hour has no price for {', '.join(missing)} (price every engine that runs, "
                             f"or none); priced: {', '.join(prices)}")


def run_sweep(params: SweepParams, *, notebook: str | None = None, store=None) -> RunResult:
    """Per engine: one start, the tables prepared, an idle baseline; then per test a warm-up and
    the thread steps, repetition-major within the test so drift spreads over thread counts.
    A failed step is recorded and the sweep goes on."""
    from ...lifecycle import start
    from ...measure import Run, RunResult, SettlePolicy
    steps = len(params.tests) * len(params.threads) * params.repetitions
    progress = Progress(len(params.engines) * steps, notebook=notebook, desc="sweep", unit="steps")
    settle = SettlePolicy(max_seconds=params.max_settle_seconds)
    with Run(EXPERIMENT, params.as_record(), notebook=notebook, store=store) as run, progress:
        for key in params.engines:
            done_before = progress.done
            try:
                with start(key, run_id=run.run_id) as instance:
                    sysbench.prepare(instance, tables=params.tables, table_size=params.table_size)
                    meter = run.meter(instance, 1, settle, client=cgroups.children_scope(),
                                      perf_only_for_hardware=True)
                    meter.baseline(2.0)
                    for test in params.tests:
                        _sweep_test(run, meter, instance, params, test, progress)
            except Exception as exc:
                run.record_failure(key, exc)
                progress.skip(steps - (progress.done - done_before))
    return RunResult(run.run_id, params, dict(run.failures))


def _sweep_test(run, meter, instance, params: SweepParams, test: str, progress: Progress) -> None:
    name, options = TESTS[test]
    common = dict(tables=params.tables, table_size=params.table_size, options=options)
    if params.warmup_seconds:
        # Caches and buffer pools filled at the middle concurrency; recorded nowhere on purpose.
        sysbench.run(instance, name, threads=params.threads[len(params.threads) // 2],
                     seconds=params.warmup_seconds, **common)
    for repetition in range(1, params.repetitions + 1):
        meter.repetition = repetition
        for threads in params.threads:
            labels = {"test": test, "threads": threads}
            with progress.step(engine=instance.key, repetition=repetition, repetitions=params.repetitions,
                               phase=f"{test} x{threads}"):
                try:
                    with meter.phase(test, labels=labels, settle=params.max_settle_seconds > 0) as readings:
                        result, _ = sysbench.run(instance, name, threads=threads, seconds=params.step_seconds,
                                                 **common)
                        sysbench.record(readings, result)
                except sysbench.SysbenchError as exc:
                    run.record_failure(f"{instance.key} {test} threads={threads} repetition {repetition}", exc)

