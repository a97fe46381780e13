"""The engine catalog: one module per engine, one registry.

`ENGINES` holds each engine at its default version (what "all available" runs and what the full
lifecycle tests cover); `ALL_ENGINES` adds every declared `key@version`. `get_engine` accepts both."""
from __future__ import annotations

from ..errors import UnknownEngineError
from . import (cockroachdb, duckdb, ferretdb, mariadb, mariadb_myrocks, mongodb, mysql, oracle, postgres, rocksdb,
               sqlite, sqlserver, tidb, yugabytedb)
from .base import Credentials, Embedded, Engine, Recipe, Server, Version
from .clients import DocumentClient, Endpoint, KeyValueClient, Session, SqlClient

ENGINES: dict[str, Engine] = {m.ENGINE.key: m.ENGINE
                              for m in (postgres, mysql, mariadb, mariadb_myrocks, sqlite, duckdb, rocksdb, ferretdb,
                                         # seed 000's other engines: official images only
                                         mongodb, oracle, sqlserver, tidb, yugabytedb, cockroachdb)}
ALL_ENGINES: dict[str, Engine] = {
    **ENGINES, **{f"{e.key}@{v}": e.at(v) for e in ENGINES.values() for v in e.versions},
}


def get_engine(key: str) -> Engine:
    """The engine of `key` (`postgres`) or `key@version` (`postgres@15`)."""
    try:
        return ALL_ENGINES[key]
    except (KeyError, TypeError):
        pass
    name, at, version = key.partition("@") if isinstance(key, str) else (key, "", "")
    if at and name in ENGINES:
        return ENGINES[name].at(version)  # raises, naming the versions it has
    raise UnknownEngineError(f"unknown engine {key!r}; known engines: {', '.join(ENGINES)} (versions: "
                             f"{', '.join(k for k in ALL_ENGINES if '@' in k)})") from None


__all__ = ["ALL_ENGINES", "ENGINES", "Credentials", "DocumentClient", "Embedded", "Endpoint", "Engine", "Recipe",
           "Server", "Session", "SqlClient", "Version", "get_engine"]
