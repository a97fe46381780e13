"""One driver for every workload: a new question is a small package of hooks.

A workload declares its parameters (a `RunParameters` dataclass, benchlib.run.parameters) and hooks:

    class Dml(Workload):
        experiment = "dml"
        Params = DmlParams
        def starts(self, params): ...          # the engine starts of one round
        def steps(self, params, start, repetition): ...   # the measured steps on one start
        def prepare(self, ctx): ...             # tables, data: after the start, before the baseline
        def measure(self, ctx, step): ...       # one step: ctx.phase(...) windows

and the driver owns the rest, once: the run row, CPU pinning, the warm-up repetition, a wait for
quiet and an idle baseline per engine start, repetitions until every phase that costs enough has
a 95% CI within `ci_target` (or `max_repetitions`, said in the run's status note), progress whose
total is the plan's length, and failures stored with their traceback while the other engines and
steps go on.

Two shapes of repetition:
- `fresh_start_per_repetition` (DML, write cost): every repetition starts every engine afresh,
  repetition-major, so drift over time spreads evenly over engines, and the start's own state is
  part of what repeats;
- otherwise (sysbench sweeps and batteries, client layers) one start per engine holds every
  repetition of its steps: its prepared data is reused, and repetitions stop per start. With
  `repeat_each_step` its base repetitions run step-major (each step's back to back), so a step
  that changes the data never comes between two repetitions of an earlier step.

Data prepared on one start can serve a later one (another regime of the same engine): the first
start puts its data directory on a volume (`EngineStart.data_volume`) and a step snapshots it
(`StepContext.snapshot_data(name)`); the later start (`EngineStart.restore=name`) begins from that
snapshot instead of preparing again. A snapshot no start took is removed when the run ends.

Steps may form a series (`Step.series`: one test's thread counts, in order): a `measure` that
returns END_SERIES ends that series for the repetition (a sweep past its latency goal), and the
driver counts the skipped steps as done; the plan's length is still its bound."""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator, Mapping

from ..host import cgroups, cpus
from .progress import Progress

if TYPE_CHECKING:  # the measurement stack loads pyarrow: not needed to validate parameters
    from ..containers.lifecycle import DataSnapshot, Instance
    from .measure import Meter, Readings, Run, RunResult
    from .parameters import RunParameters

# Phases cheaper than this (CPU seconds per window) have no precision target: cgroup v1 counts
# user/system time in 4 ms ticks and a 20 ms phase's CV is mostly that, whatever the repetition count.
PRECISION_FLOOR_SECONDS = 0.2
DRIVER_CLIENT, CHILDREN_CLIENT = "driver", "children"


@dataclass(frozen=True, eq=False)  # one plan entry is one start: compared and hashed by identity
class EngineStart:
    """One engine start in a plan: the engine, how to start it, and the labels every one of its
    windows carries (a regime, say)."""

    engine: str
    config: Mapping[str, Any] = field(default_factory=dict)
    memory_limit_mb: int | None = None
    cpu_limit: float | None = None  # cores (a CFS quota): a smaller instance of the same engine
    unix_socket: bool = False
    labels: Mapping[str, Any] = field(default_factory=dict)
    # Whose CPU is measured beside the engine's: "driver" (this process: a Python driver, for
    # servers only), "children" (a benchmark client run as a child process), or None.
    client: str | None = DRIVER_CLIENT
    perf_only_for_hardware: bool = False  # throughput loads: perf's -a -G taxes every context switch
    # The server's data directory on a volume of its own, so that a step can snapshot it for a
    # later start; `restore`: the name of such a snapshot this start begins from.
    data_volume: bool = False
    restore: str | None = None
    nodes: int | None = None  # a cluster's node count (None: its declared count)

    @property
    def name(self) -> str:
        return " ".join([self.engine, *(str(v) for v in self.labels.values())])


@dataclass(frozen=True)
class Step:
    """One measured step of a start. `data`: whatever the workload's `measure` needs. A failed
    step that `ends_start` skips the rest of the start (the engine's state is unknown); an
    independent one (a sysbench test) is recorded and the next step runs."""

    name: str
    data: Any = None
    ends_start: bool = True
    # Failures of these kinds leave the engine as it was (a benchmark client that exited): the
    # start goes on even when the step otherwise `ends_start`.
    survives: tuple[type[BaseException], ...] = ()
    # Steps of one series (a test's thread counts, in order): when `measure` returns END_SERIES,
    # the series' later steps of this repetition are not run (a sweep past its latency goal).
    series: str | None = None


