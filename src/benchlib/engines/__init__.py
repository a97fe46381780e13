"""The engine catalog: one module per engine, one registry.

`ENGINES` holds each single-node engine at its default version (what "all available" runs and what
the full lifecycle tests cover); `CLUSTERS` each cluster engine (N containers as one instance,
asked for by name or through a workload's `clusters` choice); `ALL_ENGINES` adds every declared
`key@version`. `get_engine` accepts all of them; `engine_title`, `engine_color` and
`engine_order` name, colour and order any key, declared or not.

A layer low in the stack: engines are data (and gobuild the Go builds a recipe copies in), so
the catalog imports only benchlib.core; counters, containers, data and every layer above read it."""
from __future__ import annotations

from ..core.errors import UnknownEngineError
from . import (chdb, cockroachdb, cockroachdb_cluster, duckdb, ferretdb, mariadb, mariadb_galera, mariadb_myrocks, mongodb,
               mysql, mysql_group_replication, oracle, postgres, postgres_replica, postgres_replica_async, rocksdb,
               sqlite, sqlserver, tidb, tidb_cluster, yugabytedb, yugabytedb_cluster)
from .base import Cluster, Credentials, Embedded, Engine, Node, Recipe, Role, Server, UnderValgrind, Version
from .clients import DocumentClient, Endpoint, KeyValueClient, Session, SqlClient

ENGINES: dict[str, Engine] = {m.ENGINE.key: m.ENGINE
                              for m in (postgres, mysql, mariadb, mariadb_myrocks, sqlite, duckdb, chdb, rocksdb, ferretdb,
                                         # seed 000's other engines: official images only
                                         mongodb, oracle, sqlserver, tidb, yugabytedb, cockroachdb)}
CLUSTERS: dict[str, Engine] = {m.ENGINE.key: m.ENGINE
                               for m in (mariadb_galera, postgres_replica, postgres_replica_async,
                                         mysql_group_replication,
                                         # seed 000's distributed engines as clusters: official images only
                                         cockroachdb_cluster, yugabytedb_cluster, tidb_cluster)}
ALL_ENGINES: dict[str, Engine] = {
    **ENGINES, **CLUSTERS,
    **{f"{e.key}@{v}": e.at(v) for e in (*ENGINES.values(), *CLUSTERS.values()) for v in e.versions},
}


def get_engine(key: str) -> Engine:
    """The engine of `key` (`postgres`) or `key@version` (`postgres@15`)."""
    try:
        return ALL_ENGINES[key]
    except (KeyError, TypeError):
        pass
    name, at, version = key.partition("@") if isinstance(key, str) else (key, "", "")
    known = {**ENGINES, **CLUSTERS}
    if at and name in known:
        return known[name].at(version)  # raises, naming the versions it has
    raise UnknownEngineError(f"unknown engine {key!r}; known engines: {', '.join(ENGINES)}; clusters: "
                             f"{', '.join(CLUSTERS)} (versions: {', '.join(k for k in ALL_ENGINES if '@' in k)})") from None


def find_engine(key: str) -> Engine | None:
    """The engine of `key`, or None where this benchlib declares none (a stored run's engine that
    a later benchlib dropped, a reference-only row)."""
    try:
        return get_engine(key)
    except UnknownEngineError:
        return None


def is_server(key: str) -> bool:
    """A containerised engine, single node or cluster (its driver is measured apart)."""
    engine = find_engine(key)
    return engine is not None and engine.server is not None


def is_cluster(key: str) -> bool:
    engine = find_engine(key)
    return engine is not None and engine.cluster is not None


# Engines a reference article measured that benchlib has no module for (MariaDB Xpand, a cloud
# service): drawn beside the modules' own, which come last so a module always wins.
REFERENCE_ENGINES = {"xpand": ("MariaDB Xpand", "#7B3F00")}
_DECLARED = {**ENGINES, **CLUSTERS}
ENGINE_COLORS = {**{k: c for k, (_, c) in REFERENCE_ENGINES.items()}, **{k: e.color for k, e in _DECLARED.items()}}
ENGINE_TITLES = {**{k: t for k, (t, _) in REFERENCE_ENGINES.items()}, **{k: e.title for k, e in _DECLARED.items()}}
# For keys nobody declared (an engine imported from another store, say): still drawn, in a
# colour fixed by the key so it is the same in every figure.
_FALLBACK_COLORS = ("#8C564B", "#E377C2", "#7F7F7F", "#17BECF", "#BCBD22", "#9467BD")


def engine_color(key: str) -> str:
    """Versions share their engine's colour: `postgres@15` is drawn as `postgres`."""
    name = key.partition("@")[0]
    if name in ENGINE_COLORS:
        return ENGINE_COLORS[name]
    return _FALLBACK_COLORS[sum(name.encode()) % len(_FALLBACK_COLORS)]


def engine_order(keys) -> list[str]:
    """Engines in catalog order, then any others in the order given."""
    keys = list(dict.fromkeys(keys))
    return [e for e in ENGINE_COLORS if e in keys] + [e for e in keys if e not in ENGINE_COLORS]


def engine_title(key: str) -> str:
    name, at, version = key.partition("@")
    return f"{ENGINE_TITLES[name]} {version}" if at and name in ENGINE_TITLES else ENGINE_TITLES.get(key, key)


__all__ = ["ALL_ENGINES", "CLUSTERS", "ENGINES", "Cluster", "Credentials", "DocumentClient", "Embedded", "Endpoint",
           "Engine", "Node", "Recipe", "Role", "Server", "Session", "SqlClient", "UnderValgrind", "Version", "ENGINE_COLORS",
           "ENGINE_TITLES", "REFERENCE_ENGINES", "engine_color", "engine_order", "engine_title", "find_engine", "get_engine",
           "is_cluster", "is_server"]
