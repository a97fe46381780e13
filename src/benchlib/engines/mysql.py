from .base import Engine, Server, mysql_config_command
from .clients import mysql_wire

ENGINE = Engine(
    key="mysql",
    title="MySQL",
    color="#E48E00",
    family="mysql",
    client=mysql_wire("select concat('MySQL ', version(), ' ', @@version_comment)"),
    server=Server(
        official_image="mysql:8.4",
        port=3306,
        env=lambda c: {"MYSQL_ROOT_PASSWORD": c.password, "MYSQL_DATABASE": c.database, "MYSQL_ROOT_HOST": "%"},
        user="root",
        command=mysql_config_command,
        no_recipe_reason="Debian ships no MySQL server package (only MariaDB), so there is no local recipe",
        # The official image initialises with a temporary server first: slow to become ready.
        startup_timeout=180.0,
    ),
)
