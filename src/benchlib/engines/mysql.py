from . import mysql_family
from .base import Engine, Recipe, Server, UnderValgrind, Version
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
        env=lambda c: {"MYSQL_ROOT_PASSWORD": c.password, "MYSQL_DATABASE": c.database, "MYSQL_ROOT_HOST": "%"},
        versions=(
            Version("8.4", "mysql:8.4", no_recipe_reason="Debian ships no MySQL 8.4 (sid has Oracle's 9.x)"),
            # sid's mysql-server is Oracle MySQL, not MariaDB: the recipe checks the server says so.
            Version("9", "mysql:9", Recipe("mysql", "sid", "mysql-server")),
        ),
        default="8.4",  # seed 000's MySQL
        local_default="9",
        **mysql_family.SERVER,
        storage_engines=("innodb", "myisam", "memory", "csv", "archive", "blackhole"),
        # The official image initialises with a temporary server first: slow to become ready.
        startup_timeout=180.0,
    ),
    durability=mysql_family.DURABILITY,
    isolation=mysql_family.ISOLATION,
    valgrind=UnderValgrind(
        program="/usr/sbin/mysqld", user="mysql",
        # Not the measured server: data directory initialisation, the official image's temporary
        # init server (no networking) and its configuration queries.
        native_when=("--initialize", "--initialize-insecure", "--skip-networking", "--help", "--version", "-V",
                     "--validate-config"),
    ),
)
