"""MariaDB Galera Cluster: three MariaDB servers replicating every commit (virtually synchronous,
multi-primary): at commit a node sends the transaction's write set to the group, which delivers it
to every node in one total order (one group-communication round); each node certifies it locally
(the same deterministic test everywhere), the commit returns, and the other nodes apply it on
their own schedule. Clients connect to `node1`.

Offline, the nodes run the `mariadb@11.8` recipe's image plus Debian's `galera-4` provider and
what a joining node's state transfer needs (`mariadb-backup`, `socat`): the official mariadb
images carry the same three, so one declaration starts either."""
from dataclasses import replace

from . import mariadb
from .base import Cluster, Recipe, Role, Version, mysql_config_command

GALERA_VERSION = "11.8"  # MariaDB's Galera-capable server in Debian (trixie), as in the official image


def _node(node, config):
    # The first node bootstraps the group; the others join it and take a copy of its data (SST).
    settings = {**config, "wsrep_cluster_address": f"gcomm://{','.join(node.names())}",
                "wsrep_node_address": node.name, "wsrep_node_name": node.name}
    return [*mysql_config_command(settings), *(["--wsrep-new-cluster"] if node.first else [])]


_BASE = mariadb.ENGINE.server.version(GALERA_VERSION)

ENGINE = mariadb.ENGINE.as_cluster(
    key="mariadb-galera",
    title="MariaDB Galera",
    color="#8C4A2F",
    server=replace(
        mariadb.ENGINE.server,
        versions=(Version(GALERA_VERSION, _BASE.official_image,
                          Recipe("mariadb-galera", "trixie", "galera-4 mariadb-backup socat",
                                 base_recipe=f"mariadb@{GALERA_VERSION}")),),
        default=GALERA_VERSION,
        # Galera's own requirements (row-based write sets, interleaved auto-increment locks) and
        # the state transfer both images can run.
        default_config={"wsrep_on": "ON", "wsrep_provider": "/usr/lib/galera/libgalera_smm.so",
                        "binlog_format": "ROW", "innodb_autoinc_lock_mode": 2, "wsrep_sst_method": "mariabackup",
                        "wsrep_cluster_name": "benchlib"},
        socket_setting=None,
        startup_timeout=120.0,
    ),
    cluster=Cluster(
        roles=(Role("node", _node),),
        nodes=3,
        min_nodes=3,
        min_reason="quorum: a 2-node Galera cluster stops accepting writes when either node is lost",
        members="select variable_value from information_schema.global_status where variable_name = "
                "'wsrep_cluster_size'",
        topology="a commit's write set is delivered to every node in one total order (a group-communication "
                 "round) before the commit returns; each node certifies it locally and the others apply it on "
                 "their own schedule (virtually synchronous, multi-primary); clients write to node1",
    ),
    durability=(*mariadb.ENGINE.durability, ("wsrep_on", "select @@wsrep_on"),
                ("wsrep_sync_wait", "select @@wsrep_sync_wait")),
    note="MariaDB Galera: 3 MariaDB 11.8 nodes in one cluster on one host (a Docker network between them), each in "
         "its own container; the engine's CPU is the sum of the three containers' cgroups, and each node is also "
         "stored on its own.",
)
