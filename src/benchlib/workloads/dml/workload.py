"""Seed 000, "Comparing SQL engines by CPU instructions for simple DML": per engine, create
`demo` (server-generated primary key, float value), then measure an idle baseline (the article's
sleep), an insert of N generated rows in two transactions, `update demo set value = value + 1`,
`select count(value)` and a delete of all rows. The statements are in `dialects`."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ... import cgroups, cpus
from ...errors import ParameterError
from ...progress import Progress
from ...validation import (ALL_AVAILABLE, boolean, choice, engine_selection, engine_settings, fraction,
                           non_negative_number, positive_int, require)
from .dialects import PK_KINDS, dialect_for

if TYPE_CHECKING:  # the measurement stack loads pyarrow: not needed to validate parameters
    from ...lifecycle import start
    from ...measure import Run, RunResult, SettlePolicy


EXPERIMENT = "dml"
BASELINE = "sleep"  # seed 000 calls its idle baseline "sleep"
PHASES = (BASELINE, "insert", "update", "select", "delete")
PARAMETERS = ("engines", "rows", "repetitions", "max_repetitions", "ci_target", "warmup", "pin_cpus", "sleep_seconds",
              "vacuum", "pk_kind", "engine_config", "max_settle_seconds")
# Phases cheaper than this (CPU seconds) have no precision target: cgroup v1 counts user/system
# time in 4 ms ticks and a 20 ms phase's CV is mostly that, whatever the repetition count.
PRECISION_FLOOR_SECONDS = 0.2
WARMUP_SHARE = 10  # a warm-up repetition inserts rows / WARMUP_SHARE: it warms the host, it is not measured


@dataclass(frozen=True)
class DmlParams:
    engines: list[str]
    rows: int
    repetitions: int  # at least this many
    max_repetitions: int  # more while a phase's 95% CI is wider than ci_target, up to this
    ci_target: float  # half width of the 95% CI relative to the mean
    warmup: bool  # one discarded repetition first (rows / 10), stored as warm-up windows
    pin_cpus: bool  # server engines and the harness on separate CPUs (benchlib.cpus)
    sleep_seconds: float
    vacuum: bool
    pk_kind: str
    engine_config: dict[str, dict[str, Any]]  # engine key -> server settings for its starts
    max_settle_seconds: float
    skipped: dict[str, str] = field(default_factory=dict)

    def as_record(self) -> dict[str, Any]:
        return asdict(self)


def supports(engine) -> bool:
    """Every engine with a DML dialect: all of them (SQL and document engines alike)."""
    return dialect_for(engine) is not None


def _within_row_limits(keys: list[str], skipped: dict[str, str], rows: int, *, explicit: bool) -> list[str]:
    """Engines whose statements take `rows` rows; one asked for by name that cannot fails, one
    from "all available" is skipped with the reason."""
    from ...engines import get_engine

    over = {k: dialect_for(get_engine(k)) for k in keys}
    over = {k: d for k, d in over.items() if d.max_rows is not None and rows > d.max_rows}
    if explicit and over:
        key, dialect = next(iter(over.items()))
        raise ParameterError(f"rows={rows} is more than engine {key!r} takes in the dml workload "
                             f"({dialect.max_rows:,}: {dialect.max_rows_reason})")
    skipped.update({k: f"rows={rows} is over its {d.max_rows:,}: {d.max_rows_reason}" for k, d in over.items()})
    return [k for k in keys if k not in over]


def validate_parameters(params: dict[str, Any]) -> DmlParams:
    """Every parameter, checked before any container starts. No defaults here: the notebook's
    parameters cell holds them, once."""
    require(params, PARAMETERS, "dml")
    # Plain values first: they cost nothing to check, engine availability costs a Docker query.
    repetitions = positive_int("repetitions", params["repetitions"])
    max_repetitions = params["max_repetitions"]
    if isinstance(max_repetitions, bool) or not isinstance(max_repetitions, int) or max_repetitions < repetitions:
        raise ParameterError(f"max_repetitions must be an integer >= repetitions ({repetitions}), "
                             f"got {max_repetitions!r}")
    checked = dict(
        rows=positive_int("rows", params["rows"], minimum=2),  # two transactions of rows/2
        repetitions=repetitions, max_repetitions=max_repetitions,
        ci_target=fraction("ci_target", params["ci_target"]),
        warmup=boolean("warmup", params["warmup"]), pin_cpus=boolean("pin_cpus", params["pin_cpus"]),
        sleep_seconds=non_negative_number("sleep_seconds", params["sleep_seconds"]),
        vacuum=boolean("vacuum", params["vacuum"]),
        pk_kind=choice("pk_kind", params["pk_kind"], PK_KINDS),
        max_settle_seconds=non_negative_number("max_settle_seconds", params["max_settle_seconds"]),
    )
    runnable, skipped = engine_selection(params["engines"], supports,
                                         "the dml workload")
    runnable = _within_row_limits(runnable, skipped, checked["rows"], explicit=params["engines"] != ALL_AVAILABLE)
    config = engine_settings("engine_config", params["engine_config"], runnable)
    return DmlParams(engines=runnable, engine_config=config, skipped=skipped, **checked)


def measure_engine(meter: Meter, instance: Instance, params: DmlParams, progress: Progress,
                   rows: int | None = None) -> None:
    """The article's phases on one running engine (`rows`: fewer for a warm-up repetition)."""
    dialect = dialect_for(instance.engine)
    assert dialect is not None
    rows = rows or params.rows
    session = instance.session()
    checks = instance.session()  # checks run on their own session, after the windows
    count = lambda: dialect.scalar(checks.execute(dialect.count_rows))  # noqa: E731
    maintain = dialect.maintain if params.vacuum else None
    readings: list[Any] = [None]  # the open window's readings, for the maintenance share

    def run(*operations: Any) -> None:
        for operation in operations:
            if operation is None:
                continue
            if operation is maintain and readings[0] is not None:
                # Seed 000 counts PostgreSQL's VACUUM inside each DML phase; its own CPU is kept
                # apart as a reading, so reports can show the phase with and without it.
                before = instance.scope.sample()
                session.execute(operation)
                after = instance.scope.sample()
                if before.cpu_ns is not None and after.cpu_ns is not None:
                    readings[0].record("maintenance_cpu_time", (after.cpu_ns - before.cpu_ns) / 1e9, "s",
                                       instance.scope.source, scope="server" if instance.engine.server else "embedded")
                continue
            session.execute(operation)

    run(*dialect.create(params.pk_kind))
    rep = {"engine": instance.key, "repetition": meter.repetition, "repetitions": params.repetitions}
    with progress.step(**rep, phase=BASELINE):
        sleep = dialect.sleep
        meter.baseline(params.sleep_seconds, name=BASELINE,
                       action=(lambda: run(sleep(params.sleep_seconds))) if sleep else None)
    first = rows // 2
    with progress.step(**rep, phase="insert"), meter.phase("insert", check=count, expect=rows) as readings[0]:
        run(dialect.insert(first, params.pk_kind), dialect.insert(rows - first, params.pk_kind), maintain)
    with progress.step(**rep, phase="update"), meter.phase("update", check=count, expect=rows) as readings[0]:
        run(dialect.update_all, maintain)
    counted: list[float] = []
    with progress.step(**rep, phase="select"), \
            meter.phase("select", check=lambda: counted[0], expect=rows):
        counted.append(dialect.scalar(session.execute(dialect.count_values)))
    with progress.step(**rep, phase="delete"), meter.phase("delete", check=count, expect=0) as readings[0]:
        run(dialect.delete_all, maintain)


