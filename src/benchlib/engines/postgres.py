from .base import Engine, Recipe, Server, UnderValgrind, Version, postgres_config_command, postgres_password
from .clients import postgres_wire


# The official images up to 17 and the recipes keep the cluster here; from 18 the official image
# defaults to /var/lib/postgresql/18/docker unless PGDATA says otherwise.
DATA_DIR = "/var/lib/postgresql/data"


def _version(major: str, suite: str, extra: str = "") -> Version:
    return Version(major, f"postgres:{major}", Recipe("postgres", suite, f"postgresql-{major}{extra}"))


ENGINE = Engine(
    key="postgres",
    title="PostgreSQL",
    color="#336791",
    family="postgres",
    client=postgres_wire(),
    server=Server(
        port=5432,
        env=lambda c: {"POSTGRES_PASSWORD": c.password, "POSTGRES_USER": c.user, "POSTGRES_DB": c.database,
                       "PGDATA": DATA_DIR},
        user="postgres",
        versions=(
            _version("15", "bookworm"),
            _version("17", "trixie"),
            # From 18 on Debian ships JIT (llvmjit) as a recommended package of its own; the
            # official image has it, and it changes the plans of large scans (jit_above_cost).
            _version("18", "sid", " postgresql-18-jit"),
        ),
        default="17",
        config_command=postgres_config_command,
        storage_setting="default_table_access_method",
        storage_engines=("heap",),
        # The image's own socket directory stays: the official entrypoint's init steps use it.
        socket_setting=lambda directory: {"unix_socket_directories": f"/var/run/postgresql,{directory}"},
        socket_file=".s.PGSQL.5432",  # libpq's name for port 5432's socket
        data_dir=DATA_DIR,
        before_snapshot=("checkpoint",),
        # Past the segment it writes and the next one: a segment switch between this query and the
        # freeze must not cut the WAL that recovery replays.
        snapshot_skip="select 'pg_wal/' || name from pg_ls_waldir() where name ~ '^[0-9A-F]{24}$' and name > "
                      "pg_walfile_name(pg_current_wal_insert_lsn() + pg_size_bytes(current_setting('wal_segment_size')))",
        password_statements=postgres_password,
    ),
    durability=(("synchronous_commit", "show synchronous_commit"), ("fsync", "show fsync"),
                ("full_page_writes", "show full_page_writes"), ("wal_sync_method", "show wal_sync_method")),
    isolation=(("transaction_isolation", "show transaction_isolation"),),
    valgrind=UnderValgrind(
        program="/usr/lib/postgresql/*/bin/postgres", user="postgres",
        # Not the measured server: initdb's bootstrap, the recipe's single-user set-up, version and
        # setting queries, and the official image's temporary init server (listening nowhere).
        native_when=("--boot", "--single", "-V", "--version", "--help", "--describe-config", "-C",
                     "listen_addresses="),
    ),
)
