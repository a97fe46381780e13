"""Parameter checks shared by notebooks and the CLI. Each error names the bad value, and all of
them run before any container starts."""
from __future__ import annotations

from typing import Any, Callable, Iterable

from ..engines import CLUSTERS, ENGINES, Engine, get_engine
from ..core.errors import EngineUnavailableError, ParameterError

ALL_AVAILABLE = "all available"
# {"all available except": [keys]}: every engine that can run but those, which a set leaves to
# another (01's extra set runs the engines its default set does not, without naming each one, so
# that seed 000's pull-only engines join it wherever their images can be pulled).
ALL_AVAILABLE_EXCEPT = "all available except"


def is_all_available(value: Any) -> bool:
    """"all available", or its mapping form with exceptions: the engines are chosen from the host."""
    return value == ALL_AVAILABLE or (isinstance(value, dict) and list(value) == [ALL_AVAILABLE_EXCEPT])


def _excepted(name: str, value: Any) -> list[str]:
    excepted = value[ALL_AVAILABLE_EXCEPT]
    if not isinstance(excepted, (list, tuple)) or not excepted or not all(isinstance(k, str) for k in excepted):
        raise ParameterError(f"{name}: {ALL_AVAILABLE_EXCEPT!r} takes a non-empty list of engine keys, got {excepted!r}")
    for key in excepted:
        get_engine(key)  # UnknownEngineError lists the known keys
    return list(excepted)


def require(params: dict[str, Any], names: Iterable[str], where: str, *, optional: Iterable[str] = ()) -> None:
    """Every parameter present (but the `optional` ones, which have a default) and none unknown:
    a typo must not silently fall back to a default."""
    names = list(names)
    missing = [n for n in names if n not in params and n not in set(optional)]
    unknown = sorted(set(params) - set(names))
    if missing or unknown:
        parts = ([f"missing {', '.join(missing)}"] if missing else []) + \
                ([f"unknown {', '.join(unknown)}"] if unknown else [])
        raise ParameterError(f"{where} parameters: {'; '.join(parts)}; expected: {', '.join(names)}")


def engine_settings(name: str, value: Any, engines: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Per-engine server settings ({"postgres": {"synchronous_commit": "off"}}), each for an engine
    that runs, checked against what the server accepts (its storage engines) before any start."""
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise ParameterError(f"{name} must map engine keys to settings, e.g. "
                             f"{{'postgres': {{'synchronous_commit': 'off'}}}}, got {value!r}")
    engines = list(engines)
    for key, settings in value.items():
        _among_running(name, "settings", key, engines, "engines")
        server = get_engine(key).server
        if server is None:
            raise ParameterError(f"{name}: {key} is embedded and takes no server settings")
        server.check_storage(settings)
    return {k: dict(v) for k, v in value.items()}


def engine_selection(value: Any, supports: Callable[[Engine], bool] = lambda engine: True,
                     workload: str = "this workload", *, clusters: bool = False,
                     name: str = "engines") -> tuple[list[str], dict[str, str]]:
    """Engines to run, and those skipped with their reason.

    An explicit list must name engines the workload supports and that can run here (else the
    error says why not); "all available" runs every engine that can, and reports the others as
    skipped with the reason, and {"all available except": [keys]} the same without those. Single-node engines and clusters are chosen apart (`clusters`): a
    cluster is asked for where a workload offers it (its `clusters` parameter), and an empty list
    of clusters runs none."""
    pool = CLUSTERS if clusters else ENGINES
    explicit = not is_all_available(value)
    if isinstance(value, str) and explicit:
        value = [value]
    excepted = _excepted(name, value) if isinstance(value, dict) and not explicit else []
    keys = [k for k in pool if k not in excepted] if not explicit else value
    if clusters and isinstance(keys, (list, tuple)) and not keys:
        return [], {}
    if not isinstance(keys, (list, tuple)) or not keys or not all(isinstance(k, str) for k in keys):
        what = "a list of cluster keys" if clusters else "a non-empty list of engine keys"
        raise ParameterError(f"{name} must be {what}, {ALL_AVAILABLE!r} or {{{ALL_AVAILABLE_EXCEPT!r}: [keys]}}, "
                             f"got {value!r}")
    for key in keys:
        engine = get_engine(key)  # UnknownEngineError lists the known keys
        if (engine.cluster is not None) != clusters:
            raise ParameterError(
                f"{name} lists {key!r}, a cluster: {workload} runs clusters only through its clusters parameter"
                if not clusters else f"{name} lists {key!r}, which is not a cluster (clusters: {', '.join(CLUSTERS)})")
    if len(set(keys)) != len(keys):
        raise ParameterError(f"{name} lists an engine twice: {keys!r}")
    skipped: dict[str, str] = {k: "left out by this parameter set" for k in excepted}

    def unsupported(key: str) -> str | None:
        return None if supports(get_engine(key)) else f"{workload} has no dialect for it"

    def refuse_unsupported(key: str, reason: str) -> Exception:
        supported = [k for k in pool if supports(get_engine(k))]
        return ParameterError(f"{workload} does not support engine {key!r}; it supports: {', '.join(supported)}")

    supported = keep_runnable(keys, unsupported, skipped, explicit=explicit, refuse=refuse_unsupported)
    runnable = keep_runnable(supported, unavailable_reason, skipped, explicit=explicit, refuse=lambda key, reason:
                             EngineUnavailableError(f"engine {key!r} cannot run on this host: {reason}"))
    if not runnable and not clusters:
        raise EngineUnavailableError(f"no engine can run on this host: {skipped}")
    return runnable, {k: skipped[k] for k in [*excepted, *keys] if k in skipped}


def keep_runnable(keys: Iterable[str], reason_not_to_run: Callable[[str], str | None], skipped: dict[str, str], *,
                  explicit: bool, refuse: Callable[[str, str], Exception]) -> list[str]:
    """The keys with no reason not to run. Another is refused when the user named it (`explicit`),
    else skipped with its reason (added to `skipped`)."""
    keep = []
    for key in keys:
        reason = reason_not_to_run(key)
        if reason is None:
            keep.append(key)
        elif explicit:
            raise refuse(key, reason)
        else:
            skipped[key] = reason
    return keep


def _among_running(name: str, what: str, key: str, running: list[str], kind: str) -> None:
    if key not in running:
        raise ParameterError(f"{name} has {what} for {key!r}, which is not among the {kind} that run "
                             f"({', '.join(running) or 'none'})")


def cluster_nodes(name: str, value: Any, clusters: Iterable[str]) -> dict[str, int]:
    """Node counts per cluster ({"mariadb-galera": 5}), each for a cluster that runs and within
    what its declaration allows; a cluster not named runs its declared count."""
    if not isinstance(value, dict):
        raise ParameterError(f"{name} must map cluster keys to node counts, e.g. {{'mariadb-galera': 3}}, got "
                             f"{value!r}")
    clusters = list(clusters)
    for key, nodes in value.items():
        _among_running(name, "a node count", key, clusters, "clusters")
        get_engine(key).cluster.check_nodes(key, nodes)
    return {k: int(v) for k, v in value.items()}


def unavailable_reason(key: str) -> str | None:
    engine = get_engine(key)
    if engine.server is None:
        from ..engines.clients import missing_modules

        missing = missing_modules(engine.client)
        return f"the Python module(s) {', '.join(missing)} it runs in are not installed" if missing else None
    from ..host.docker_host import docker_reachable
    from ..containers.images import availability

    ok, why = docker_reachable()
    if not ok:
        return why
    status = availability(engine)
    return status.detail if status.status == "unavailable" else None