END_SERIES = "end series"  # what `measure` returns to stop the rest of its step's series


@dataclass(frozen=True)
class StartContext:
    """What `prepare` gets: the running engine, its meter and the run's parameters."""

    run: "Run"
    instance: "Instance"
    meter: "Meter"
    params: Any
    start: EngineStart
    state: dict[str, Any] = field(default_factory=dict)  # the workload's own, per start (sessions, tables)
    snapshots: dict[str, "DataSnapshot"] = field(default_factory=dict)  # the run's, by name, until restored
    restored: "DataSnapshot | None" = None  # what this start began from (EngineStart.restore)
    shared: Any = None  # the workload's own, per run (`Workload.shared`)

    @property
    def engine_scope(self) -> str:
        return self.meter.engine_scope

    @property
    def driver_client(self) -> cgroups.Scope | None:
        """This process, as the client scope of a server engine (None when embedded: the
        engine's own scope already is this process)."""
        return cgroups.process_scope() if self.instance.engine.server else None

    def snapshot_data(self, name: str, **facts: Any) -> "DataSnapshot":
        """Snapshot this start's data directory (started with `data_volume`) for the later start
        whose `restore` is `name`; `facts` travel with it (what the restoring start checks)."""
        snapshot = self.instance.snapshot_data()
        snapshot.facts.update(facts)
        self.snapshots[name] = snapshot
        return snapshot


@dataclass(frozen=True)
class StepContext(StartContext):
    """What `measure` gets: immutable, one per step (repetition, warm-up) instead of a meter the
    workload would mutate."""

    repetition: int = 1
    warmup: bool = False

    @contextlib.contextmanager
    def phase(self, name: str, *, labels: Mapping[str, Any] | None = None, check=None, expect: float | None = None,
              check_name: str = "rows", settle: bool = True, client: cgroups.Scope | None | str = "meter",
              warmup: bool = False) -> Iterator["Readings"]:
        """A measured window of this step (and its settle window unless `settle=False`); `warmup`:
        stored as a warm-up window (measured, outside every cost) even in a measured repetition."""
        with self.meter.phase(name, check=check, check_name=check_name, expect=expect, labels=dict(labels or {}),
                              settle=settle and self.params.max_settle_seconds > 0, repetition=self.repetition,
                              client=client, warmup=self.warmup or warmup) as readings:
            yield readings


@dataclass(frozen=True)
class PerOperation:
    """What one operation of a phase window is, so costs compare per operation across runs whose
    windows hold different amounts of work: a reading of the window ("transactions"), a run
    parameter ("rows") or a window label ("objects")."""

    source: str  # "reading" | "parameter" | "label"
    name: str
    noun: str  # singular, for units: "CPU s per row"


