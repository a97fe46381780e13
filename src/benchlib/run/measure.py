"""One measurement path: what a phase costs the engine, kept window by window.

    with Run("dml", parameters) as run:
        with start("postgres") as eng:
            meter = run.meter(eng, repetition=1, labels={"pk": "uuid"})
            meter.baseline(10, action=lambda: ...)                       # idle rate of the engine
            with meter.phase("insert", check=count_rows, expect=2_000):  # phase + settle window
                ...

A window measures one or two scopes at once. The engine's: for a container its cgroup (all
processes and threads, background workers included), for an embedded engine this process. And,
where asked, the client's: this process (a Python driver) or the children it waits for (sysbench).
Each window stores wall time, CPU user/system, I/O bytes, peak memory and perf counters per
scope; a counter the host cannot count is stored as NULL with its status, never as 0."""
from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from ..host import cgroups, perf
from ..counters import valgrind
from ..host.docker_host import docker_server_version
from ..containers.lifecycle import Instance
from ..host.owners import owner_label
from .parameters import SETTLE_GATE_SECONDS, SETTLE_QUIET_SECONDS
from ..host.provenance import benchlib_version, declared_host_class, git_state, has_pmu, host_facts, host_fingerprint
from ..data.store import Store, as_json, utcnow
from ..counters.valgrind import not_native


# Set by a cluster worker for the kernel it starts: the batch task and the worker measuring this run.
CLUSTER_TASK_ENV = "BENCHLIB_CLUSTER_TASK"
WORKER_ENV = "BENCHLIB_WORKER"


@dataclass(frozen=True)
class SettlePolicy:
    """When deferred work (purge, flushing, checkpoints) counts as finished.

    After a phase the engine's CPU rate is polled; the settle window ends once the rate over the
    last `quiet_seconds` is back near the idle rate (idle x `idle_factor`, at least
    `floor_cores` of a core), or after `max_seconds`. Before an idle baseline the same rule gates
    on a shorter trailing interval, `gate_seconds`: the baseline window that follows measures the
    idle rate itself, so the gate only has to see that start-up work has stopped."""

    max_seconds: float = 60.0
    quiet_seconds: float = SETTLE_QUIET_SECONDS
    gate_seconds: float = SETTLE_GATE_SECONDS
    poll_seconds: float = 0.1
    idle_factor: float = 1.5
    floor_cores: float = 0.02

    def threshold(self, idle_rate: float | None) -> float:
        return max(self.floor_cores, (idle_rate or 0.0) * self.idle_factor)


HARDWARE_EVENTS = {"instructions:u", "cycles"}
# Per phase and settle window where the idle baseline counted instructions: its rate x the window's
# wall time, what subtracting the idle rate removes from the window's count.
IDLE_INSTRUCTIONS = "idle_instructions_user"
# An embedded engine's child under valgrind: what its protocol cost in a window (its requests x
# the per-request count measured at start), taken out of the window's instructions_user.
HARNESS_INSTRUCTIONS = "harness_instructions_user"
# The calibration loop's fixed work: the same iterations in every run and on every host, about
# 0.1 s of one core here. Never change it without renaming the metric: runs compare by it.
CALIBRATION_ITERATIONS = 600_000
CALIBRATION = "calibration"


def calibration_loop(iterations: int = CALIBRATION_ITERATIONS) -> int:
    """A deterministic CPU-bound loop (a linear congruential generator): no memory traffic, no
    system calls, no allocation beyond small ints, so its CPU time moves only with the host's
    speed (clock frequency, steal time, a noisy neighbour's cache pressure)."""
    x = 1
    for _ in range(iterations):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
    return x


NODE_SCOPE = cgroups.NODE_SCOPE
NODE_SEPARATOR = ":"


def node_instance_id(cluster_instance_id: str, node: str) -> str:
    """`mariadb-galera-0003:node2`: a file name in the store, which no instance id otherwise holds."""
    return f"{cluster_instance_id}{NODE_SEPARATOR}{node}"


def cluster_instance_of(instance_id: str) -> str:
    return instance_id.rpartition(NODE_SEPARATOR)[0]


# Windows of a warm-up repetition: stored, never part of a cost (results read exact window names).
WARMUP_PREFIX = "warmup-"


