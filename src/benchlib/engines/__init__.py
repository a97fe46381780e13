"""The engine catalog: one module per engine, one registry."""
from __future__ import annotations

from ..errors import UnknownEngineError
from . import duckdb, mariadb, mysql, postgres, sqlite
from .base import Credentials, Embedded, Engine, Server
from .clients import DocumentClient, Endpoint, Session, SqlClient

ENGINES: dict[str, Engine] = {m.ENGINE.key: m.ENGINE for m in (postgres, mysql, mariadb, sqlite, duckdb)}


def get_engine(key: str) -> Engine:
    try:
        return ENGINES[key]
    except (KeyError, TypeError):
        raise UnknownEngineError(f"unknown engine {key!r}; known engines: {', '.join(ENGINES)}") from None


__all__ = ["ENGINES", "Credentials", "DocumentClient", "Embedded", "Endpoint", "Engine", "Server", "Session",
           "SqlClient", "get_engine"]
