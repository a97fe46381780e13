"""YugabyteDB as three nodes (seed 000 ran one): `yugabyted start` on the first node, then
`yugabyted start --join` on the others, each after the one before it answers; replication
factor 3 once three nodes run. Official image only: where it cannot be pulled, the cluster is
reported unavailable like the single node."""
from . import yugabytedb
from .base import Cluster, Role


def _node(node, config):
    flags = ",".join(f"{k}={v}" for k, v in config.items())
    return ["bin/yugabyted", "start", "--background=false", f"--advertise_address={node.name}",
            *([] if node.first else [f"--join={node.names()[0]}"]),
            *([f"--tserver_flags={flags}"] if flags else [])]


ENGINE = yugabytedb.ENGINE.as_cluster(
    key="yugabytedb-cluster",
    title="YugabyteDB (3 nodes)",
    color="#FFA384",
    startup_timeout=300.0,
    cluster=Cluster(
        roles=(Role("node", _node),),
        nodes=3,
        min_nodes=3,
        min_reason="replication factor 3 needs three nodes",
        members="select count(*) from yb_servers()",
        topology="every write is replicated through its tablet's Raft group (3 replicas) and commits once a majority "
                 "has it",
    ),
    note="YugabyteDB as a 3-node cluster (replication factor 3), one container per node; the engine's CPU is the "
         "sum of the nodes' cgroups.",
)
