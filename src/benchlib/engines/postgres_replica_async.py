"""The PostgreSQL primary and streaming standby of `postgres-replica-sync`, asynchronous: a commit
returns once the primary's WAL is flushed, without waiting for the standby. The contrast that
shows what waiting for the standby costs."""
from dataclasses import replace

from . import postgres_replica

ENGINE = replace(
    postgres_replica.ENGINE,
    key="postgres-replica-async",
    title="PostgreSQL + async replica",
    color="#9DBAD5",
    cluster=postgres_replica.replica_cluster(synchronous=False),
    note="PostgreSQL 17 primary and hot standby, each in its own container on one host; the standby is "
         "asynchronous: commits do not wait for it, so a row may reach it after its statement returned. The "
         "engine's CPU is the sum of both containers' cgroups; each node is also stored on its own.",
)
