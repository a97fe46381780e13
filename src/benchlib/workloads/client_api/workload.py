"""Seed 002, "Updated ODB benchmark results": what the layers between an object in the
application's memory and its row cost (ORM runtime, database API, transport). Per engine, layer
and transport, each operation on an object of 24 members (persist, load by id, update, erase) is
one measured window over `objects` objects, with the client process's CPU and the engine's
cgroup CPU in the same window; then seed 002's contended test with threads and with processes.
The statements are in `dialects`, the layers in `layers`, the contended test in `contended`."""
from __future__ import annotations

import numbers
from time import perf_counter
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ...engines import Engine, get_engine
from ...errors import ParameterError
from ...progress import Progress
from ...validation import engine_selection, positive_int, require
from .dialects import TABLE, dialect_for

if TYPE_CHECKING:  # the measurement stack loads pyarrow: not needed to validate parameters
    from ...measure import RunResult

EXPERIMENT = "client_api"
OPERATIONS = ("persist", "load", "update", "erase")  # layers.OPERATIONS, without importing SQLAlchemy
LAYER_NAMES = ("driver", "prepared", "core", "orm_object", "orm_batch")
TRANSPORTS = ("in-process", "tcp", "unix")
MODES = ("threads", "processes")
MAX_OBJECTS = 100_000
LOOP_TIME = "loop_time"  # the operations' own clock inside a window
HARNESS = "harness"
HARNESS_OPERATIONS = 10_000  # the empty operation's layer label
CONTENDED = "contended"
PARAMETERS = ("engines", "layers", "transports", "objects", "orm_batch_size", "repetitions", "contended_modes",
              "contended_workers", "contended_scale")
# A document-store layer (PyMongo) belongs here once the catalog has an engine speaking the MongoDB
# wire protocol; it has none yet.
NO_DOCUMENT_ENGINE = "no engine in the catalog speaks the MongoDB wire protocol (`benchlib engines`)"


@dataclass(frozen=True)
class ClientApiParams:
    engines: list[str]
    layers: list[str]
    transports: list[str]
    objects: int
    orm_batch_size: int
    repetitions: int
    contended_modes: list[str]
    contended_workers: int
    contended_scale: float
    skipped: dict[str, str] = field(default_factory=dict)

    def as_record(self) -> dict[str, Any]:
        return asdict(self)


def _names(name: str, value: Any, allowed: tuple[str, ...], *, empty_ok: bool = False) -> list[str]:
    if not isinstance(value, list) or (not value and not empty_ok) or not all(isinstance(v, str) for v in value):
        raise ParameterError(f"{name} must be a list of {', '.join(allowed)}; got {value!r}")
    for v in value:
        if v not in allowed:
            raise ParameterError(f"unknown {name[:-1]} {v!r}; {name} are: {', '.join(allowed)}")
    if len(set(value)) != len(value):
        raise ParameterError(f"{name} lists a value twice: {value!r}")
    return list(value)


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


def validate_parameters(params: dict[str, Any]) -> ClientApiParams:
    """Plain values first (nothing needs Docker to reject them), then engines and transports."""
    require(params, PARAMETERS, "client_api")
    layers = _names("layers", params["layers"], LAYER_NAMES)
    transports = _names("transports", params["transports"], TRANSPORTS)
    modes = _names("contended_modes", params["contended_modes"], MODES, empty_ok=True)
    scale = params["contended_scale"]
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real) or not scale > 0 or scale > 10:
        raise ParameterError(f"contended_scale must be a number > 0 and <= 10 (1 = seed 002's counts), got {scale!r}")
    objects = positive_int("objects", params["objects"])
    if objects > MAX_OBJECTS:
        raise ParameterError(f"objects must be at most {MAX_OBJECTS:,} (each layer's ids live in a range of that "
                             f"size), got {objects!r}")
    values = dict(objects=objects,
                  orm_batch_size=positive_int("orm_batch_size", params["orm_batch_size"]),
                  repetitions=positive_int("repetitions", params["repetitions"]),
                  contended_workers=positive_int("contended_workers", params["contended_workers"]))
    if isinstance(params["engines"], list):  # an explicit list: its transports are checked before Docker is asked
        for key in params["engines"]:
            if isinstance(key, str):
                get_engine(key)
                engine_transports(key, transports)
    runnable, skipped = engine_selection(params["engines"], supports,
                                         "the client_api workload")
    keep = []
    for key in runnable:
        try:
            engine_transports(key, transports)
            keep.append(key)
        except ParameterError as exc:  # "all available": an engine the transports exclude is skipped
            skipped[key] = str(exc)
    if not keep:
        raise ParameterError(f"no engine runs on transports {transports!r}: {skipped}")
    skipped["pymongo"] = NO_DOCUMENT_ENGINE
    return ClientApiParams(engines=keep, layers=layers, transports=transports, contended_modes=modes,
                           contended_scale=float(scale), skipped=skipped, **values)


def layer_skip_reason(key: str, layer: str) -> str | None:
    """Why `layer` does not run on `key` (None: it runs)."""
    dialect = dialect_for(get_engine(key))
    if layer == "prepared" and dialect is not None and dialect.prepare is None:
        return dialect.no_prepare_reason
    return None


def _steps(params: ClientApiParams) -> int:
    per_engine = 0
    for key in params.engines:
        runs = [layer for layer in params.layers if layer_skip_reason(key, layer) is None]
        per_engine += len(engine_transports(key, params.transports)) * (len(runs) * len(OPERATIONS) + 1)
    return params.repetitions * per_engine + len(params.engines) * len(params.contended_modes)