class Workload:
    """Hooks a workload overrides; `run` is the driver's and is not overridden."""

    experiment: str
    Params: type
    desc: str = ""
    unit: str = "steps"
    fresh_start_per_repetition = True
    # With one start holding every repetition: run each step's repetitions back to back (step-major)
    # instead of the whole list once per repetition, so that every repetition of a step meets the
    # state the earlier steps left (a read test before the writes sees the loaded table each time).
    repeat_each_step = False
    baseline_name = "idle"
    # When the idle windows are taken and which rate is subtracted (results.idle_rates): the run's note says it.
    idle_windows = "once per engine start"
    idle_subtracted = "The baseline's CPU rate"
    precision_per: str | None = None  # a reading dividing a window's cost (sysbench: "transactions")
    precision_floor = PRECISION_FLOOR_SECONDS
    per_operation: PerOperation | None = None  # the denominator of cross-run (06) comparisons

    # -- hooks ---------------------------------------------------------------------------------------
    def starts(self, params) -> list[EngineStart]:
        return [EngineStart(key) for key in params.engines]

    def steps(self, params, start: EngineStart, repetition: int) -> list[Step]:
        raise NotImplementedError

    def prepare(self, ctx: StartContext) -> None:
        """After the start, before the wait for quiet and the idle baseline."""

    def shared(self, params, run: "Run") -> contextlib.AbstractContextManager:
        """What every start of one run shares (a generated data file), made before the first start
        and removed after the last: the context's value is `StartContext.shared`."""
        return contextlib.nullcontext()

    def idle_action(self, ctx: StartContext, seconds: float):
        """What the engine does during its idle baseline (None: the client sleeps)."""
        return None

    def measure(self, ctx: StepContext, step: Step) -> str | None:
        """One step; END_SERIES ends the rest of the step's series in this repetition."""
        raise NotImplementedError

    # -- the driver ---------------------------------------------------------------------------------
    def validate_parameters(self, values: dict[str, Any]):
        return self.Params.validate(values)

    def run(self, params: "RunParameters", *, notebook: str | None = None, store=None) -> "RunResult":
        """Run every start of the plan, measured; rows land in the store window by window. An
        engine or step that fails is recorded with its traceback, the others still run, and the
        run ends `partial`."""
        from .measure import Run, RunResult

        plan = _Plan(self, params)
        progress = Progress(plan.total, notebook=notebook, desc=self.desc or self.experiment, unit=self.unit)
        cpu_plan = cpus.plan(params.pin_cpus)
        with Run(self.experiment, params.as_record(), notebook=notebook, store=store) as run, progress, \
                cpus.harness_pinned(cpu_plan), self.shared(params, run) as shared:
            driver = _Driver(self, params, run, progress, cpu_plan, plan, shared)
            run.note(f"CPUs: {cpu_plan.note}.")
            run.note(idle_rule(params, driver.settle, self))
            try:
                driver.run_all()
            finally:
                for snapshot in driver.snapshots.values():
                    snapshot.discard()  # none left when every start that was to restore one ran
        return RunResult(run.run_id, params, dict(run.failures))


class _Plan:
    """Starts and steps of the whole run at its bound; the progress total is its length."""

    def __init__(self, workload: Workload, params):
        self.starts = workload.starts(params)
        self.warmups = 1 if params.warmup else 0
        repetitions = range(1 - self.warmups, params.max_repetitions + 1)
        self.steps = {s: {r: workload.steps(params, s, r) for r in repetitions} for s in self.starts}
        baselines = len(repetitions) if workload.fresh_start_per_repetition else 1
        self.total = sum(baselines + sum(len(v) for v in by_rep.values()) for by_rep in self.steps.values())

    def length(self, start: EngineStart, repetitions: list[int]) -> int:
        """Steps of one engine start holding `repetitions`, its idle baseline included."""
        return 1 + sum(len(self.steps[start][r]) for r in repetitions)


class _StartAbandoned(Exception):
    """A step whose failure leaves the engine in an unknown state: the start's other steps skip."""


