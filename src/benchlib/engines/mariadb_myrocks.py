"""MariaDB with MyRocks (RocksDB, an LSM tree) as the default storage engine: the same server as
`mariadb`, another configuration. Its own key, so a notebook's engine list can set InnoDB and
MyRocks side by side, each in its own colour."""
from dataclasses import replace

from . import mariadb

# The official mariadb images do not ship the RocksDB plugin: MyRocks runs from the local recipe.
_NO_OFFICIAL = "the official mariadb images do not include the MyRocks plugin (mariadb-plugin-rocksdb)"
_VERSIONS = tuple(replace(v, official_image=None, no_official_reason=_NO_OFFICIAL)
                  for v in mariadb.VERSIONS if "mariadb-plugin-rocksdb" in (v.recipe.packages if v.recipe else ""))

ENGINE = replace(
    mariadb.ENGINE,
    key="mariadb-myrocks",
    title="MariaDB MyRocks",
    color="#7A3E9D",
    variant_of="mariadb",
    server=replace(
        mariadb.ENGINE.server,
        versions=_VERSIONS,
        default=_VERSIONS[-1].version,
        # Loaded here, not by the image, so plain `mariadb` runs without RocksDB's threads and cache.
        # MyRocks refuses a statement holding more than rocksdb_max_row_locks (default 1M) row
        # locks; seed 000 updates and deletes 2M rows in one statement each.
        default_config={"plugin_load_add": "ha_rocksdb", "default_storage_engine": "rocksdb",
                        "rocksdb_max_row_locks": 1073741824},
        storage_engines=(*mariadb.ENGINE.server.storage_engines, "rocksdb"),
        storage_hint="",
    ),
    note="MariaDB with MyRocks: RocksDB (an LSM tree) as the default storage engine, so the workload's tables "
         "are RocksDB tables (the server version string names the default storage engine); rocksdb_max_row_locks "
         "is raised to its maximum so one statement can change more than 1M rows.",
    durability=(("rocksdb_flush_log_at_trx_commit", "select @@rocksdb_flush_log_at_trx_commit"),
                ("log_bin", "select @@log_bin"), ("sync_binlog", "select @@sync_binlog"),
                ("rocksdb_use_direct_reads", "select @@rocksdb_use_direct_reads")),
    isolation=(("transaction_isolation", "select @@transaction_isolation"),),
)
