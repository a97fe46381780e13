"""What every MySQL-family server (MySQL, MariaDB and the engines built on them) declares alike:
its server conventions, durability and isolation settings. Declared once; each engine adds its own."""
from __future__ import annotations

from typing import Any

from .base import mysql_config_command, mysql_password

SERVER: dict[str, Any] = dict(
    port=3306,
    user="root",
    config_command=mysql_config_command,
    socket_setting=lambda directory: {"socket": f"{directory}/mysqld.sock"},
    socket_file="mysqld.sock",
    data_dir="/var/lib/mysql",  # no checkpoint statement: InnoDB recovers a snapshot from its redo log
    # A load's binary log (365 MB of a 1.1 GB data directory after 2M sysbench rows) is not copied:
    # all but the active log purged, as a server without replicas may (a no-op without a binary log).
    before_snapshot=("flush binary logs", "purge binary logs before now() + interval 1 day"),
    password_statements=mysql_password,
    storage_setting="default_storage_engine",
)

DURABILITY = (("innodb_flush_log_at_trx_commit", "select @@innodb_flush_log_at_trx_commit"),
              ("log_bin", "select @@log_bin"), ("sync_binlog", "select @@sync_binlog"),
              ("innodb_doublewrite", "select @@innodb_doublewrite"),
              ("innodb_flush_method", "select @@innodb_flush_method"))

# innodb_snapshot_isolation: whether REPEATABLE READ refuses a write to a row changed after the
# transaction's read view (MariaDB 11.8's error 1020); a server without it says so when read.
ISOLATION = (("transaction_isolation", "select @@transaction_isolation"),
             ("innodb_snapshot_isolation", "select @@innodb_snapshot_isolation"))
