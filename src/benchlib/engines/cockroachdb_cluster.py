"""CockroachDB as three nodes (seed 000 ran one): `cockroach start --join` on each, then
`cockroach init` once all run; replication factor 3, so every write is a Raft round among three
replicas. Insecure mode as the single node (no authentication, 127.0.0.1 only). Official image
only: where it cannot be pulled, the cluster is reported unavailable like the single node."""
from . import cockroachdb
from .base import Cluster, Role


def _node(node, config):
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in config.items()]
    return ["start", "--insecure", f"--join={','.join(node.names())}", f"--advertise-addr={node.name}", *flags]


ENGINE = cockroachdb.ENGINE.as_cluster(
    key="cockroachdb-cluster",
    title="CockroachDB (3 nodes)",
    color="#9F7BFF",
    startup_timeout=180.0,
    cluster=Cluster(
        roles=(Role("node", _node),),
        nodes=3,
        min_nodes=3,
        min_reason="its default replication factor is 3: fewer nodes leave every range under-replicated",
        members="select count(*) from crdb_internal.gossip_liveness where not draining and membership = 'active'",
        init=lambda nodes: ["cockroach", "init", "--insecure", f"--host={nodes[0].name}"],
        topology="every write is proposed to its range's Raft group (3 replicas) and commits once a majority has "
                 "it; intents are resolved after the commit",
    ),
    note="CockroachDB as a 3-node cluster in insecure mode (no authentication, 127.0.0.1 only), one container per "
         "node; the engine's CPU is the sum of the nodes' cgroups.",
)
