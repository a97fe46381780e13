"""Wire families: how to connect and pass configuration, shared by every engine of a protocol."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping


def _connect_postgres(host: str, port: int, user: str, password: str, database: str, timeout: float) -> Any:
    import psycopg

    return psycopg.connect(
        host=host, port=port, user=user, password=password, dbname=database,
        autocommit=True, connect_timeout=max(1, int(timeout)),
    )


def _connect_mysql(host: str, port: int, user: str, password: str, database: str, timeout: float) -> Any:
    import pymysql

    return pymysql.connect(
        host=host, port=port, user=user, password=password, database=database,
        autocommit=True, connect_timeout=max(1, int(timeout)),
    )


@dataclass(frozen=True)
class Family:
    name: str
    sqlalchemy_driver: str
    connect: Callable[..., Any]
    config_command: Callable[[Mapping[str, Any]], list[str]]


POSTGRES = Family(
    name="postgres",
    sqlalchemy_driver="postgresql+psycopg",
    connect=_connect_postgres,
    config_command=lambda cfg: ["postgres", *[a for k, v in cfg.items() for a in ("-c", f"{k}={v}")]],
)

MYSQL = Family(
    name="mysql",
    sqlalchemy_driver="mysql+pymysql",
    connect=_connect_mysql,
    # Official mysql/mariadb entrypoints append arguments that start with '-' to the server.
    config_command=lambda cfg: [f"--{k.replace('_', '-')}={v}" for k, v in cfg.items()],
)
