"""Seed 000, "Comparing SQL engines by CPU instructions for simple DML": per engine, create
`demo` (server-generated primary key, float value), then measure a sleep baseline, an insert of
N generated rows in two transactions, `update demo set value = value + 1`,
`select count(value)` and a delete of all rows. Each engine's SQL is in its engine module."""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from ..engines import PK_KINDS, get_engine
from ..errors import BenchlibError
from ..lifecycle import Instance, start
from ..measure import Meter, Run, SettlePolicy
from ..validation import boolean, choice, engine_selection, non_negative_number, positive_int

EXPERIMENT = "dml"
PHASES = ("sleep", "insert", "update", "select", "delete")


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

    @classmethod
    def validate(cls, *, engines: Any, rows: Any, repetitions: Any = 1, sleep_seconds: Any = 10,
                 vacuum: Any = True, pk_kind: Any = "uuid", max_settle_seconds: Any = 60) -> "DmlParams":
        rows = positive_int("rows", rows, minimum=2)  # two transactions of rows/2
        repetitions = positive_int("repetitions", repetitions)
        sleep_seconds = non_negative_number("sleep_seconds", sleep_seconds)
        vacuum = boolean("vacuum", vacuum)
        pk_kind = choice("pk_kind", pk_kind, PK_KINDS)
        max_settle_seconds = non_negative_number("max_settle_seconds", max_settle_seconds)
        runnable, skipped = engine_selection(engines)
        return cls(runnable, rows, repetitions, sleep_seconds, vacuum, pk_kind, max_settle_seconds, skipped)

    def as_record(self) -> dict[str, Any]:
        return asdict(self)


class DmlRunError(BenchlibError):
    pass


@dataclass
class DmlResult:
    run_id: str
    params: DmlParams
    errors: dict[str, str]


def _rows(instance: Instance, conn) -> float:
    return float(instance.query("select count(*) from demo", conn)[0][0])


def measure_engine(meter: Meter, instance: Instance, params: DmlParams, tick: Callable[[str], None]) -> None:
    """The article's phases on one running engine."""
    dml = instance.engine.dml
    conn = instance.connect()
    check_conn = instance.connect()  # checks run on their own session, after the windows
    count = lambda: _rows(instance, check_conn)  # noqa: E731

    def run(*statements: str | None) -> None:
        for sql in statements:
            if sql:
                instance.query(sql, conn)

    vacuum = dml.vacuum if params.vacuum else None
    for sql in dml.create_statements(params.pk_kind):
        instance.query(sql, conn)

    tick("sleep")
    sleep_action = (lambda: run(dml.sleep(params.sleep_seconds))) if dml.sleep else None
    meter.baseline(params.sleep_seconds, action=sleep_action)

    first = params.rows // 2
    tick("insert")
    with meter.phase("insert", check=count):
        run(dml.generate_rows(first), dml.generate_rows(params.rows - first), vacuum)
    tick("update")
    with meter.phase("update", check=count):
        run("update demo set value = value + 1", vacuum)
    tick("select")
    counted: list[float] = []
    with meter.phase("select", check=lambda: counted[0]):
        counted.append(float(instance.query("select count(value) from demo", conn)[0][0]))
    tick("delete")
    with meter.phase("delete", check=count):
        run(dml.delete_all, vacuum)


def run_dml(params: DmlParams, *, notebook: str | None = None, progress: bool = True, store=None) -> DmlResult:
    """Run every repetition for every engine (repetition-major, so drift over time spreads
    evenly over engines), each on a fresh engine start. Rows land in the store window by
    window; an engine that fails is recorded and the others still run."""
    from tqdm.auto import tqdm

    settle = SettlePolicy(max_seconds=params.max_settle_seconds)
    errors: dict[str, str] = {}
    total = params.repetitions * len(params.engines) * len(PHASES)
    with Run(EXPERIMENT, params.as_record(), notebook=notebook, store=store) as run:
        bar = tqdm(total=total, disable=not progress, desc="dml", unit="phase")
        try:
            for repetition in range(1, params.repetitions + 1):
                for key in params.engines:
                    def tick(phase: str, key=key, repetition=repetition) -> None:
                        bar.set_postfix_str(f"{key} rep {repetition} {phase}")
                        bar.update(1)
                    try:
                        with start(key, run_id=run.run_id) as instance:
                            meter = run.meter(instance, repetition, settle)
                            measure_engine(meter, instance, params, tick)
                    except BenchlibError as exc:
                        errors[f"{key} repetition {repetition}"] = str(exc)
                    except Exception as exc:  # a driver or SQL error: keep the other engines going
                        errors[f"{key} repetition {repetition}"] = f"{type(exc).__name__}: {exc}"
        finally:
            bar.close()
        if errors:  # Run.__exit__ marks the run failed with this message
            raise DmlRunError(f"run {run.run_id} failed for {len(errors)} engine start(s) (measured "
                              f"phases are kept): " + "; ".join(f"{k}: {v}" for k, v in errors.items()))
    return DmlResult(run.run_id, params, errors)
