"""What seed 000's DML workload says to each engine. Looked up by engine key, then without its
version (`postgres@15` -> `postgres`), then the engine it is a variant of (`mariadb-myrocks` ->
`mariadb`), then the dialect family: MySQL and MariaDB share the MySQL family's statements and
override only what differs."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

from ...engines import Engine

PK_KINDS = ("uuid", "sequential")


@dataclass(frozen=True)
class DmlDialect:
    """Named operations of the workload. SQL engines take SQL text; `scalar` reads one number
    out of an operation's result."""

    pk_columns: Mapping[str, str]  # pk kind -> column definition of `id` (without PRIMARY KEY)
    insert_generated: Callable[[int], Any]  # inserts n rows generated server-side into demo(value)
    sleep: Callable[[float], Any] | None  # server-side sleep; None: the client sleeps
    maintain: Any = None  # maintenance seed 000 runs after each DML phase (PostgreSQL's VACUUM)
    update_all: Any = "update demo set value = value + 1"
    count_values: Any = "select count(value) from demo"
    count_rows: Any = "select count(*) from demo"
    delete_all: Any = "delete from demo"
    pre_create: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    scalar: Callable[[Any], float] = lambda rows: float(rows[0][0])

    def create(self, pk_kind: str) -> list[Any]:
        return [*self.pre_create.get(pk_kind, ()),
                f"create table demo ({self.pk_columns[pk_kind]} primary key, value float)"]


def digits_cross_join_insert(n: int) -> str:
    """MySQL-family row generator from seed 000: a cross join of digit tables.

    MySQL caps recursive CTEs at 1000 iterations by default, so the article crosses a 10-row CTE
    with itself; we take just enough digit columns for n rows."""
    width = max(1, len(str(max(n - 1, 0))))
    digits = " union all ".join(f"select {d}" for d in range(1, 10))
    tables = ", ".join(f"x x{i}" for i in range(width))
    number = " + ".join(f"{10 ** i} * x{i}.x" if i else "x0.x" for i in range(width))
    return (f"insert into demo(value) with x as (select 0 as x union all {digits}) "
            f"select {number} + 1 from {tables} limit {n}")


POSTGRES = DmlDialect(
    pk_columns={"uuid": "id uuid default gen_random_uuid()", "sequential": "id bigint generated always as identity"},
    insert_generated=lambda n: f"insert into demo(value) select generate_series(1, {n})",
    sleep=lambda s: f"select pg_sleep({s})",
    # Seed 000 runs VACUUM after each DML phase: without it the cost of cleaning up dead tuples is
    # deferred to autovacuum and missing from the phase.
    maintain="vacuum",
)

MYSQL = DmlDialect(
    pk_columns={"uuid": "id binary(16) default (uuid_to_bin(uuid()))", "sequential": "id bigint auto_increment"},
    insert_generated=digits_cross_join_insert,
    sleep=lambda s: f"do sleep({s})",
)

DIALECTS: dict[str, DmlDialect] = {
    "postgres": POSTGRES,
    "mysql": MYSQL,
    # MariaDB has no UUID_TO_BIN; this is the same 16 bytes as MySQL's default.
    "mariadb": replace(MYSQL, pk_columns={**MYSQL.pk_columns,
                                          "uuid": "id binary(16) default (unhex(replace(uuid(), '-', '')))"}),
    "sqlite": DmlDialect(
        pk_columns={"uuid": "id blob default (randomblob(16))", "sequential": "id integer"},
        insert_generated=lambda n: ("insert into demo(value) with recursive s(n) as "
                                    f"(select 1 union all select n + 1 from s where n < {n}) select n from s"),
        sleep=None,
        # A plain `delete from demo` takes SQLite's truncate shortcut (drops the pages without
        # visiting rows); the WHERE clause makes it delete row by row like every other engine.
        delete_all="delete from demo where id is not null",
    ),
    "duckdb": DmlDialect(
        pk_columns={"uuid": "id uuid default gen_random_uuid()", "sequential": "id bigint default nextval('demo_id_seq')"},
        pre_create={"sequential": ("create sequence demo_id_seq",)},
        insert_generated=lambda n: f"insert into demo(value) select range from range(1, {n} + 1)",
        sleep=None,
    ),
}

# What a reader of a DML report must know about an engine's statements.
NOTES = {
    "sqlite": "The delete phase has a WHERE clause so SQLite deletes row by row instead of taking its truncate "
              "shortcut.",
}


def dialect_for(engine: Engine) -> DmlDialect | None:
    return next((DIALECTS[k] for k in engine.lookup_keys if k in DIALECTS), None)
