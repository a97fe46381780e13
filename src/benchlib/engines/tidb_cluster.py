"""TiDB as seed 000 ran it (`tiup playground`): a placement driver (PD), three TiKV stores (the
Raft-replicated storage) and one tidb-server (the SQL layer) clients connect to; each write is a
Raft round among three TiKV replicas. Three images, all official: where they cannot be pulled the
cluster is reported unavailable like the single node (which runs tidb-server alone on unistore)."""

from . import tidb
from .base import Cluster, Role

TAG = "v8.5.1"


def _pd(node, config):
    url = f"http://{node.name}:2380"
    return [f"--name={node.name}", "--client-urls=http://0.0.0.0:2379", f"--advertise-client-urls=http://{node.name}:2379",
            "--peer-urls=http://0.0.0.0:2380", f"--advertise-peer-urls={url}", f"--initial-cluster={node.name}={url}",
            f"--data-dir=/data/{node.name}"]


def _tikv(node, config):
    return ["--addr=0.0.0.0:20160", f"--advertise-addr={node.name}:20160", "--status-addr=0.0.0.0:20180",
            f"--advertise-status-addr={node.name}:20180", f"--pd={node.names('pd')[0]}:2379",
            f"--data-dir=/data/{node.name}"]


def _tidb(node, config):
    return ["--store=tikv", f"--path={node.names('pd')[0]}:2379", f"--advertise-address={node.name}",
            *[f"--{k.replace('_', '-')}={v}" for k, v in config.items()]]


ENGINE = tidb.ENGINE.as_cluster(
    key="tidb-cluster",
    title="TiDB (PD + 3 TiKV)",
    color="#F06A63",
    startup_timeout=300.0,
    cluster=Cluster(
        roles=(Role("pd", _pd, count=1, image=f"pingcap/pd:{TAG}", sql=False),
               Role("tikv", _tikv, image=f"pingcap/tikv:{TAG}", sql=False),
               Role("tidb", _tidb, count=1)),
        nodes=5,
        min_nodes=5,
        min_reason="one PD, three TiKV stores (replication factor 3) and one tidb-server",
        members="select count(*) from information_schema.tikv_store_status where store_state_name = 'Up'",
        members_of="tikv",
        topology="every write goes from tidb-server to the TiKV leaders of its regions, each a Raft group of 3 "
                 "replicas, with a two-phase commit coordinated by tidb-server (timestamps from PD)",
    ),
    note="TiDB as PD + 3 TiKV + tidb-server, one container each, as seed 000's tiup playground ran it; the "
         "engine's CPU is the sum of the five containers' cgroups. Without authentication (empty root password, "
         "127.0.0.1 only).",
)
