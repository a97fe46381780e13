"""MariaDB Galera Cluster: three MariaDB servers replicating every commit synchronously
(virtually synchronous, multi-primary): at commit a node certifies the transaction's write set
with the group (one group-communication round), and the commit returns once every node has
accepted it; the other nodes apply it asynchronously right after. Clients connect to `node1`.

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

ENGINE = replace(
    mariadb.ENGINE,
    key="mariadb-galera",
    title="MariaDB Galera",
    color="#8C4A2F",
    variant_of="mariadb",
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
        topology="every commit is certified by all nodes (one group-communication round) before it returns; the "
                 "other nodes apply it right after (virtually synchronous, multi-primary); clients write to node1",
    ),
    note="MariaDB Galera: 3 MariaDB 11.8 nodes in one cluster on one host (a Docker network between them), each in "
         "its own container; the engine's CPU is the sum of the three containers' cgroups, and each node is also "
         "stored on its own.",
)
