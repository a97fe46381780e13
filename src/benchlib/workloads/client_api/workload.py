"""Seed 002, "Updated ODB benchmark results": what the layers between an object in the
application's memory and its row cost (ORM runtime, database API, transport). Per engine, layer
and transport, each operation on an object of 24 members (persist, load by id, update, erase) is
one measured window over `objects` objects, with the client process's CPU and the engine's
cgroup CPU in the same window; then seed 002's contended test with threads and with processes.
The statements are in `dialects`, the layers in `layers`, the contended test in `contended`."""
from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter
from typing import Any

from ...host import cgroups
from ...run.driver import EngineStart, PerOperation, StartContext, Step, StepContext, Workload
from ...engines import Engine, get_engine
from ...core.errors import ParameterError
from ...run.parameters import RunParameters, names, number, param, positive_int
from .dialects import TABLE, dialect_for

EXPERIMENT = "client_api"
OPERATIONS = ("persist", "load", "update", "erase")  # layers.OPERATIONS, without importing SQLAlchemy
LAYER_NAMES = ("driver", "prepared", "c_driver", "c_prepared", "core", "orm_object", "orm_batch")
TRANSPORTS = ("in-process", "tcp", "unix")
MODES = ("threads", "processes")
MAX_OBJECTS = 100_000
LOOP_TIME = "loop_time"  # the operations' own clock inside a window
HARNESS = "harness"
HARNESS_OPERATIONS = 10_000  # the empty operation's layer label
CONTENDED = "contended"


def engine_transports(key: str | Engine, transports: list[str]) -> list[str]:
    """The transports an engine runs of those asked for. Embedded engines run in-process; a
    server runs every server transport asked for, and asking one for a Unix socket it lacks is an
    error."""
    engine = key if isinstance(key, Engine) else get_engine(key)
    key = engine.key
    if engine.server is None:
        if "in-process" not in transports:
            raise ParameterError(f"{key} runs in-process only; transports {transports!r} give it nothing to run "
                                 "(add 'in-process')")
        return ["in-process"]
    wanted = [t for t in transports if t != "in-process"]
    if not wanted:
        raise ParameterError(f"{key} is a server: transports {transports!r} give it nothing to run (add 'tcp' or "
                             "'unix')")
    if "unix" in wanted and engine.server.socket_setting is None:
        raise ParameterError(f"transport 'unix' asked for {key}, which has no Unix socket setting")
    return wanted


def supports(engine) -> bool:
    """Engines with a dialect for this workload."""
    return dialect_for(engine) is not None


@dataclass(frozen=True, kw_only=True)
class ClientApiParams(RunParameters):
    WORKLOAD = "client_api"
    layers: list[str] = param(names(LAYER_NAMES), "layers between the object and its row")
    transports: list[str] = param(names(TRANSPORTS), "in-process (embedded), tcp and unix (servers)")
    objects: int = param(positive_int(maximum=MAX_OBJECTS), "objects per measured window")
    orm_batch_size: int = param(positive_int(), "objects per Session in orm_batch")
    contended_modes: list[str] = param(names(MODES, empty_ok=True), "the contended test's modes; [] skips it")
    contended_workers: int = param(positive_int(), "seed 002: 32 threads")
    contended_scale: float = param(number(above=True, maximum=10), "share of seed 002's counts (1 = the seed's)")

    supports = staticmethod(supports)

    @classmethod
    def check_plain(cls, checked: dict[str, Any], values: dict[str, Any]) -> None:
        if isinstance(values["engines"], list):  # an explicit list: its transports checked before Docker is asked
            for key in values["engines"]:
                if isinstance(key, str):
                    engine_transports(key, checked["transports"])  # an unknown key lists the known ones

    @classmethod
    def narrow_engines(cls, runnable, skipped, checked, *, explicit: bool) -> list[str]:
        """A server asked for in-process only (or an embedded engine over TCP) has nothing to run:
        named, it fails; from "all available", it is skipped."""
        keep = []
        for key in runnable:
            try:
                engine_transports(key, checked["transports"])
                keep.append(key)
            except ParameterError as exc:
                if explicit:
                    raise
                skipped[key] = str(exc)
        return keep


def layer_skip_reason(key: str, layer: str) -> str | None:
    """Why `layer` does not run on `key` (None: it runs)."""
    dialect = dialect_for(get_engine(key))
    if dialect is None:
        return None
    if layer == "prepared" and dialect.prepare is None:
        return dialect.no_prepare_reason
    if layer in ("c_driver", "c_prepared"):
        if dialect.c_driver is None:
            return dialect.no_c_driver_reason
        return dialect.c_driver.available()
    return None


