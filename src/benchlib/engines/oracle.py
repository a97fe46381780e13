"""Oracle Database Free from gvenzl/oracle-free (the image Testcontainers' Oracle module uses and
seed 000 ran), through python-oracledb in thin mode (pure Python: no Oracle client libraries).
The workload runs as an application user (APP_USER), as in the article: system users have other
defaults (extra checksums on system tablespaces)."""
from .base import Engine, OFFICIAL_ONLY_NO_VALGRIND, Server, Version, no_command_line_settings
from .clients import Endpoint, SqlClient


def _connect(endpoint: Endpoint, timeout: float):
    import oracledb

    conn = oracledb.connect(user=endpoint.user, password=endpoint.password,
                            dsn=f"{endpoint.host}:{endpoint.port}/{endpoint.database}", tcp_connect_timeout=timeout)
    conn.autocommit = True  # Oracle does not autocommit by default; seed 000 commits after each statement
    return conn


ENGINE = Engine(
    key="oracle",
    title="Oracle Database Free",
    color="#C74634",
    family="oracle",
    client=SqlClient("oracle net", _connect, "select banner_full from v$version", ready_query="select 1 from dual",
                     sqlalchemy_driver="oracle+oracledb", needs=("oracledb",)),
    server=Server(
        port=1521,
        # ORACLE_PASSWORD is SYS/SYSTEM's; APP_USER is created in the pluggable database FREEPDB1.
        env=lambda c: {"ORACLE_PASSWORD": c.password, "APP_USER": c.user, "APP_USER_PASSWORD": c.password},
        user="bench",
        versions=(Version("23", "gvenzl/oracle-free:23-slim",
                          no_recipe_reason="neither Debian nor PyPI ships an Oracle Database server"),),
        default="23",
        config_command=no_command_line_settings,
        database="FREEPDB1",  # the service name of the pluggable database
        startup_timeout=300.0,  # the image opens its database at every start
    ),
    no_valgrind_reason=OFFICIAL_ONLY_NO_VALGRIND,
)
