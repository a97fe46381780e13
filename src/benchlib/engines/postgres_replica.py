"""PostgreSQL with a synchronous streaming replica: a primary and a hot standby copied from it
(`pg_basebackup`), the standby streaming the primary's WAL. `synchronous_commit = remote_apply`:
a commit returns once the standby has applied it, so a row committed on the primary is visible
on the standby at once. Clients write to `primary1`; `postgres-replica-async` is the same pair
without waiting for the standby.

Both nodes start from the `postgres` image (the official one, or the offline recipe's): the
commands below only use what both images have, so no recipe of its own is needed."""
from dataclasses import replace
from typing import Any, Mapping

from . import postgres
from .base import Cluster, Role, postgres_config_command

REPLICA_VERSION = "17"
HBA_FILE = "/tmp/benchlib_hba.conf"
# Password logins from the cluster's network, replication connections included (`all` in pg_hba
# does not match replication): written before the server starts, in both images.
_HBA = r"local all all trust\nhost all all all scram-sha-256\nhost replication all all scram-sha-256\n"


def _primary(node, config: Mapping[str, Any]) -> list[str]:
    return ["sh", "-c", f'printf "{_HBA}" > {HBA_FILE} && exec docker-entrypoint.sh "$@"', "sh",
            *postgres_config_command({**config, "hba_file": HBA_FILE})]


def _standby(node, config: Mapping[str, Any]) -> list[str]:
    # As the postgres user (Role.user): a copy of the primary, then the server on it. The
    # connection string -R writes for the standby carries the password and, through
    # cluster_name, its application name in pg_stat_replication.
    primary = node.names("primary")[0]
    script = (
        'set -e; PATH="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1):$PATH"; '
        'rm -rf "$PGDATA"/*; chmod 700 "$PGDATA"; '
        f'PGPASSWORD="$POSTGRES_PASSWORD" pg_basebackup -h {primary} -U "${{POSTGRES_USER:-postgres}}" '
        '-D "$PGDATA" -X stream -R --checkpoint=fast; '
        f'printf "{_HBA}" > {HBA_FILE}; '
        'exec postgres -D "$PGDATA" -c listen_addresses=\'*\' "$@"')
    return ["sh", "-c", script, "sh",
            *postgres_config_command({**config, "hba_file": HBA_FILE, "cluster_name": node.name})[1:]]


def replica_cluster(synchronous: bool) -> Cluster:
    # synchronous_standby_names is set once the standby streams: the official image's own set-up
    # (a temporary server creating the database) would otherwise wait for a standby for ever.
    sync = ("alter system set synchronous_standby_names = '*'", "alter system set synchronous_commit = 'remote_apply'",
            "select pg_reload_conf()")
    return Cluster(
        roles=(Role("primary", _primary, count=1), Role("standby", _standby, user="postgres")),
        nodes=2,
        min_nodes=2,
        min_reason="a primary and at least one standby",
        members="select count(*) from pg_stat_replication where state = 'streaming'"
                + (" and sync_state <> 'async'" if synchronous else ""),
        members_of="standby",
        formed=sync if synchronous else (),
        topology=("a commit returns once the standby has received, written and applied its WAL "
                  "(synchronous_commit = remote_apply); clients write to the primary" if synchronous else
                  "the standby streams the primary's WAL; a commit does not wait for it (asynchronous); clients write "
                  "to the primary"),
    )


_BASE = postgres.ENGINE.server.version(REPLICA_VERSION)

ENGINE = postgres.ENGINE.as_cluster(
    key="postgres-replica-sync",
    title="PostgreSQL + sync replica",
    color="#5B8DB8",
    server=replace(postgres.ENGINE.server, versions=(_BASE,), default=REPLICA_VERSION, socket_setting=None,
                   storage_engines=("heap",)),
    cluster=replica_cluster(synchronous=True),
    durability=(*postgres.ENGINE.durability, ("synchronous_standby_names", "show synchronous_standby_names"),
                ("standby sync_state", "select coalesce(string_agg(sync_state, ','), 'none') from pg_stat_replication")),
    note="PostgreSQL 17 primary and hot standby, each in its own container on one host; the standby is synchronous "
         "(remote_apply). The engine's CPU is the sum of both containers' cgroups; each node is also stored on its "
         "own.",
)