class Run:
    """A row in `runs` (status running -> ok | partial | failed), with its instances and
    measurements. Measurements are written as each window ends, so a failure never loses earlier
    ones. `partial`: some engine starts failed (`record_failure`), the others were measured.
    The row names its owner process, so a later process can tell a dead run from a live one."""

    def __init__(self, experiment: str, parameters: dict[str, Any], *, notebook: str | None = None,
                 store: Store | None = None, run_id: str | None = None):
        from ..data.store import new_run_id

        self.store = store or Store.default()
        self.run_id = run_id or new_run_id()
        self.experiment = experiment
        self.parameters = parameters
        self.notebook = notebook
        self._seq = itertools.count(1)
        self._seq_lock = threading.Lock()
        self._row: dict[str, Any] = {}
        self.failures: dict[str, str] = {}
        self.tracebacks: dict[str, str] = {}
        self._notes: list[str] = []

    def __enter__(self) -> "Run":
        support = perf.probe()
        sha, dirty = git_state()
        facts = host_facts()
        host_class, price, price_unit = declared_host_class()
        layout, pmu = cgroups.layout(), has_pmu(support.events)
        self._row = {
            "run_id": self.run_id, "experiment": self.experiment, "notebook": self.notebook,
            "status": "running", "error": None, "started_at": utcnow(), "ended_at": None,
            **facts, "cgroup_layout": layout, "docker_version": docker_server_version(),
            "host_class": host_class, "host_price": price, "host_price_unit": price_unit, "pmu": pmu,
            "host_fingerprint": host_fingerprint(facts, layout, pmu),
            "cluster_task": os.environ.get(CLUSTER_TASK_ENV) or None, "worker": os.environ.get(WORKER_ENV) or None,
            "perf_version": support.version,
            "perf_support": as_json({"available": support.available, "reason": support.reason,
                                     "events": support.events}),
            "benchlib_version": benchlib_version(), "git_sha": sha, "git_dirty": dirty,
            "parameters": as_json(self.parameters), "owner": owner_label(), "status_note": None,
        }
        self.store.write_run(self._row)
        _announce(self.run_id, self.experiment)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.finish(None if exc is None else "".join(traceback.format_exception_only(exc_type, exc)).strip())

    def note(self, text: str) -> None:
        """A sentence about how the run went (why its repetitions stopped, say), kept in the runs
        row's status_note when the run finishes."""
        self._notes.append(text)

    def record_failure(self, what: str, error: BaseException | str, *, log: str | None = None) -> None:
        """One part (an engine start, a step) failed; the run goes on and ends `partial`. The
        run's `error` holds one line per failure, its `failures` the full tracebacks (and the
        server's last log lines, `log`): a failure must stay debuggable from the store
        (`benchlib runs --show <id>`)."""
        self.failures[what] = error if isinstance(error, str) else _one_line(error)
        self.tracebacks[what] = (error if isinstance(error, str) else "".join(
            traceback.format_exception(type(error), error, error.__traceback__))) + (
            f"\nserver's last log lines:\n{log}" if log else "")

    def finish(self, error: str | None) -> None:
        status = "failed" if error else ("partial" if self.failures else "ok")
        if self.failures and not error:
            error = "; ".join(f"{k}: {v}" for k, v in self.failures.items())
        self._row.update(status=status, error=error, ended_at=utcnow(), status_note=" ".join(self._notes) or None,
                         failures=as_json(self.tracebacks) if self.tracebacks else None)
        # Status first: a failed compaction must never leave the run 'running'. Uncompacted
        # window files stay readable.
        self.store.write_run(self._row)
        try:
            self.store.compact(self.run_id)
        except Exception as exc:
            self._row["status_note"] = " ".join([*self._notes, f"Compaction failed ({_one_line(exc)}); window files "
                                                 "kept as written."])
            self.store.write_run(self._row)

    def next_seq(self) -> int:
        with self._seq_lock:
            return next(self._seq)

    def record_instance(self, instance: Instance) -> str:
        """One `instances` row per engine start; a cluster's also one per node (kind `node`,
        instance id `<cluster's>:<node>`), with the node's own container, cgroup, image and version."""
        instance_id = f"{instance.key}-{self.next_seq():04d}"
        p = instance.provenance
        self.store.write_instance({
            "run_id": self.run_id, "instance_id": instance_id, "engine": instance.key, "kind": p["kind"],
            "image_ref": p["image_ref"], "image_id": p["image_id"], "image_digest": p["image_digest"],
            "image_source": p["image_source"], "image_note": p["image_note"],
            "server_version": p["server_version"],
            # What the start found out beside what it was asked for: read by the reports' caveats.
            "config": as_json({**p["config"], **{k: p[k] for k in ("durability", "isolation", "client_path", "counter")
                                                 if p.get(k)}}),
            "startup_seconds": p["startup_seconds"], "container_id": p["container_id"],
            "cgroup": p["cgroup"], "started_at": utcnow(),
        })
        for node in p.get("nodes", ()):
            self.store.write_instance({
                "run_id": self.run_id, "instance_id": node_instance_id(instance_id, node["node"]),
                "engine": instance.key, "kind": NODE_SCOPE, "image_ref": node["image_ref"],
                "image_id": node["image_id"], "image_digest": node["image_digest"],
                "image_source": node["image_source"], "image_note": node["image_note"],
                "server_version": node["server_version"],
                "config": as_json({"role": node["role"], "node": node["node"]}),
                "startup_seconds": node["startup_seconds"], "container_id": node["container_id"],
                "cgroup": node["cgroup"], "started_at": utcnow(),
            })
        return instance_id

    def meter(self, instance: Instance, repetition: int = 1, settle: SettlePolicy | None = None, *,
              labels: dict[str, Any] | None = None, client: cgroups.Scope | None = None,
              warmup: bool = False, perf_only_for_hardware: bool = False) -> "Meter":
        """`labels`: the variant every window of this meter belongs to; `client`: a second scope
        measured in the same windows (cgroups.process_scope() for a Python driver,
        cgroups.children_scope() for a benchmark client run as a child process); `warmup`: the
        windows are stored as `warmup-<window>`, kept for inspection but outside every cost;
        `perf_only_for_hardware`: run perf only where it counts hardware events (throughput
        benchmarks: perf's cgroup monitoring slows every context switch), else its metrics are
        stored with status `skipped`."""
        return Meter(self, instance, repetition, settle or SettlePolicy(), labels or {}, client, warmup,
                     perf_only_for_hardware)


