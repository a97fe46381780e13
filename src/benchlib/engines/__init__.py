"""The engine catalog: one module per engine, one registry.

`ENGINES` holds each single-node engine at its default version (what "all available" runs and what
the full lifecycle tests cover); `CLUSTERS` each cluster engine (N containers as one instance,
asked for by name or through a workload's `clusters` choice); `ALL_ENGINES` adds every declared
`key@version`. `get_engine` accepts all of them."""
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


__all__ = ["ALL_ENGINES", "CLUSTERS", "ENGINES", "Cluster", "Credentials", "DocumentClient", "Embedded", "Endpoint",
           "Engine", "Node", "Recipe", "Role", "Server", "Session", "SqlClient", "UnderValgrind", "Version", "find_engine", "get_engine",
           "is_cluster", "is_server"]