class _Driver:
    def __init__(self, workload: Workload, params, run: "Run", progress: Progress, cpu_plan, plan: _Plan,
                 shared: Any = None):
        from .measure import SettlePolicy

        self.workload, self.params, self.run, self.progress, self.cpu_plan, self.plan, self.shared = \
            workload, params, run, progress, cpu_plan, plan, shared
        self.settle = SettlePolicy(max_seconds=params.max_settle_seconds)
        self.snapshots: dict[str, "DataSnapshot"] = {}

    def run_all(self) -> None:
        p = self.params
        if self.workload.fresh_start_per_repetition:
            if self.plan.warmups:
                for start in self.plan.starts:
                    self.one_start(start, [0], fixed=True)
            repetition = 0
            while True:
                repetition += 1
                for start in self.plan.starts:
                    self.one_start(start, [repetition], fixed=True)
                if repetition < p.repetitions:
                    continue
                done, verdict = self.precision(repetition)
                if done or repetition >= p.max_repetitions:
                    self.run.note(verdict)
                    break
            rest = range(repetition + 1, p.max_repetitions + 1)  # each a start of its own, baseline included
            self.progress.skip(sum(self.plan.length(s, [r]) for s in self.plan.starts for r in rest))
        else:
            verdicts = [self.one_start(start, list(range(1 - self.plan.warmups, p.max_repetitions + 1)), fixed=False)
                        for start in self.plan.starts]
            self.run.note(" ".join(v for v in verdicts if v))

    def one_start(self, start: EngineStart, repetitions: list[int], *, fixed: bool) -> str | None:
        """One engine start and its steps for `repetitions` (all of them with `fixed`; else until
        this start's phases are precise enough, from the base count on). Returns the precision
        verdict of an adaptive start."""
        from ..containers.lifecycle import start as start_engine

        progress, run = self.progress, self.run
        done_before = progress.done
        planned = self.plan.length(start, repetitions)
        verdict = None
        restored = None
        try:
            restored = self._snapshot_for(start)
            with start_engine(start.engine, run_id=run.run_id, config=start.config or None,
                              cpuset=self.cpu_plan.engine_cpus, unix_socket=start.unix_socket,
                              memory_limit_mb=start.memory_limit_mb, cpu_limit=start.cpu_limit,
                              data_volume=start.data_volume, restore=restored, nodes=start.nodes,
                              valgrind=getattr(self.params, "counter", "auto") == "valgrind") as instance:
                meter = run.meter(instance, repetitions[0], self.settle, labels=dict(start.labels),
                                  client=self._client(instance, start), warmup=False,
                                  perf_only_for_hardware=start.perf_only_for_hardware)
                ctx = StartContext(run, instance, meter, self.params, start, snapshots=self.snapshots,
                                   restored=restored, shared=self.shared)
                self.workload.prepare(ctx)
                # One start holding every repetition: its only baseline is a measured one, even when
                # a warm-up repetition comes first; a start of its own for the warm-up: a warm-up's.
                baseline_repetition = repetitions[0] if fixed else max(1, repetitions[0])
                with progress.step(**self._labels(start, baseline_repetition), phase=self.workload.baseline_name):
                    self.baseline(ctx, baseline_repetition)
                # Step-major: the base repetitions of each step back to back, then (adaptive) one more
                # round of every step at a time; else repetition-major, one round after another.
                rounds = ([[r for r in repetitions if r <= self.params.repetitions]]
                          + [[r] for r in repetitions if r > self.params.repetitions]) \
                    if self.workload.repeat_each_step else [[r] for r in repetitions]
                for held in (r for r in rounds if r):
                    self.steps(ctx, held)
                    repetition = held[-1]
                    if not fixed and repetition >= self.params.repetitions:
                        done, verdict = self.precision(repetition, instance_id=meter.instance_id, start=start,
                                                       measured_in=repetition)
                        if done or repetition >= self.params.max_repetitions:
                            break
        except _StartAbandoned:
            pass
        except Exception as exc:  # a start, driver or SQL error: keep the other engines going
            run.record_failure(f"{start.name} {_repetition_text(repetitions[0])}", exc)
        finally:
            if restored is not None:
                restored.discard()  # a start that failed before mounting it; else its own stop removed it
        progress.skip(planned - (progress.done - done_before))
        return verdict

    def _snapshot_for(self, start: EngineStart) -> "DataSnapshot | None":
        if start.restore is None:
            return None
        if start.restore not in self.snapshots:
            from ..containers.lifecycle import DataSnapshotError

            raise DataSnapshotError(f"no data snapshot {start.restore!r} to begin from: the start that prepares it "
                                    "failed before taking it (see its failure)")
        return self.snapshots.pop(start.restore)

    def baseline(self, ctx: StartContext, repetition: int) -> None:
        """Idle rate of this start, after its start-up and `prepare` work has quieted down: it is
        subtracted over every phase and sets the settle threshold, so it must not hold start-up."""
        quiet_wait = ctx.meter.wait_quiet(self.params.max_settle_seconds)
        seconds = self.params.idle_seconds
        if seconds <= 0:
            return  # no baseline asked for: a zero-length window's rate would be one tick over nothing
        ctx.meter.baseline(seconds, action=self.workload.idle_action(ctx, seconds), name=self.workload.baseline_name,
                           repetition=repetition, warmup=repetition == 0, quiet_wait=quiet_wait)

    def steps(self, ctx: StartContext, repetitions: list[int]) -> None:
        """The steps of `repetitions` on this start: one repetition's steps in order, or (several,
        step-major) each step's repetitions back to back in the order of the steps."""
        calibrated: set = set()
        ended: dict[int, set[str]] = {r: set() for r in repetitions}
        if len(repetitions) == 1:  # one repetition: its list as it is, a step repeated in it included
            runs = [(step, repetitions[0]) for step in self.plan.steps[ctx.start][repetitions[0]]]
        else:
            order: list[Step] = []  # by equality: a step's data need not be hashable
            for r in repetitions:
                order += [step for step in self.plan.steps[ctx.start][r] if step not in order]
            runs = [(step, r) for step in order for r in repetitions if step in self.plan.steps[ctx.start][r]]
        step_major = len(repetitions) > 1
        for step, repetition in runs:
            # On the engine's CPUs: how fast the host itself was just then. Once per repetition, or,
            # step-major, beside every step's repetition: there a repetition's first step would be the
            # first test only, and the host's speed during every later test would go unsampled.
            key = (order.index(step), repetition) if step_major else repetition
            if key not in calibrated:
                on_engine_cpus = ctx.instance.scope.containers
                ctx.meter.calibrate(cpus.parse_cpuset(self.cpu_plan.engine_cpus) if on_engine_cpus else None,
                                    repetition=repetition, warmup=repetition == 0)
                calibrated.add(key)
            self._step(ctx, step, repetition, ended[repetition])

    def _step(self, ctx: StartContext, step: Step, repetition: int, ended: set[str]) -> None:
        if step.series is not None and step.series in ended:
            self.progress.skip(1)
            return
        step_ctx = StepContext(ctx.run, ctx.instance, ctx.meter, ctx.params, ctx.start, ctx.state, ctx.snapshots,
                               ctx.restored, ctx.shared, repetition=repetition, warmup=repetition == 0)
        with self.progress.step(**self._labels(ctx.start, repetition), phase=step.name):
            try:
                if self.workload.measure(step_ctx, step) == END_SERIES and step.series is not None:
                    ended.add(step.series)
            except Exception as exc:
                self.run.record_failure(f"{ctx.start.name} {step.name} {_repetition_text(repetition)}", exc,
                                        log=ctx.instance.log_tail())
                if step.ends_start and not isinstance(exc, step.survives):
                    raise _StartAbandoned() from exc

    def precision(self, repetitions: int, *, instance_id: str | None = None, start: EngineStart | None = None,
                  measured_in: int | None = None) -> tuple[bool, str]:
        return precision_verdict(self.run.run_id, self.params.ci_target, repetitions,
                                 floor=self.workload.precision_floor, per=self.workload.precision_per,
                                 instance_id=instance_id, measured_in=measured_in, store=self.run.store,
                                 where=f"{start.name}: " if start else "")

    def _client(self, instance, start: EngineStart) -> cgroups.Scope | None:
        if start.client == CHILDREN_CLIENT:
            return cgroups.children_scope()
        if start.client == DRIVER_CLIENT and instance.engine.server:
            return cgroups.process_scope()
        return None

    def _labels(self, start: EngineStart, repetition: int) -> dict[str, Any]:
        return {"engine": start.name, "repetition": repetition, "repetitions": self.params.repetitions,
                "max_repetitions": self.params.max_repetitions}


