"""Parameter checks shared by notebooks and the CLI. Each error names the bad value, and all of
them run before any container starts."""
from __future__ import annotations

from typing import Any, Callable, Iterable

from .engines import ENGINES, Engine, get_engine
from .errors import EngineUnavailableError, ParameterError

ALL_AVAILABLE = "all available"


def require(params: dict[str, Any], names: Iterable[str], where: str) -> None:
    """Every parameter present and none unknown: a typo must not silently fall back to a default."""
    names = list(names)
    missing = [n for n in names if n not in params]
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
        if key not in engines:
            raise ParameterError(f"{name} has settings for {key!r}, which is not among the engines that run "
                                 f"({', '.join(engines)})")
        server = get_engine(key).server
        if server is None:
            raise ParameterError(f"{name}: {key} is embedded and takes no server settings")
        server.check_storage(settings)
    return {k: dict(v) for k, v in value.items()}


def engine_selection(value: Any, supports: Callable[[Engine], bool] = lambda engine: True,
                     workload: str = "this workload") -> tuple[list[str], dict[str, str]]:
    """Engines to run, and those skipped with their reason.

    An explicit list must name engines the workload supports and that can run here (else the
    error says why not); "all available" runs every engine that can, and reports the others as
    skipped with the reason."""
    explicit = value != ALL_AVAILABLE
    if isinstance(value, str) and explicit:
        value = [value]
    keys = list(ENGINES) if not explicit else value
    if not isinstance(keys, (list, tuple)) or not keys or not all(isinstance(k, str) for k in keys):
        raise ParameterError(f"engines must be a non-empty list of engine keys or {ALL_AVAILABLE!r}, got {value!r}")
    for key in keys:
        get_engine(key)  # UnknownEngineError lists the known keys
    if len(set(keys)) != len(keys):
        raise ParameterError(f"engines lists an engine twice: {keys!r}")
    runnable, skipped = [], {}
    for key in keys:
        if not supports(get_engine(key)):
            if explicit:
                supported = [k for k in ENGINES if supports(get_engine(k))]
                raise ParameterError(f"{workload} does not support engine {key!r}; it supports: {', '.join(supported)}")
            skipped[key] = f"{workload} has no dialect for it"
            continue
        reason = unavailable_reason(key)
        if reason is None:
            runnable.append(key)
        elif explicit:
            raise EngineUnavailableError(f"engine {key!r} cannot run on this host: {reason}")
        else:
            skipped[key] = reason
    if not runnable:
        raise EngineUnavailableError(f"no engine can run on this host: {skipped}")
    return runnable, skipped


def unavailable_reason(key: str) -> str | None:
    engine = get_engine(key)
    if engine.server is None:
        return None
    from .docker_host import docker_reachable
    from .images import availability

    ok, why = docker_reachable()
    if not ok:
        return why
    status = availability(engine)
    return status.detail if status.status == "unavailable" else None
