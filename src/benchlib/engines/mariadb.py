from .base import Engine, Recipe, Server, UnderValgrind, Version, mysql_config_command, mysql_password
from .clients import mysql_wire

# trixie's 11.8 recipe also installs MyRocks (mariadb-plugin-rocksdb), loaded only by mariadb-myrocks.
VERSIONS = (
    Version("10.11", "mariadb:10.11", Recipe("mariadb", "bookworm", "mariadb-server")),
    Version("11.8", "mariadb:11.8", Recipe("mariadb", "trixie", "mariadb-server mariadb-plugin-rocksdb")),
)

ENGINE = Engine(
    key="mariadb",
    title="MariaDB",
    color="#C0765A",
    family="mysql",
    client=mysql_wire("select concat('MariaDB ', version(), ' ', @@version_comment, '; default storage engine ', "
                      "@@default_storage_engine)"),
    server=Server(
        port=3306,
        env=lambda c: {"MARIADB_ROOT_PASSWORD": c.password, "MARIADB_DATABASE": c.database},
        user="root",
        versions=VERSIONS,
        default="11.8",
        config_command=mysql_config_command,
        socket_setting=lambda directory: {"socket": f"{directory}/mysqld.sock"},
        socket_file="mysqld.sock",
        data_dir="/var/lib/mysql",  # no checkpoint statement: InnoDB recovers a snapshot from its redo log
        # A load's binary log (365 MB of a 1.1 GB data directory after 2M sysbench rows) is not copied:
        # all but the active log purged, as a server without replicas may (a no-op without a binary log).
        before_snapshot=("flush binary logs", "purge binary logs before now() + interval 1 day"),
        password_statements=mysql_password,
        storage_setting="default_storage_engine",
        storage_engines=("innodb", "aria", "myisam", "memory", "csv"),
        storage_hint="RocksDB (MyRocks) is the engine mariadb-myrocks",
    ),
    note="MariaDB is not MySQL: same wire protocol and family, a different server and storage engine version line.",
    durability=(("innodb_flush_log_at_trx_commit", "select @@innodb_flush_log_at_trx_commit"),
                ("log_bin", "select @@log_bin"), ("sync_binlog", "select @@sync_binlog"),
                ("innodb_doublewrite", "select @@innodb_doublewrite"),
                ("innodb_flush_method", "select @@innodb_flush_method")),
    # innodb_snapshot_isolation: whether REPEATABLE READ refuses a write to a row changed after the
    # transaction's read view (MariaDB 11.8's error 1020); a server without it says so when read.
    isolation=(("transaction_isolation", "select @@transaction_isolation"),
               ("innodb_snapshot_isolation", "select @@innodb_snapshot_isolation")),
    valgrind=UnderValgrind(
        program="/usr/sbin/mariadbd", user="mysql",
        # Not the measured server: mariadb-install-db's bootstrap, the official image's temporary
        # init server (no networking), configuration queries and Galera's position recovery.
        native_when=("--bootstrap", "--skip-networking", "--help", "--version", "-V", "--wsrep-recover",
                     "--wsrep_recover"),
        # 11.8 reserves address space for innodb_buffer_pool_size_max (8 TiB by default), which
        # valgrind cannot map ("Cannot map innodb_buffer_pool_size_max"); loose: 10.11 has no such
        # setting and ignores it.
        config={"loose_innodb_buffer_pool_size_max": "512M"},
    ),
)
