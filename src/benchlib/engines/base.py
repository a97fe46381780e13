"""What an engine module declares: how to start it and how to talk to it, as data.

    Engine(key, title, color, family, client=..., server=Server(...))    # a container
    Engine(key, title, color, family, client=..., embedded=Embedded(...)) # in this process

`family` names the dialect family workloads fall back to (the MySQL family shares one dialect:
MySQL, MariaDB, later TiDB). What differs per wire protocol lives in a client (`clients.py`),
never in `if engine == ...` branches; what a workload says to an engine lives in the workload."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .clients import Client


@dataclass(frozen=True)
class Credentials:
    user: str
    password: str
    database: str

    def __repr__(self) -> str:  # never print a password, not even in a traceback
        return f"Credentials(user={self.user!r}, password='***', database={self.database!r})"


@dataclass(frozen=True)
class Server:
    """A containerised engine: the official image's conventions, and an offline recipe."""

    official_image: str  # the default on hosts that can pull
    port: int
    env: Callable[[Credentials], dict[str, str]]  # the official image's env conventions
    user: str
    database: str = "bench"
    # Start command from the engine's configuration mapping; None keeps the image's own command.
    command: Callable[[Mapping[str, Any]], list[str] | None] = lambda config: None
    recipe: str | None = None  # folder under benchlib/recipes to build offline
    no_recipe_reason: str = ""
    startup_timeout: float = 90.0


@dataclass(frozen=True)
class Embedded:
    """An in-process engine: a library, a file in a fresh temporary folder."""

    library: Callable[[], str]  # "duckdb==2.0.0": what provenance calls the image
    file_name: str


@dataclass(frozen=True)
class Engine:
    key: str
    title: str
    color: str
    family: str  # dialect family: workloads look up `key`, then `family`
    client: Client
    server: Server | None = None
    embedded: Embedded | None = None
    report_note: str = ""  # what a reader of a report must know about this engine

    def __post_init__(self) -> None:
        if (self.server is None) == (self.embedded is None):
            raise ValueError(f"engine {self.key}: declare exactly one of server= or embedded=")

    @property
    def kind(self) -> str:
        return "server" if self.server is not None else "embedded"


def postgres_config_command(config: Mapping[str, Any]) -> list[str] | None:
    return ["postgres", *[a for k, v in config.items() for a in ("-c", f"{k}={v}")]] if config else None


def mysql_config_command(config: Mapping[str, Any]) -> list[str] | None:
    # Official mysql/mariadb entrypoints append arguments that start with '-' to the server.
    return [f"--{k.replace('_', '-')}={v}" for k, v in config.items()] or None

