from .base import Engine, Recipe, Server, UnderValgrind, Version, mysql_config_command, mysql_password
from .clients import mysql_wire

ENGINE = Engine(
    key="mysql",
    title="MySQL",
    color="#E48E00",
    family="mysql",
    # The default storage engine is part of what ran: it is in the server version string.
    client=mysql_wire("select concat('MySQL ', version(), ' ', @@version_comment, '; default storage engine ', "
                      "@@default_storage_engine)",
                      # MySQL 8.4+ logs in with caching_sha2_password: over plain TCP PyMySQL
                      # encrypts the password with the server's RSA key, through `cryptography`.
                      needs=("cryptography",)),
    server=Server(
        port=3306,
        env=lambda c: {"MYSQL_ROOT_PASSWORD": c.password, "MYSQL_DATABASE": c.database, "MYSQL_ROOT_HOST": "%"},
        user="root",
        versions=(
            Version("8.4", "mysql:8.4", no_recipe_reason="Debian ships no MySQL 8.4 (sid has Oracle's 9.x)"),
            # sid's mysql-server is Oracle MySQL, not MariaDB: the recipe checks the server says so.
            Version("9", "mysql:9", Recipe("mysql", "sid", "mysql-server")),
        ),
        default="8.4",  # seed 000's MySQL
        local_default="9",
        config_command=mysql_config_command,
        socket_setting=lambda directory: {"socket": f"{directory}/mysqld.sock"},
        socket_file="mysqld.sock",
        data_dir="/var/lib/mysql",  # no checkpoint statement: InnoDB recovers a snapshot from its redo log
        # A load's binary log (365 MB of a 1.1 GB data directory after 2M sysbench rows) is not copied:
        # all but the active log purged, as a server without replicas may (a no-op without a binary log).
        before_snapshot=("flush binary logs", "purge binary logs before now() + interval 1 day"),
        password_statements=mysql_password,
        storage_setting="default_storage_engine",
        storage_engines=("innodb", "myisam", "memory", "csv", "archive", "blackhole"),
        # The official image initialises with a temporary server first: slow to become ready.
        startup_timeout=180.0,
    ),
    durability=(("innodb_flush_log_at_trx_commit", "select @@innodb_flush_log_at_trx_commit"),
                ("log_bin", "select @@log_bin"), ("sync_binlog", "select @@sync_binlog"),
                ("innodb_doublewrite", "select @@innodb_doublewrite"),
                ("innodb_flush_method", "select @@innodb_flush_method")),
    # innodb_snapshot_isolation: whether REPEATABLE READ refuses a write to a row changed after the
    # transaction's read view (MariaDB 11.8's error 1020); a server without it says so when read.
    isolation=(("transaction_isolation", "select @@transaction_isolation"),
               ("innodb_snapshot_isolation", "select @@innodb_snapshot_isolation")),
    valgrind=UnderValgrind(
        program="/usr/sbin/mysqld", user="mysql",
        # Not the measured server: data directory initialisation, the official image's temporary
        # init server (no networking) and its configuration queries.
        native_when=("--initialize", "--initialize-insecure", "--skip-networking", "--help", "--version", "-V",
                     "--validate-config"),
    ),
)