@dataclass
class RunResult:
    """What a workload's run returns: its id (every figure is read back from the store by it),
    the validated parameters, and the parts that failed (engine starts, steps)."""

    run_id: str
    params: Any
    errors: dict[str, str]

    def raise_for_errors(self) -> None:
        """Last cell of a notebook: the report is complete, but the batch must see the failure."""
        if self.errors:
            from ..core.errors import BenchlibError

            raise BenchlibError(f"run {self.run_id}: {len(self.errors)} part(s) failed (the report shows what was "
                                "measured): " + "; ".join(f"{k}: {v}" for k, v in self.errors.items()))


def _one_line(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).strip().replace("\n", " ")


RUN_MIME = "application/vnd.benchlib.run+json"


def _announce(run_id: str, experiment: str) -> None:
    """Record the run id in the executing notebook (when there is one), so the batch and tests
    read this notebook's own run rather than "the newest"."""
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        return
    if get_ipython() is None:
        return
    display({RUN_MIME: {"run_id": run_id, "experiment": experiment},
             "text/markdown": f"Run `{run_id}` ({experiment}): every figure below is read back from the results "
                              "store by this id.",
             "text/plain": f"benchlib run {run_id} ({experiment})"}, raw=True)


@dataclass
class Window:
    """Readings of one window, before they become rows."""

    name: str
    started_at: Any
    ended_at: Any
    wall_seconds: float
    before: cgroups.Sample
    after: cgroups.Sample
    perf_readings: dict[str, perf.Reading] | None
    peak_is_window: bool
    client_before: cgroups.Sample | None = None
    client_after: cgroups.Sample | None = None
    steal_before: int | None = None
    steal_after: int | None = None
    counted: Any = None  # valgrind.Counted: the window's dump files, for a profile reader