def idle_rule(params, policy, workload: Workload) -> str:
    """The run's note on its idle baseline: when the windows are taken, which rate is subtracted."""
    if params.idle_seconds <= 0:
        return "Idle baseline: none (idle_seconds = 0): costs are not net of an idle rate."
    return (f"Idle baseline: {params.idle_seconds:g} s {workload.idle_windows}, after waiting up to "
            f"{params.max_settle_seconds:g} s for the engine to be quiet (below {policy.floor_cores:g} of a core over "
            f"{policy.gate_seconds:g} s; the wait is stored with the baseline as quiet_wait_time). "
            f"{workload.idle_subtracted} is subtracted over each phase; the latest idle window sets the settle "
            "threshold. Each idle window is stored (window baseline), so their spread is in the store beside the "
            "phases'.")


def _repetition_text(repetition: int) -> str:
    return "warm-up" if repetition == 0 else f"repetition {repetition}"


def precision_verdict(run_id: str, ci_target: float, repetitions: int, *, floor: float = PRECISION_FLOOR_SECONDS,
                      per: str | None = None, instance_id: str | None = None, measured_in: int | None = None,
                      store=None, where: str = "") -> tuple[bool, str]:
    """(every targeted phase within ci_target, or, counted in instructions, every phase's counts
    within INSTRUCTIONS_AGREE of each other; the sentence saying so or naming the widest)."""
    from ..data import results

    # The one rule a report reads too (results.precision_outcome): met, and the wide and targeted counts.
    outcome = results.precision_outcome(run_id, ci_target, floor=floor, per=per, instance_id=instance_id,
                                        measured_in=measured_in, store=store)
    p = outcome.table
    if p.empty:
        return True, f"{where}Repetitions: {repetitions}; nothing was measured."
    instructions = bool((p["metric"] == "instructions_user").all())
    cost = f"of {'instructions' if instructions else 'CPU'}{' per ' + per.rstrip('s') if per else ''}"
    target = p[p["targeted"]]
    if instructions and not target.empty and target["agree"].all():
        apart = target.sort_values("spread", ascending=False).iloc[0]
        return True, (f"{where}Repetitions: {repetitions}, stopped when every phase's instruction counts agreed "
                      f"within {results.INSTRUCTIONS_AGREE:.1%} (max - min over the mean; widest: {apart['engine']} "
                      f"{apart['phase']} {apart['spread']:.3%}): further repetitions would repeat the same count.")
    if target.empty:
        return True, (f"{where}Repetitions: {repetitions}; no phase window cost {floor} s of CPU or more, so none "
                      f"had a precision target.")
    if (target["n"] < 2).all():  # not met (NaN is wide), and no CI to be wider
        return False, (f"{where}Repetitions: {repetitions}: one value per phase window has no 95% CI, so the "
                       f"±{ci_target:.0%} target was not tested.")
    wide = target[target["wide"]]
    widest = target.sort_values("rel_ci95", ascending=False, na_position="first").iloc[0]
    widest_text = (f"{widest['engine']} {widest['phase']} ±{widest['rel_ci95']:.1%}"
                   if widest["rel_ci95"] == widest["rel_ci95"] else f"{widest['engine']} {widest['phase']} (one value)")
    drift = _drift_sentence(run_id, widest, instance_id=instance_id, store=store)
    windows = "phase window" if len(target) == len(p) else f"phase window costing >= {floor} s of CPU"
    if wide.empty:
        return True, (f"{where}Repetitions: {repetitions}, stopped when every {windows} had a 95% CI {cost} within "
                      f"±{ci_target:.0%} (widest: {widest_text}).{drift}")
    return False, (f"{where}Repetitions: {repetitions}, the bound: {len(wide)} of {len(target)} {windows}s still had a "
                   f"95% CI {cost} wider than ±{ci_target:.0%} (widest: {widest_text}).{drift}")


