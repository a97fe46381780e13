"""Seed 000, "Comparing SQL engines by CPU instructions for simple DML": per engine, create
`demo` (server-generated primary key, float value), then measure an idle baseline (the article's
sleep), an insert of N generated rows in two transactions, `update demo set value = value + 1`,
`select count(value)` and a delete of all rows. The statements are in `dialects`; the run loop
(repetitions, warm-up, baseline, failures) is the shared driver's."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...run.driver import EngineStart, PerOperation, StartContext, Step, StepContext, Workload
from ...core.errors import ParameterError
from ...run.parameters import (RunParameters, boolean, one_of, param, per_engine_settings, positive_int,
                               require_idle_baseline)
from .dialects import PK_KINDS, dialect_for

EXPERIMENT = "dml"
BASELINE = "sleep"  # seed 000 calls its idle baseline "sleep"
PHASES = (BASELINE, "insert", "update", "select", "delete")
WARMUP_SHARE = 10  # a warm-up repetition inserts rows / WARMUP_SHARE: it warms the host, it is not measured


def supports(engine) -> bool:
    """Every engine with a DML dialect: all of them (SQL and document engines alike)."""
    return dialect_for(engine) is not None


@dataclass(frozen=True, kw_only=True)
class DmlParams(RunParameters):
    WORKLOAD = "dml"
    rows: int = param(positive_int(minimum=2), "inserted in two transactions of rows / 2")
    vacuum: bool = param(boolean(), "PostgreSQL: VACUUM after each DML phase, as in the article")
    pk_kind: str = param(one_of(PK_KINDS), "uuid (each engine's server-side generator) or sequential")
    engine_config: dict = param(per_engine_settings(), "engine key -> server settings for its starts", late=True)

    supports = staticmethod(supports)

    @classmethod
    def check_plain(cls, checked: dict[str, Any], values: dict[str, Any]) -> None:
        require_idle_baseline(checked, cls.WORKLOAD)

    @classmethod
    def narrow_engines(cls, runnable, skipped, checked, *, explicit: bool) -> list[str]:
        """A dialect's row limit (FerretDB's delete_many binds one parameter per document)."""
        from ...engines import get_engine

        rows = checked["rows"]
        over = {k: dialect_for(get_engine(k)) for k in runnable}
        over = {k: d for k, d in over.items() if d.max_rows is not None and rows > d.max_rows}
        if explicit and over:
            key, dialect = next(iter(over.items()))
            raise ParameterError(f"rows={rows} is more than engine {key!r} takes in the dml workload "
                                 f"({dialect.max_rows:,}: {dialect.max_rows_reason})")
        skipped.update({k: f"rows={rows} is over its {d.max_rows:,}: {d.max_rows_reason}" for k, d in over.items()})
        return [k for k in runnable if k not in over]


class Dml(Workload):
    experiment = EXPERIMENT
    Params = DmlParams
    unit = "phases"
    baseline_name = BASELINE
    per_operation = PerOperation("parameter", "rows", "row")  # every phase touches every row


    def starts(self, params: DmlParams) -> list[EngineStart]:
        return [EngineStart(key, config=params.engine_config.get(key, {})) for key in params.engines]

    def steps(self, params: DmlParams, start: EngineStart, repetition: int) -> list[Step]:
        return [Step(phase) for phase in PHASES[1:]]

    def prepare(self, ctx: StartContext) -> None:
        dialect = dialect_for(ctx.instance.engine)
        session = ctx.instance.session()
        checks = ctx.instance.session()  # checks run on their own session, after the windows
        ctx.state.update(dialect=dialect, session=session,
                         count=lambda: dialect.scalar(checks.execute(dialect.count_rows)))
        for operation in dialect.create(ctx.params.pk_kind):
            session.execute(operation)

    def idle_action(self, ctx: StartContext, seconds: float):
        sleep, session = ctx.state["dialect"].sleep, ctx.state["session"]
        return (lambda: session.execute(sleep(seconds))) if sleep else None

    def measure(self, ctx: StepContext, step: Step) -> None:
        """One of the article's phases (fewer rows in a warm-up repetition)."""
        params, state = ctx.params, ctx.state
        dialect, session, count = state["dialect"], state["session"], state["count"]
        rows = max(2, params.rows // WARMUP_SHARE) if ctx.warmup else params.rows
        maintain = dialect.maintain if params.vacuum else None
        if step.name == "select":
            counted: list[float] = []
            with ctx.phase("select", check=lambda: counted[0], expect=rows):
                counted.append(dialect.scalar(session.execute(dialect.count_values)))
            return
        first = rows // 2
        operations, expect = {
            "insert": ([dialect.insert(first, params.pk_kind), dialect.insert(rows - first, params.pk_kind)], rows),
            "update": ([dialect.update_all], rows),
            "delete": ([dialect.delete_all], 0),
        }[step.name]
        with ctx.phase(step.name, check=count, expect=expect) as readings:
            for operation in operations:
                session.execute(operation)
            if maintain is not None:
                # Seed 000 counts PostgreSQL's VACUUM inside each DML phase; its own CPU is kept
                # apart as a reading, so reports can show the phase with and without it.
                scope = ctx.instance.scope
                before = scope.sample()
                session.execute(maintain)
                after = scope.sample()
                if before.cpu_ns is not None and after.cpu_ns is not None:
                    readings.record("maintenance_cpu_time", (after.cpu_ns - before.cpu_ns) / 1e9, "s", scope.source,
                                    scope=ctx.engine_scope)


WORKLOAD = Dml()
validate_parameters = WORKLOAD.validate_parameters
PARAMETERS = DmlParams.declared()
run = WORKLOAD.run
