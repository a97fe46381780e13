"""MySQL Group Replication: three MySQL servers in one group (single-primary mode, a Paxos-based
group communication layer, XCom). At commit the primary sends the transaction's write set to the
group and the commit returns once a majority has agreed on its order and certified it; the
secondaries apply it right after. Clients write to `node1`, the primary.

Every node starts from the `mysql` image (the official one where it can be pulled, sid's MySQL 9
from the offline recipe here), which ships the group_replication plugin. Each node's own start-up
(the root password, the database) is the same on every node: its binary log and GTID history are
reset before it joins, so the group starts from identical, empty histories."""
from dataclasses import replace

from . import mysql
from .base import Cluster, Role, mysql_config_command

GROUP_NAME = "5e1c2f44-9b39-4b8a-a1f5-6c1e0a5b7d10"  # any UUID; one group per cluster start (one network)
GR_PORT = 33061


def _node(node, config):
    seeds = ",".join(f"{name}:{GR_PORT}" for name in node.names())
    settings = {
        **config, "server_id": node.index, "report_host": node.name,
        "loose_group_replication_local_address": f"{node.name}:{GR_PORT}",
        "loose_group_replication_group_seeds": seeds,
    }
    return mysql_config_command(settings)


def _join(node, credentials):
    start = (f"start group_replication user = '{credentials.user}', "
             f"password = '{credentials.password.replace(chr(39), chr(39) * 2)}'")
    if node.first:
        return ("reset binary logs and gtids", "set global group_replication_bootstrap_group = on", start,
                "set global group_replication_bootstrap_group = off")
    return ("reset binary logs and gtids", start)


ENGINE = mysql.ENGINE.as_cluster(
    key="mysql-group-replication",
    title="MySQL Group Replication",
    color="#B36B00",
    server=replace(
        mysql.ENGINE.server,
        default_config={
            "gtid_mode": "ON", "enforce_gtid_consistency": "ON", "plugin_load_add": "group_replication.so",
            "loose_group_replication_group_name": GROUP_NAME, "loose_group_replication_start_on_boot": "OFF",
            "loose_group_replication_bootstrap_group": "OFF",
            # The recovery channel logs in with caching_sha2_password without TLS: it needs the
            # server's RSA key to send the password.
            "loose_group_replication_recovery_get_public_key": "ON",
        },
        socket_setting=None,
        startup_timeout=240.0,
    ),
    cluster=Cluster(
        roles=(Role("node", _node, join=_join),),
        nodes=3,
        min_nodes=3,
        min_reason="quorum: a group of 2 stops accepting writes when either member is lost",
        members="select count(*) from performance_schema.replication_group_members where member_state = 'ONLINE'",
        topology="a commit returns once a majority of the group has agreed on the order of its write set (Paxos); "
                 "each member certifies it locally and the secondaries apply it on their own schedule; clients "
                 "write to the primary (node1)",
    ),
    # The mode and consistency are the server's defaults (single primary, EVENTUAL): read, not assumed.
    durability=(*mysql.ENGINE.durability,
                ("group_replication_single_primary_mode", "select @@group_replication_single_primary_mode"),
                ("group_replication_consistency", "select @@group_replication_consistency")),
    note="MySQL Group Replication: 3 MySQL nodes in one group on one host (a Docker network between them), each in "
         "its own container; the engine's CPU is the sum of the three containers' cgroups, and each node is also "
         "stored on its own.",
)
