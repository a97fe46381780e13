"""What an engine module declares. Engines are data: image, env, port, readiness, version
query and the SQL dialect pieces workloads need. Code that differs per wire protocol lives in
`families`, never in `if engine == ...` branches."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from .families import Family

PK_KINDS = ("uuid", "sequential")


@dataclass(frozen=True)
class DmlDialect:
    """SQL of the seed-000 workload: create `demo`, generate rows server-side, sleep, maintain."""

    pk_columns: Mapping[str, str]  # pk kind -> column definition of `id` (without PRIMARY KEY)
    generate_rows: Callable[[int], str]  # inserts n generated rows into demo(value)
    sleep: Callable[[float], str] | None  # server-side sleep; None: the client sleeps
    vacuum: str | None = None  # maintenance the article runs after each DML phase
    delete_all: str = "delete from demo"
    pre_create: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def create_statements(self, pk_kind: str) -> list[str]:
        return [
            *self.pre_create.get(pk_kind, ()),
            f"create table demo ({self.pk_columns[pk_kind]} primary key, value float)",
        ]


@dataclass(frozen=True)
class Credentials:
    user: str
    password: str
    database: str

    def __repr__(self) -> str:  # never print a password, not even in a traceback
        return f"Credentials(user={self.user!r}, password='***', database={self.database!r})"


@dataclass(frozen=True)
class ServerEngine:
    key: str
    title: str
    family: Family
    official_image: str  # the default on hosts that can pull
    port: int
    env: Callable[[Credentials], dict[str, str]]  # the official image's env conventions
    user: str
    database: str
    version_query: str
    dml: DmlDialect
    color: str
    recipe: str | None = None  # folder under benchlib/recipes to build offline
    no_recipe_reason: str = ""
    ready_query: str = "select 1"
    startup_timeout: float = 90.0
    report_note: str = ""  # what a reader of a report must know about this engine
    kind: str = "server"

    def command(self, config: Mapping[str, Any]) -> list[str] | None:
        return self.family.config_command(config) if config else None


@dataclass(frozen=True)
class EmbeddedEngine:
    key: str
    title: str
    connect: Callable[[Path], Any]  # DB-API connection in autocommit mode
    version_query: str
    library: Callable[[], str]  # "duckdb==2.0.0": what provenance calls the image
    dml: DmlDialect
    color: str
    file_name: str = "bench.db"
    # Wraps a connection from `connect` for SQLAlchemy when its dialect cannot open the file
    # itself beside our connections (DuckDB refuses a second configuration of an open file).
    sqlalchemy_wrap: Callable[[Any], Any] | None = None
    report_note: str = ""
    kind: str = "embedded"
    family_name: str = "embedded"


Engine = ServerEngine | EmbeddedEngine


def family_name(engine: Engine) -> str:
    return engine.family.name if isinstance(engine, ServerEngine) else engine.family_name
