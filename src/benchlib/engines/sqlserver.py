"""SQL Server from mcr.microsoft.com/mssql/server (2022: it has GENERATE_SERIES, which seed 000
uses), through pymssql (a PyPI wheel with FreeTDS inside: no system libraries). ACCEPT_EULA=Y
accepts Microsoft's licence for the Developer edition, as seed 000 and Testcontainers' mssql
module do. The image has no setting that creates a database: the client creates `bench` with
seed 000's snapshot settings on its first connection."""
from .base import Engine, OFFICIAL_ONLY_NO_VALGRIND, Server, Version, no_command_line_settings
from .clients import Endpoint, SqlClient


def _sa_password(password: str) -> str:
    # SQL Server refuses an SA password without three of: upper, lower, digit, symbol. A random
    # token may lack one; the suffix guarantees them, on both the image's and the client's side.
    return f"{password}Aa1!"


def _connect(endpoint: Endpoint, timeout: float):
    import pymssql

    conn = pymssql.connect(server=endpoint.host, port=str(endpoint.port), user=endpoint.user,
                           password=_sa_password(endpoint.password), login_timeout=max(1, int(timeout)),
                           autocommit=True)
    cursor = conn.cursor()
    # Seed 000 runs SQL Server with read committed snapshot isolation (like the MVCC engines).
    cursor.execute(f"if db_id('{endpoint.database}') is null begin "
                   f"create database [{endpoint.database}]; "
                   f"alter database [{endpoint.database}] set allow_snapshot_isolation on; "
                   f"alter database [{endpoint.database}] set read_committed_snapshot on; end")
    cursor.execute(f"use [{endpoint.database}]")
    cursor.close()
    return conn


ENGINE = Engine(
    key="sqlserver",
    title="SQL Server",
    color="#7A7574",
    family="sqlserver",
    client=SqlClient("tds", _connect, "select @@version", sqlalchemy_driver="mssql+pymssql", needs=("pymssql",)),
    server=Server(
        port=1433,
        env=lambda c: {"ACCEPT_EULA": "Y", "MSSQL_SA_PASSWORD": _sa_password(c.password), "MSSQL_PID": "Developer"},
        user="sa",
        versions=(Version("2022", "mcr.microsoft.com/mssql/server:2022-latest",
                          no_recipe_reason="neither Debian nor PyPI ships a SQL Server"),),
        default="2022",
        config_command=no_command_line_settings,
        startup_timeout=180.0,
    ),
    note="SQL Server Developer edition (licence accepted with ACCEPT_EULA=Y); the database has read committed "
         "snapshot isolation on, as in seed 000.",
    no_valgrind_reason=OFFICIAL_ONLY_NO_VALGRIND,
)