def _drift_sentence(run_id: str, widest, *, instance_id: str | None, store) -> str:
    """Which of the host's speed or the engine varied more, repetition to repetition: the
    calibration loop's relative standard deviation beside the widest phase's (both spreads of
    single values, not CIs, which shrink with the number of values)."""
    from ..data import findings, results

    n = int(widest["n"])
    if n < 2 or widest["rel_ci95"] != widest["rel_ci95"]:
        return ""
    phase_sd = widest["rel_ci95"] * n ** 0.5 / results.t_quantile_975(n - 1)
    df = results.measurements(run_id, store)
    if instance_id is not None:
        df = df[df["instance_id"] == instance_id]
    if not findings.drift_applies(results.cost_metric(df)[1]):
        return ""  # a count (instructions) does not move with the host's speed: its spread is the engine's
    speed = results.host_speed(df)
    if speed is None or speed["n"] < 2:
        return ""
    host = (f"the host's own speed (a fixed CPU loop each repetition, or each step's repetition) varied by {speed['rel_sd']:.1%} (relative "
            f"sd; slowest / fastest {speed['max_over_min']:.2f}) against {phase_sd:.1%} for {widest['engine']} "
            f"{widest['phase']}")
    if speed["rel_sd"] >= 0.5 * phase_sd:
        # Comparable sizes only: whether the slow repetitions of the host are the costly ones of the
        # phase is not checked here, so the drift is not said to explain the spread.
        return (f" The host's own speed varied at least half as much as the widest phase did, so its drift and the "
                f"engine's own variation cannot be told apart here: {host}.")
    return f" Engine variance dominates: {host}."


__all__ = ["EngineStart", "END_SERIES", "PerOperation", "Step", "StartContext", "StepContext", "Workload",
           "precision_verdict", "PRECISION_FLOOR_SECONDS", "DRIVER_CLIENT", "CHILDREN_CLIENT"]
