from .base import DmlDialect, ServerEngine
from .families import MYSQL
from .sql import digits_cross_join_insert

ENGINE = ServerEngine(
    key="mysql",
    title="MySQL",
    family=MYSQL,
    official_image="mysql:8.4",
    port=3306,
    env=lambda c: {"MYSQL_ROOT_PASSWORD": c.password, "MYSQL_DATABASE": c.database, "MYSQL_ROOT_HOST": "%"},
    user="root",
    database="bench",
    version_query="select concat('MySQL ', version(), ' ', @@version_comment)",
    recipe=None,
    no_recipe_reason="Debian ships no MySQL server package (only MariaDB), so there is no local recipe",
    color="#E48E00",
    # The official image initialises with a temporary server first: slow to become ready.
    startup_timeout=180.0,
    dml=DmlDialect(
        pk_columns={
            "uuid": "id binary(16) default (uuid_to_bin(uuid()))",
            "sequential": "id bigint auto_increment",
        },
        generate_rows=digits_cross_join_insert,
        sleep=lambda s: f"do sleep({s})",
    ),
)
