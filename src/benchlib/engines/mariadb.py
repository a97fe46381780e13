from .base import Engine, Server, mysql_config_command
from .clients import mysql_wire

ENGINE = Engine(
    key="mariadb",
    title="MariaDB",
    color="#C0765A",
    family="mysql",
    client=mysql_wire("select concat('MariaDB ', version(), ' ', @@version_comment)"),
    server=Server(
        official_image="mariadb:11.4",
        port=3306,
        env=lambda c: {"MARIADB_ROOT_PASSWORD": c.password, "MARIADB_DATABASE": c.database},
        user="root",
        command=mysql_config_command,
        recipe="mariadb",
    ),
    report_note="MariaDB is not MySQL: same wire protocol and family, a different server and storage engine "
                "version line. The article's MySQL row is MySQL 8.4.",
)
