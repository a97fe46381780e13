"""Seed 000, "Comparing SQL engines by CPU instructions for simple DML": per engine, create
`demo` (server-generated primary key, float value), then measure an idle baseline (the article's
sleep), an insert of N generated rows in two transactions, `update demo set value = value + 1`,
`select count(value)` and a delete of all rows. The statements are in `dialects`."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ... import cgroups
from ...progress import Progress
from ...validation import boolean, choice, engine_selection, non_negative_number, positive_int, require
from .dialects import PK_KINDS, dialect_for

if TYPE_CHECKING:  # the measurement stack loads pyarrow: not needed to validate parameters
    from ...lifecycle import start
    from ...measure import Run, RunResult, SettlePolicy


EXPERIMENT = "dml"
BASELINE = "sleep"  # seed 000 calls its idle baseline "sleep"
PHASES = (BASELINE, "insert", "update", "select", "delete")
PARAMETERS = ("engines", "rows", "repetitions", "sleep_seconds", "vacuum", "pk_kind", "max_settle_seconds")


@dataclass(frozen=True)
class DmlParams:
    engines: list[str]
    rows: int
    repetitions: int
    sleep_seconds: float
    vacuum: bool
    pk_kind: str
    max_settle_seconds: float
    skipped: dict[str, str] = field(default_factory=dict)

    def as_record(self) -> dict[str, Any]:
        return asdict(self)


def supports(engine) -> bool:
    """Every engine with a DML dialect: all of them (SQL and document engines alike)."""
    return dialect_for(engine) is not None


def validate_parameters(params: dict[str, Any]) -> DmlParams:
    """Every parameter, checked before any container starts. No defaults here: the notebook's
    parameters cell holds them, once."""
    require(params, PARAMETERS, "dml")
    runnable, skipped = engine_selection(params["engines"], supports,
                                         "the dml workload")
    return DmlParams(
        engines=runnable,
        rows=positive_int("rows", params["rows"], minimum=2),  # two transactions of rows/2
        repetitions=positive_int("repetitions", params["repetitions"]),
        sleep_seconds=non_negative_number("sleep_seconds", params["sleep_seconds"]),
        vacuum=boolean("vacuum", params["vacuum"]),
        pk_kind=choice("pk_kind", params["pk_kind"], PK_KINDS),
        max_settle_seconds=non_negative_number("max_settle_seconds", params["max_settle_seconds"]),
        skipped=skipped,
    )


def measure_engine(meter: Meter, instance: Instance, params: DmlParams, progress: Progress) -> None:
    """The article's phases on one running engine."""
    dialect = dialect_for(instance.engine)
    assert dialect is not None
    session = instance.session()
    checks = instance.session()  # checks run on their own session, after the windows
    count = lambda: dialect.scalar(checks.execute(dialect.count_rows))  # noqa: E731
    maintain = dialect.maintain if params.vacuum else None

    def run(*operations: Any) -> None:
        for operation in operations:
            if operation is not None:
                session.execute(operation)

    run(*dialect.create(params.pk_kind))
    rep = {"engine": instance.key, "repetition": meter.repetition, "repetitions": params.repetitions}
    with progress.step(**rep, phase=BASELINE):
        sleep = dialect.sleep
        meter.baseline(params.sleep_seconds, name=BASELINE,
                       action=(lambda: run(sleep(params.sleep_seconds))) if sleep else None)
    first = params.rows // 2
    with progress.step(**rep, phase="insert"), meter.phase("insert", check=count, expect=params.rows):
        run(dialect.insert(first, params.pk_kind), dialect.insert(params.rows - first, params.pk_kind), maintain)
    with progress.step(**rep, phase="update"), meter.phase("update", check=count, expect=params.rows):
        run(dialect.update_all, maintain)
    counted: list[float] = []
    with progress.step(**rep, phase="select"), \
            meter.phase("select", check=lambda: counted[0], expect=params.rows):
        counted.append(dialect.scalar(session.execute(dialect.count_values)))
    with progress.step(**rep, phase="delete"), meter.phase("delete", check=count, expect=0):
        run(dialect.delete_all, maintain)


def run_dml(params: DmlParams, *, notebook: str | None = None, store=None) -> RunResult:
    """Every repetition for every engine (repetition-major, so drift over time spreads evenly
    over engines), each on a fresh engine start. Rows land in the store window by window; an
    engine that fails is recorded, the others still run, and the run ends `partial`."""
    from ...lifecycle import start
    from ...measure import Run, RunResult, SettlePolicy

    settle = SettlePolicy(max_seconds=params.max_settle_seconds)
    progress = Progress(params.repetitions * len(params.engines) * len(PHASES), notebook=notebook, desc="dml",
                        unit="phases")
    with Run(EXPERIMENT, params.as_record(), notebook=notebook, store=store) as run, progress:
        for repetition in range(1, params.repetitions + 1):
            for key in params.engines:
                steps_before = progress.done
                try:
                    with start(key, run_id=run.run_id) as instance:
                        # The Python driver's own CPU, beside the server's: the client scope.
                        client = cgroups.process_scope() if instance.engine.server else None
                        meter = run.meter(instance, repetition, settle, client=client)
                        measure_engine(meter, instance, params, progress)
                except Exception as exc:  # a start, driver or SQL error: keep the other engines going
                    run.record_failure(f"{key} repetition {repetition}", exc)
                    progress.skip(len(PHASES) - (progress.done - steps_before))
    return RunResult(run.run_id, params, dict(run.failures))