class ClientApi(Workload):
    """Per engine one start (with a Unix socket when asked); per repetition and transport the
    layers' windows; after the base repetitions the contended test once per mode (repetitions
    added for precision come after it)."""

    experiment = EXPERIMENT
    Params = ClientApiParams
    unit = "layer blocks"
    fresh_start_per_repetition = False
    per_operation = PerOperation("label", "objects", "object")


    def starts(self, params: ClientApiParams) -> list[EngineStart]:
        # perf only where it counts hardware events: its -a -G makes every context switch dearer,
        # and a window here is microseconds per round trip.
        return [EngineStart(key, unix_socket="unix" in engine_transports(key, params.transports),
                            perf_only_for_hardware=True) for key in params.engines]

    def steps(self, params: ClientApiParams, start: EngineStart, repetition: int) -> list[Step]:
        transports = engine_transports(start.engine, params.transports)
        steps = []
        for transport in transports:
            steps.append(Step(f"{HARNESS} ({transport})", ("layer", transport, HARNESS)))
            steps += [Step(f"{name} ({transport})", ("layer", transport, name)) for name in params.layers
                      if layer_skip_reason(start.engine, name) is None]
        if repetition == params.repetitions:  # after the base repetitions, as before; extra ones follow it
            steps += [Step(f"contended {mode}", ("contended", transports[0], mode)) for mode in params.contended_modes
                      if not (mode == "processes" and dialect_for(get_engine(start.engine)).processes_reason)]
        return steps

    def prepare(self, ctx: StartContext) -> None:
        ctx.instance.session().execute(dialect_for(ctx.instance.engine).create_table())

    def measure(self, ctx: StepContext, step: Step) -> None:
        what, transport, name = step.data
        if what == "contended":
            _contended(ctx, transport, name)
        else:
            _layer(ctx, transport, name)


def _layer(ctx: StepContext, transport: str, name: str) -> None:
    """One layer's four operations on `objects` objects, one window each (the empty operation:
    one window of HARNESS_OPERATIONS loads)."""
    from .layers import LAYERS, EmptyLayer

    params, instance = ctx.params, ctx.instance
    dialect = dialect_for(instance.engine)
    unix = transport == "unix"
    if ("checks", transport) not in ctx.state:
        ctx.state[("checks", transport)] = instance.session(unix_socket=unix)
    checks = ctx.state[("checks", transport)]
    if name == HARNESS:
        layer, n, ids_from, operations = EmptyLayer(dialect, instance, unix, params.orm_batch_size), \
            HARNESS_OPERATIONS, 0, ("load",)
    else:
        layer, n, operations = LAYERS[name](dialect, instance, unix, params.orm_batch_size), params.objects, OPERATIONS
        ids_from = (LAYER_NAMES.index(name) + 1) * 10 * MAX_OBJECTS + ctx.repetition * MAX_OBJECTS
        ids_from += TRANSPORTS.index(transport) * 100 * MAX_OBJECTS
    try:
        objects = layer.objects(list(range(ids_from, ids_from + n)))
        for operation in operations:
            labels = {"layer": name, "transport": transport, "objects": n}
            count = (lambda: float(checks.execute(f"select count(*) from {TABLE} where id >= {ids_from} and id < "
                                                  f"{ids_from + n}")[0][0])) if name != HARNESS else None
            expect = {"persist": n, "load": n, "update": n, "erase": 0}[operation] if count else None
            with ctx.phase(operation, labels=labels, settle=False, check=count, expect=expect) as readings:
                # The loop's own clock: the window's wall time also holds its fixed cost (perf
                # enable/disable, cgroup reads), which the report gives separately.
                t0 = perf_counter()
                layer.run(operation, objects)
                readings.record(LOOP_TIME, perf_counter() - t0, "s", "clock")
    finally:
        if name != HARNESS:
            layer.close()


def _contended(ctx: StepContext, transport: str, mode: str) -> None:
    from . import contended

    params, instance = ctx.params, ctx.instance
    dialect = dialect_for(instance.engine)
    inserts = contended.inserts_per_worker(params.contended_scale)
    endpoint = instance.socket_endpoint if transport == "unix" else instance.endpoint
    labels = {"layer": "driver", "transport": transport, "mode": mode, "workers": params.contended_workers,
              "inserts_per_worker": inserts}
    # Forked workers are this process's children: their CPU is counted once they are joined.
    client = cgroups.children_scope() if mode == "processes" else "meter"
    with contended.connected(mode, instance.key, endpoint, dialect, params.contended_workers, inserts) as go, \
            ctx.phase(CONTENDED, labels=labels, settle=False, client=client) as readings:
        seconds, results = go()
        readings.record("completion_time", seconds, "s", "clock")
        for kind in contended.SEED_COUNTS:
            readings.record(f"{kind}s", float(sum(r.operations[kind] for r in results)), "count", "workload")
        for what in ("errors", "retries", "failed"):
            readings.record(what, float(sum(getattr(r, what) for r in results)), "count", "workload")


WORKLOAD = ClientApi()
validate_parameters = WORKLOAD.validate_parameters
PARAMETERS = ClientApiParams.declared()
run = WORKLOAD.run
