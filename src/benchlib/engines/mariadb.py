from . import mysql_family
from .base import Engine, Recipe, Server, UnderValgrind, Version
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
        env=lambda c: {"MARIADB_ROOT_PASSWORD": c.password, "MARIADB_DATABASE": c.database},
        versions=VERSIONS,
        default="11.8",
        **mysql_family.SERVER,
        storage_engines=("innodb", "aria", "myisam", "memory", "csv"),
        storage_hint="RocksDB (MyRocks) is the engine mariadb-myrocks",
    ),
    note="MariaDB is not MySQL: same wire protocol and family, a different server and storage engine version line.",
    durability=mysql_family.DURABILITY,
    isolation=mysql_family.ISOLATION,
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