def run_dml(params: DmlParams, *, notebook: str | None = None, store=None) -> RunResult:
    """Every repetition for every engine (repetition-major, so drift over time spreads evenly
    over engines), each on a fresh engine start: first an optional warm-up repetition, then at
    least `repetitions`, then more while any phase costing >= 0.2 s has a 95% CI wider than
    `ci_target`, up to `max_repetitions`; why it stopped is the run's status note. Rows land in
    the store window by window; an engine that fails is recorded, the others still run, and the
    run ends `partial`."""
    from ...lifecycle import start
    from ...measure import Run, RunResult, SettlePolicy

    settle = SettlePolicy(max_seconds=params.max_settle_seconds)
    per_round = len(params.engines) * len(PHASES)
    progress = Progress((params.max_repetitions + params.warmup) * per_round, notebook=notebook, desc="dml",
                        unit="phases")
    cpu_plan = cpus.plan(params.pin_cpus)

    def one_round(run: Run, repetition: int, warmup: bool) -> None:
        for key in params.engines:
            steps_before = progress.done
            try:
                with start(key, run_id=run.run_id, config=params.engine_config.get(key),
                           cpuset=cpu_plan.engine_cpus) as instance:
                    # The Python driver's own CPU, beside the server's: the client scope.
                    client = cgroups.process_scope() if instance.engine.server else None
                    meter = run.meter(instance, repetition, settle, client=client, warmup=warmup)
                    measure_engine(meter, instance, params, progress,
                                   rows=max(2, params.rows // WARMUP_SHARE) if warmup else None)
            except Exception as exc:  # a start, driver or SQL error: keep the other engines going
                run.record_failure(f"{key} {'warm-up' if warmup else f'repetition {repetition}'}", exc)
                progress.skip(len(PHASES) - (progress.done - steps_before))

    with Run(EXPERIMENT, params.as_record(), notebook=notebook, store=store) as run, progress, \
            cpus.harness_pinned(cpu_plan):
        run.note(f"CPUs: {cpu_plan.note}.")
        if params.warmup:
            one_round(run, 0, warmup=True)
        repetition = 0
        while True:
            repetition += 1
            one_round(run, repetition, warmup=False)
            if repetition < params.repetitions:
                continue
            done, verdict = precision_verdict(run.run_id, params, repetition, store)
            if done or repetition >= params.max_repetitions:
                run.note(verdict)
                break
        progress.skip((params.max_repetitions - repetition) * per_round)
    return RunResult(run.run_id, params, dict(run.failures))


def precision_verdict(run_id: str, params: DmlParams, repetitions: int, store=None) -> tuple[bool, str]:
    """(every targeted phase within ci_target, the sentence saying so or naming the widest)."""
    from ... import results

    p = results.precision(run_id, floor=PRECISION_FLOOR_SECONDS, store=store)
    if p.empty:
        return True, f"Repetitions: {repetitions}; nothing was measured (every engine start failed)."
    target = p[p["targeted"]]
    if target.empty:
        return True, (f"Repetitions: {repetitions}; no phase cost {PRECISION_FLOOR_SECONDS} s of CPU or more, so "
                      f"none had a precision target.")
    wide = target[~(target["rel_ci95"] <= params.ci_target)]  # NaN (one repetition) counts as wide
    widest = target.sort_values("rel_ci95", ascending=False, na_position="first").iloc[0]
    widest_text = (f"{widest['engine']} {widest['phase']} ±{widest['rel_ci95']:.1%}"
                   if widest["rel_ci95"] == widest["rel_ci95"] else f"{widest['engine']} {widest['phase']} (one value)")
    if wide.empty:
        return True, (f"Repetitions: {repetitions}, stopped when every phase costing >= {PRECISION_FLOOR_SECONDS} s "
                      f"of CPU had a 95% CI within ±{params.ci_target:.0%} (widest: {widest_text}).")
    return False, (f"Repetitions: {repetitions}, the bound: {len(wide)} of {len(target)} phases costing >= "
                   f"{PRECISION_FLOOR_SECONDS} s of CPU still had a 95% CI wider than ±{params.ci_target:.0%} "
                   f"(widest: {widest_text}).")
