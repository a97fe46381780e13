from .base import DmlDialect, ServerEngine
from .families import MYSQL
from .sql import digits_cross_join_insert

ENGINE = ServerEngine(
    key="mariadb",
    title="MariaDB",
    family=MYSQL,
    official_image="mariadb:11.4",
    port=3306,
    env=lambda c: {"MARIADB_ROOT_PASSWORD": c.password, "MARIADB_DATABASE": c.database},
    user="root",
    database="bench",
    version_query="select concat('MariaDB ', version(), ' ', @@version_comment)",
    recipe="mariadb",
    color="#C0765A",
    report_note="MariaDB is not MySQL: same wire protocol and family, a different server and storage engine "
                "version line. The article's MySQL row is MySQL 8.4.",
    dml=DmlDialect(
        # MariaDB has no UUID_TO_BIN; this is the same 16 random-ish bytes as MySQL's default.
        pk_columns={
            "uuid": "id binary(16) default (unhex(replace(uuid(), '-', '')))",
            "sequential": "id bigint auto_increment",
        },
        generate_rows=digits_cross_join_insert,
        sleep=lambda s: f"do sleep({s})",
    ),
)