def measure_layers(meter, instance, params: ClientApiParams, transport: str, progress: Progress) -> None:
    """The empty operation, then every layer's four operations, one window each."""
    from .layers import LAYERS, EmptyLayer

    dialect = dialect_for(instance.engine)
    unix = transport == "unix"
    checks = instance.session(unix_socket=unix)
    n = params.objects
    rep = {"engine": instance.key, "repetition": meter.repetition, "repetitions": params.repetitions}

    def window(layer_name, layer, operation, ids_from, n=n):
        labels = {"layer": layer_name, "transport": transport, "objects": n}
        count = (lambda: float(checks.execute(f"select count(*) from {TABLE} where id >= {ids_from} and id < "
                                              f"{ids_from + n}")[0][0])) if layer_name != HARNESS else None
        expect = {"persist": n, "load": n, "update": n, "erase": 0}[operation] if count else None
        with progress.step(**rep, phase=f"{layer_name} {operation} ({transport})"):
            run = layer.run
            with meter.phase(operation, labels=labels, settle=False, check=count, expect=expect) as readings:
                # The loop's own clock: the window's wall time also holds its fixed cost (perf
                # enable/disable, cgroup reads), which the report gives separately.
                t0 = perf_counter()
                run(operation, objects[layer_name])
                readings.record(LOOP_TIME, perf_counter() - t0, "s", "clock")

    objects: dict[str, list] = {}
    empty = EmptyLayer(dialect, instance, unix, params.orm_batch_size)
    # Enough empty operations that the loop's start-up does not pass for a per-operation cost.
    objects[HARNESS] = empty.objects(list(range(HARNESS_OPERATIONS)))
    window(HARNESS, empty, "load", 0, n=HARNESS_OPERATIONS)
    for index, name in enumerate(params.layers):
        if layer_skip_reason(instance.key, name):
            continue
        ids_from = (index + 1) * 10 * MAX_OBJECTS + meter.repetition * MAX_OBJECTS
        ids_from += TRANSPORTS.index(transport) * 100 * MAX_OBJECTS
        layer = LAYERS[name](dialect, instance, unix, params.orm_batch_size)
        try:
            objects[name] = layer.objects(list(range(ids_from, ids_from + n)))
            for operation in OPERATIONS:
                window(name, layer, operation, ids_from)
        finally:
            layer.close()


def measure_contended(meter, instance, params: ClientApiParams, transport: str, progress: Progress) -> None:
    from ... import cgroups
    from . import contended

    dialect = dialect_for(instance.engine)
    inserts = contended.inserts_per_worker(params.contended_scale)
    endpoint = instance.socket_endpoint if transport == "unix" else instance.endpoint
    for mode in params.contended_modes:
        with progress.step(engine=instance.key, repetition=1, repetitions=1, phase=f"contended {mode}"):
            if mode == "processes" and dialect.processes_reason:
                continue  # the report's caveats give the reason
            # Forked workers are this process's children: their CPU is counted once they are joined.
            saved, meter.client = meter.client, (cgroups.children_scope() if mode == "processes" else meter.client)
            labels = {"layer": "driver", "transport": transport, "mode": mode, "workers": params.contended_workers,
                      "inserts_per_worker": inserts}
            try:
                with meter.phase(CONTENDED, labels=labels, settle=False) as readings:
                    seconds, results = contended.run(mode, instance.key, endpoint, dialect, params.contended_workers,
                                                     inserts)
                    readings.record("completion_time", seconds, "s", "clock")
                    for kind in contended.SEED_COUNTS:
                        readings.record(f"{kind}s", float(sum(r.operations[kind] for r in results)), "count",
                                        "workload")
                    for what in ("errors", "retries", "failed"):
                        readings.record(what, float(sum(getattr(r, what) for r in results)), "count", "workload")
            finally:
                meter.client = saved


def run_client_api(params: ClientApiParams, *, notebook: str | None = None, store=None) -> RunResult:
    """Per engine, one start (with a Unix socket when asked); per repetition and transport the
    layers' windows; then the contended test once per mode. An engine that fails is recorded
    and the others still run."""
    from ... import cgroups
    from ...lifecycle import start
    from ...measure import Run, RunResult

    progress = Progress(_steps(params), notebook=notebook, desc="client_api", unit="windows")
    with Run(EXPERIMENT, params.as_record(), notebook=notebook, store=store) as run, progress:
        for key in params.engines:
            transports = engine_transports(key, params.transports)
            done_before = progress.done
            try:
                with start(key, run_id=run.run_id, unix_socket="unix" in transports) as instance:
                    dialect = dialect_for(instance.engine)
                    instance.session().execute(dialect.create_table())
                    client = cgroups.process_scope() if instance.engine.server else None
                    meter = run.meter(instance, 1, client=client)
                    for repetition in range(1, params.repetitions + 1):
                        meter.repetition = repetition
                        for transport in transports:
                            measure_layers(meter, instance, params, transport, progress)
                    meter.repetition = 1
                    measure_contended(meter, instance, params, transports[0], progress)
            except Exception as exc:  # a start, driver or SQL error: keep the other engines going
                run.record_failure(key, exc)
                progress.skip(_steps_for(params, key) - (progress.done - done_before))
    return RunResult(run.run_id, params, dict(run.failures))


def _steps_for(params: ClientApiParams, key: str) -> int:
    return _steps(ClientApiParams(**{**params.as_record(), "engines": [key]}))
