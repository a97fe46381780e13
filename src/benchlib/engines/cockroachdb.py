"""CockroachDB, one node from the official image, over the PostgreSQL wire protocol.

Runs without authentication: `start-single-node --insecure`, as seed 000 ran it (root, no password,
no TLS; the port is published on 127.0.0.1 only). Testcontainers' CockroachDB module runs secure
mode with COCKROACH_USER/COCKROACH_PASSWORD instead, which adds TLS to every connection: not what
the article measured. Not used as a module: our lifecycle already starts a testcontainers
DockerContainer from these declarations (loopback port, labels, readiness through the client)."""
from .base import Engine, OFFICIAL_ONLY_NO_VALGRIND, Server, Version
from .clients import postgres_wire


def _command(config):
    # Node flags (`--cache=.25`, `--max-sql-memory=.25`) after the start command; cluster
    # settings are SQL (`set cluster setting`), not flags.
    return ["start-single-node", "--insecure", *[f"--{k.replace('_', '-')}={v}" for k, v in config.items()]]


ENGINE = Engine(
    key="cockroachdb",
    title="CockroachDB",
    color="#6933FF",
    family="postgres",
    client=postgres_wire(),
    server=Server(
        port=26257,
        env=lambda c: {"COCKROACH_DATABASE": c.database},  # insecure mode: no user or password to set
        user="root",
        versions=(Version("24.1", "cockroachdb/cockroach:latest-v24.1",
                          no_recipe_reason="neither Debian nor PyPI ships a CockroachDB server"),),
        default="24.1",
        database="defaultdb",
        config_command=_command,
    ),
    note="CockroachDB runs in insecure mode, without authentication (no password, no TLS; 127.0.0.1 only), "
         "one node: its Raft replication and distributed transactions run, with one replica.",
    no_valgrind_reason=OFFICIAL_ONLY_NO_VALGRIND,
)
