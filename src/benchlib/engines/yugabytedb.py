"""YugabyteDB, one node started by `yugabyted start --background=false` (seed 000's command), over
the PostgreSQL wire protocol on 5433. yugabyted creates YSQL_USER/YSQL_PASSWORD/YSQL_DB and
enables password authentication when YSQL_PASSWORD is set. There is no Testcontainers module for
it in Python."""
from .base import Engine, OFFICIAL_ONLY_NO_VALGRIND, Server, Version
from .clients import postgres_wire


def _command(config):
    # yugabyted passes server flags through --tserver_flags="k=v,k=v".
    flags = ",".join(f"{k}={v}" for k, v in config.items())
    return ["bin/yugabyted", "start", "--background=false", *([f"--tserver_flags={flags}"] if flags else [])]


ENGINE = Engine(
    key="yugabytedb",
    title="YugabyteDB",
    color="#FF6E42",
    family="postgres",
    client=postgres_wire(),
    server=Server(
        port=5433,
        env=lambda c: {"YSQL_USER": c.user, "YSQL_PASSWORD": c.password, "YSQL_DB": c.database},
        user="yugabyte",
        versions=(Version("2024.1", "yugabytedb/yugabyte:2024.1.3.0-b105",
                          no_recipe_reason="neither Debian nor PyPI ships a YugabyteDB server"),),
        default="2024.1",
        config_command=_command,
        startup_timeout=180.0,  # a master and a tablet server, then the YSQL catalog
    ),
    note="YugabyteDB runs as one node (replication factor 1) with its default checksums; VACUUM is a no-op there, "
         "so the DML workload does not run it.",
    no_valgrind_reason=OFFICIAL_ONLY_NO_VALGRIND,
)
