from .base import DmlDialect, ServerEngine
from .families import POSTGRES

ENGINE = ServerEngine(
    key="postgres",
    title="PostgreSQL",
    family=POSTGRES,
    official_image="postgres:17",
    port=5432,
    env=lambda c: {"POSTGRES_PASSWORD": c.password, "POSTGRES_USER": c.user, "POSTGRES_DB": c.database},
    user="postgres",
    database="bench",
    version_query="select version()",
    recipe="postgres",
    color="#336791",
    dml=DmlDialect(
        pk_columns={
            "uuid": "id uuid default gen_random_uuid()",
            "sequential": "id bigint generated always as identity",
        },
        generate_rows=lambda n: f"insert into demo(value) select generate_series(1, {n})",
        sleep=lambda s: f"select pg_sleep({s})",
        # Seed 000 runs VACUUM after each DML phase: without it the cost of cleaning up dead
        # tuples is deferred to autovacuum and missing from the phase.
        vacuum="vacuum",
    ),
)