class Readings:
    """What the body of a phase reports about itself (a benchmark client's throughput and
    latency): stored in the phase window beside the scopes' own rows."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, float | None, str, str, str, str | None]] = []
        self._end: Callable[[], None] | None = None

    def end_window(self) -> None:
        """Close the measured window now: what the body does after it (reaping a client, parsing its
        report, recording readings) is outside it. Without a call the window ends with the body."""
        if self._end is not None:
            self._end()

    def record(self, metric: str, value: float | None, unit: str, source: str, scope: str = "client",
               status: str | None = None) -> None:
        """`value` None with a `status` ("not reported") says why a counter has no value; None
        without one is stored as "unsupported"."""
        self.rows.append((metric, value, unit, source, scope, status))


class Meter:
    def __init__(self, run: Run, instance: Instance, repetition: int, settle: SettlePolicy,
                 labels: dict[str, Any], client: cgroups.Scope | None, warmup: bool = False,
                 perf_only_for_hardware: bool = False):
        self.run = run
        self.warmup = warmup
        self.instance = instance
        self.repetition = repetition
        self.settle_policy = settle
        self.labels = dict(labels)
        self.client = client
        self.instance_id = run.record_instance(instance)
        self.idle_rate: float | None = None  # CPU seconds per second while idle
        self.idle_instruction_rate: float | None = None  # under valgrind: instructions per second while idle
        support = perf.probe()
        self._perf_ok = support.available
        self._perf_status = "ok" if support.available else "unavailable"
        if perf_only_for_hardware and support.available and not set(support.supported_events) & HARDWARE_EVENTS:
            # perf -a -G makes every context switch on the host dearer; for a load whose result is
            # its own throughput that costs a few percent, and without hardware counters perf
            # counts nothing cgroup accounting does not.
            self._perf_ok, self._perf_status = False, "skipped"
        if instance.callgrind is not None:
            # The server under valgrind: callgrind counts its instructions; perf would count valgrind.
            self._perf_ok, self._perf_status = False, valgrind.PERF_NOT_RUN

    @property
    def engine_scope(self) -> str:
        """Whose resources the engine's rows count: its server's cgroup, or one process that is
        both engine and client (embedded)."""
        return "embedded" if self.instance.engine.embedded is not None else "server"

    @property
    def defers_work(self) -> bool:
        """Whether the engine works after a call returns: a server (purge, flushing, checkpoints),
        or an embedded library with threads of its own (RocksDB's compactions)."""
        embedded = self.instance.engine.embedded
        return self.instance.scope.containers or (embedded is not None and embedded.background_work)

    # -- windows -----------------------------------------------------------------------------------
    @property
    def under_valgrind(self) -> bool:
        return self.instance.callgrind is not None

    @property
    def counter(self) -> str:
        """Who counts the engine's instructions (the rows' source): valgrind, else perf."""
        return valgrind.SOURCE if self.under_valgrind else "perf"

    def _counter_window(self, name: str, window: str):
        """The window's instruction counter, with perf.PerfWindow's interface: callgrind's for a
        server under valgrind (not for calibration windows: the harness's loop, not the engine's
        work), else perf's where it runs; None: nothing counts."""
        if self.under_valgrind:
            return self.instance.callgrind.window(f"{window}-{name}") if window != CALIBRATION else None
        return self._perf_window()

    def _perf_window(self) -> perf.PerfWindow | None:
        if not self._perf_ok:
            return None
        scope = self.instance.scope
        if scope.kind == "process":
            return perf.PerfWindow(pid=scope.pid).prepare()
        cgroups_ = scope.perf_cgroups
        return perf.PerfWindow(cgroup=cgroups_[0] if len(cgroups_) == 1 else cgroups_).prepare()

    def baseline(self, seconds: float, action: Callable[[], Any] | None = None, name: str = "idle", *,
                 repetition: int | None = None, warmup: bool | None = None,
                 quiet_wait: tuple[float, str] | None = None, labels: dict[str, Any] | None = None) -> float:
        """Measure the engine idle for `seconds` (server-side sleep via `action`, else a client
        sleep) as a window of kind `baseline`, and keep its CPU rate, which settle windows and
        reports compare against. `quiet_wait` (seconds, outcome) of the gate before it is stored
        with the window, so a baseline taken after the gate gave up is visible as such. `labels`:
        the variant it follows (write_cost takes one after each cell: results.idle_rates)."""
        with self._window(name, "baseline", check=None, settle=False, repetition=repetition, labels=labels,
                          warmup=warmup) as readings:
            if quiet_wait is not None and quiet_wait[1] != "no-deferred-work":
                readings.record("quiet_wait_time", quiet_wait[0], "s", "harness", scope="harness",
                                status="ok" if quiet_wait[1] == "quiet" else "never quiet: ended at the bound")
            (action or (lambda: time.sleep(seconds)))()
        return self.idle_rate or 0.0

    def calibrate(self, cpus: frozenset[int] | None, *, repetition: int, warmup: bool) -> float | None:
        """The calibration loop as a window of kind `calibration`, on `cpus` (the CPUs the engine
        runs on; None: wherever this thread may run): its thread CPU time, repetition after
        repetition, says how much the host's own speed moved during the run. Returns it."""
        outcome: dict[str, Any] = {}

        def body() -> None:
            try:
                if cpus:
                    os.sched_setaffinity(0, cpus)  # this thread only: the harness keeps its CPUs
                t0 = time.thread_time()
                calibration_loop()
                outcome["cpu"] = time.thread_time() - t0
            except BaseException as exc:  # reported in the caller's thread
                outcome["error"] = exc

        with self._window(CALIBRATION, CALIBRATION, check=None, settle=False, repetition=repetition,
                          client=None, warmup=warmup) as readings:
            worker = threading.Thread(target=body, name="benchlib-calibration")
            worker.start()
            worker.join()
            if "error" in outcome:
                raise outcome["error"]
            readings.record("calibration_cpu_time", outcome["cpu"], "s", "thread clock", scope=CALIBRATION)
            readings.record("calibration_iterations", float(CALIBRATION_ITERATIONS), "count", "harness",
                            scope=CALIBRATION)
        return outcome["cpu"]

    def wait_quiet(self, max_seconds: float) -> tuple[float, str]:
        """Wait until the engine's CPU rate over the policy's gate interval is below its floor
        (start-up work, a DROP's or a load's deferred work done), at most `max_seconds`. Returns
        (seconds waited, "quiet" | "max_seconds" | "no-deferred-work"); the baseline that follows
        stores them."""
        scope = self.instance.scope
        if not self.defers_work or max_seconds <= 0:
            return 0.0, "no-deferred-work"
        gate = dataclasses.replace(self.settle_policy, quiet_seconds=self.settle_policy.gate_seconds)
        # The floor is per server: a cluster's summed scope may idle at that rate on every node.
        floor = gate.floor_cores * max(1, len(scope.nodes))
        t0 = time.perf_counter()
        outcome = wait_until_quiet(scope, gate, t0, scope.cpu_ns() or 0, floor, max_seconds)
        return time.perf_counter() - t0, outcome

    @contextlib.contextmanager
    def phase(self, name: str, check: Callable[[], float] | None = None, check_name: str = "rows",
              settle: bool = True, expect: float | None = None, labels: dict[str, Any] | None = None, *,
              repetition: int | None = None, client: cgroups.Scope | None | str = "meter",
              warmup: bool | None = None) -> Iterator[Readings]:
        """Measure the body as window `phase`, then the deferred work as window `settle`
        (servers, and embedded libraries with threads of their own: `defers_work`).
        `check()` runs after both windows, outside any measurement; with `expect`, a different
        value is stored as check_status 'mismatch' (and reports flag it). The body may record
        its own readings (`as readings: readings.record("tps", ...)`). `repetition` and `client`
        override the meter's own for this window (the driver's per-step context)."""
        with self._window(name, "phase", check=check, check_name=check_name, settle=settle, expect=expect,
                          labels=labels, repetition=repetition, client=client, warmup=warmup) as readings:
            yield readings

    @contextlib.contextmanager
    def _window(self, phase: str, window: str, *, check, check_name: str = "rows", settle: bool,
                expect: float | None = None, labels: dict[str, Any] | None = None, repetition: int | None = None,
                client: cgroups.Scope | None | str = "meter", warmup: bool | None = None) -> Iterator[Readings]:
        scope = self.instance.scope
        client = self.client if client == "meter" else client
        readings = Readings()
        settle = settle and self.defers_work
        main = self._counter_window(phase, window)
        tail = self._counter_window(phase, "settle") if settle else None  # enabled the moment the phase ends
        windows: list[Window] = []
        try:
            peak_reset = _reset_peak(scope)
            # Switched on first: a valgrind window's switch is an exec of a tenth of a second, which
            # must not count as the window's wall time (the idle correction multiplies it).
            if main:
                main.enable()
            before = scope.sample()
            steal_before = host_steal_ticks()
            # The client's sample innermost, its end first: reading the engine's cgroup (its files,
            # every process's I/O) is this process's CPU, ~1.4 ms a window that a client window
            # around it counted as the client's.
            client_before = client.sample() if client else None
            started_at, t0 = utcnow(), time.perf_counter()
            ended: list[tuple[float, Any, cgroups.Sample]] = []

            def end() -> None:
                nonlocal main
                if ended:
                    return
                t1 = time.perf_counter()
                client_after = client.sample() if client else None
                ended_at = utcnow()
                after = scope.sample()
                steal_after = host_steal_ticks()
                if main and tail:
                    main.hand_over(tail)
                elif main:
                    main.disable()
                windows.append(Window(window, started_at, ended_at, t1 - t0, before, after,
                                      main.result() if main else None, peak_reset, client_before, client_after,
                                      steal_before, steal_after, getattr(main, "counted", None)))
                main = None
                ended.append((t1, ended_at, after))
                if window == "baseline":
                    self.idle_rate = _cpu_seconds(before, after) / max(t1 - t0, 1e-9) if after.cpu_ns is not None else None
                    instructions = _instructions(windows[-1])
                    self.idle_instruction_rate = instructions / max(t1 - t0, 1e-9) if instructions is not None \
                        else None

            readings._end = end
            yield readings
            end()
            readings._end = None
            if settle:
                t1, ended_at, after = ended[0]
                windows.append(self._settle(tail, after, t1, ended_at))
                tail = None
        finally:
            for leftover in (main, tail):
                if leftover is not None:
                    leftover.abort()
        check_value, check_error = None, None
        if check:
            try:
                check_value = float(check())
            except Exception as exc:  # the windows are measured: store them, then let the failure be seen
                check_error = exc
        self._store(phase, windows, check_name if check else None, check_value, expect,
                    {**self.labels, **(labels or {})}, readings, self.repetition if repetition is None else repetition,
                    client, self.warmup if warmup is None else warmup, check_failed=check_error is not None)
        if check_error is not None:
            raise check_error

    def _settle(self, tail: perf.PerfWindow | None, start: cgroups.Sample, t_start: float, started_at) -> Window:
        policy = self.settle_policy
        scope = self.instance.scope
        wait_until_quiet(scope, policy, t_start, start.cpu_ns or 0, policy.threshold(self.idle_rate), policy.max_seconds)
        t_end = time.perf_counter()
        ended_at = utcnow()
        after = scope.sample()
        if tail:
            tail.disable()
        return Window("settle", started_at, ended_at, t_end - t_start, start, after,
                      tail.result() if tail else None, False, counted=getattr(tail, "counted", None))

    # -- rows ------------------------------------------------------------------------------------
    def _store(self, phase: str, windows: list[Window], check_name: str | None, check_value: float | None,
               expect: float | None, labels: dict[str, Any], readings: Readings, repetition: int,
               client: cgroups.Scope | None, warmup: bool, *, check_failed: bool = False) -> None:
        source = self.instance.scope.source
        engine_scope = self.engine_scope
        check_status = "error" if check_failed else None
        if check_value is not None and expect is not None:
            check_status = "ok" if check_value == expect else "mismatch"
        seq = self.run.next_seq()
        rows = []
        for w in windows:
            common = {
                "run_id": self.run.run_id, "instance_id": self.instance_id, "engine": self.instance.key,
                "experiment": self.run.experiment, "phase": phase, "repetition": repetition,
                "window": f"{WARMUP_PREFIX}{w.name}" if warmup else w.name, "started_at": w.started_at, "ended_at": w.ended_at,
                "check_name": check_name, "check_value": check_value, "check_expected": expect,
                "check_status": check_status, "seq": seq, "labels": as_json(labels),
            }

            def add(metric: str, value: float | None, unit: str, src: str, status: str | None = None,
                    scope: str = engine_scope, common: dict = common) -> None:
                if self.under_valgrind and scope == engine_scope:
                    metric = not_native(metric)  # the server's CPU under valgrind is not its CPU cost
                rows.append({**common, "metric": metric, "value": value, "unit": unit, "source": src, "scope": scope,
                             "status": status or ("ok" if value is not None else "unsupported")})

            add("wall_time", w.wall_seconds, "s", "clock")
            if w.steal_before is not None and w.steal_after is not None:
                add("host_steal_time", (w.steal_after - w.steal_before) / CLOCK_TICKS, "s", STEAL_SOURCE, scope="host")
            if w.name != "settle":
                for metric, value, unit, src, scope, status in readings.rows:
                    add(metric, value, unit, src, status, scope=scope)
            if w.client_before is not None and w.client_after is not None and client is not None:
                cb, ca, csrc = w.client_before, w.client_after, client.source
                add("cpu_time", _delta(cb.cpu_ns, ca.cpu_ns, 1e-9), "s", csrc, scope="client")
                add("cpu_user_time", _delta(cb.user_ns, ca.user_ns, 1e-9), "s", csrc, scope="client")
                add("cpu_system_time", _delta(cb.system_ns, ca.system_ns, 1e-9), "s", csrc, scope="client")
            self._resource_rows(add, w.before, w.after, w.perf_readings, w.peak_is_window, source,
                                memory_total=bool(w.after.parts))
            if w.name in ("phase", "settle") and self.idle_instruction_rate is not None:
                # What subtracting the idle rate removes from this window's count: kept, so a report
                # can show how much of a figure the correction is.
                add(IDLE_INSTRUCTIONS, self.idle_instruction_rate * w.wall_seconds, "instructions",
                    f"{self.counter}: idle baseline rate x window wall time")
            if w.counted is not None and self.instance.callgrind.child is not None:
                add(HARNESS_INSTRUCTIONS, w.counted.harness, "instructions",
                    f"{self.counter}: the child's requests x its protocol's per-request count")
            # A cluster: each node's own rows beside the sum, under the node's instance id.
            for i, node in enumerate(self.instance.nodes):
                node_common = {**common, "instance_id": node_instance_id(self.instance_id, node.name)}

                def add_node(metric: str, value: float | None, unit: str, src: str, status: str | None = None,
                             node_common: dict = node_common) -> None:
                    add(metric, value, unit, src, status, scope=NODE_SCOPE, common=node_common)

                add_node("wall_time", w.wall_seconds, "s", "clock")
                node_perf = None if w.perf_readings is None else {
                    event: r.parts[i] for event, r in w.perf_readings.items() if len(r.parts) > i}
                self._resource_rows(add_node, w.before.parts[i], w.after.parts[i], node_perf, w.peak_is_window,
                                    node.scope.source)
        self.run.store.append_measurements(self.run.run_id, seq, rows)
        for w in windows:
            if w.counted is not None and w.name == "phase" and not warmup:
                self._store_profile(seq, phase, repetition, labels, w)

    def _store_profile(self, seq: int, phase: str, repetition: int, labels: dict[str, Any], w: Window) -> None:
        """Where a phase window's instructions went, from its callgrind dumps (read after its
        measurements are stored: a dump that cannot be read loses the profile, not the count)."""
        from ..counters.callgrind_profile import profile_rows, read_window

        try:
            profile = read_window(list(w.counted.files))
        except Exception as exc:
            self.run.record_failure(f"{self.instance.key} {phase} instruction profile", exc)
            return
        keys = {"run_id": self.run.run_id, "seq": seq, "instance_id": self.instance_id, "phase": phase,
                "repetition": repetition, "labels": as_json(labels), "window": w.name}
        rows = profile_rows(profile, self.instance.key, keys, tool_version=self.instance.callgrind.version)
        self.run.store.append_profile(self.run.run_id, seq, w.name, rows)

    def _resource_rows(self, add, b: cgroups.Sample, a: cgroups.Sample, perf_readings, peak_is_window: bool,
                       source: str, *, memory_total: bool = False) -> None:
        """The rows of one scope's window: CPU, I/O, memory, network and perf counters."""
        add("cpu_time", _delta(b.cpu_ns, a.cpu_ns, 1e-9), "s", source)
        add("cpu_user_time", _delta(b.user_ns, a.user_ns, 1e-9), "s", source)
        add("cpu_system_time", _delta(b.system_ns, a.system_ns, 1e-9), "s", source)
        add("io_read_bytes", _delta(b.io_read_bytes, a.io_read_bytes, 1), "bytes", source)
        add("io_write_bytes", _delta(b.io_write_bytes, a.io_write_bytes, 1), "bytes", source)
        if a.net_rx_bytes is not None:  # a container's own network namespace; a process has none of its own
            add("net_rx_bytes", _delta(b.net_rx_bytes, a.net_rx_bytes, 1), "bytes", source)
            add("net_tx_bytes", _delta(b.net_tx_bytes, a.net_tx_bytes, 1), "bytes", source)
        if a.storage_read_bytes is not None:  # the container's processes, page-cache hits excluded
            read = _delta(b.storage_read_bytes, a.storage_read_bytes, 1)
            # A process that exited during the window took its bytes with it: no figure, said why.
            add("storage_read_bytes", read if read is None or read >= 0 else None, "bytes",
                f"{source}: /proc/<pid>/io read_bytes", None if read is None or read >= 0 else
                "unknown: a process exited during the window")
        # A peak that could not be reset at the window start covers the engine's lifetime: it gets
        # its own name so nobody reads it as the window's peak. A cluster's is the sum of each
        # node's peak, which need not have come at the same moment.
        peak_metric = "memory_peak_bytes" if peak_is_window else "memory_peak_since_start_bytes"
        add(peak_metric.replace("_bytes", "_node_sum_bytes") if memory_total else peak_metric, a.memory_peak_bytes,
            "bytes", source)
        for event, (metric, unit, scale) in perf.EVENTS.items():
            reading = (perf_readings or {}).get(event)
            if reading is None:
                if self.under_valgrind:  # what callgrind does not count: not run, rather than unsupported
                    add(metric, None, unit, self.counter, valgrind.PERF_NOT_RUN)
                else:
                    add(metric, None, unit, "perf", self._perf_status if perf_readings is None else "unsupported")
            else:
                add(metric, reading.value * scale if reading.value is not None else None, unit, self.counter,
                    reading.status)


def wait_until_quiet(scope: cgroups.Scope, policy: SettlePolicy, t_start: float, cpu_start_ns: int,
                     threshold: float, max_seconds: float) -> str:
    """Poll `scope` until its CPU rate over the trailing `policy.quiet_seconds` is at most
    `threshold` cores ("quiet"), or until `max_seconds` after `t_start` ("max_seconds"). The rate
    needs that much history first, so a window never ends on one lucky poll."""
    history: list[tuple[float, int]] = [(t_start, cpu_start_ns)]
    while True:
        time.sleep(policy.poll_seconds)
        now = time.perf_counter()
        history.append((now, scope.cpu_ns() or 0))
        # Quiet is judged before the bound, so a bound equal to the quiet interval can still end on quiet.
        old = [h for h in history if now - h[0] >= policy.quiet_seconds]
        if old:
            t_old, cpu_old = old[-1]
            if (history[-1][1] - cpu_old) / 1e9 / (now - t_old) <= threshold:
                return "quiet"
        if now - t_start >= max_seconds:
            return "max_seconds"


# A virtual machine's steal time: CPU time its hypervisor gave other guests while this one had work,
# summed over every CPU. It sees a neighbour that takes CPU time; one that contends only for caches
# or memory bandwidth shows in the calibration loop alone (this host's 1.9x slow spell of half an
# hour came while its steal since boot totalled 507 s of 2 cores x 20 h: too little to explain it).
STEAL_SOURCE = "/proc/stat steal (all CPUs)"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def host_steal_ticks() -> int | None:
    """The host's steal time so far in clock ticks (the 8th field of /proc/stat's cpu line); None
    where the kernel does not report it."""
    try:
        with open("/proc/stat") as stat:
            fields = stat.readline().split()
        return int(fields[8]) if fields[0] == "cpu" and len(fields) > 8 else None
    except (OSError, ValueError):
        return None


def _delta(before: int | None, after: int | None, scale: float) -> float | None:
    if before is None or after is None:
        return None
    return (after - before) * scale


def _instructions(window: Window) -> float | None:
    """The window's instruction count, None where nothing counted it."""
    reading = (window.perf_readings or {}).get(valgrind.EVENT)
    return reading.value if reading is not None and reading.status == "ok" else None


def _cpu_seconds(before: cgroups.Sample, after: cgroups.Sample) -> float:
    return ((after.cpu_ns or 0) - (before.cpu_ns or 0)) / 1e9


def _reset_peak(scope: cgroups.Scope) -> bool:
    """cgroup v1 lets a peak be reset (write 0 to memory.max_usage_in_bytes); a cluster's, on
    every node."""
    if scope.kind == "cluster":
        return all([_reset_peak(node) for node in scope.nodes])
    if scope.kind != "cgroup" or not scope.memory_v1 or scope.memory_dir is None:
        return False
    try:
        (scope.memory_dir / "memory.max_usage_in_bytes").write_text("0")
        return True
    except OSError:
        return False
