"""The engine catalog as data, and each workload's dialect rendered for every engine it
supports: checked offline, so an engine that cannot run here is still tested this far."""
import pytest

from benchlib.engines import ENGINES, Credentials, Engine, SqlClient, get_engine
from benchlib.core.errors import ParameterError, UnknownEngineError
from benchlib.workloads.dml import DIALECTS, PK_KINDS, dialect_for
from benchlib.workloads.dml.dialects import digits_cross_join_insert


def test_registry_has_the_engines_of_the_first_experiments():
    assert {"postgres", "mysql", "mariadb", "sqlite", "duckdb"} <= set(ENGINES)


def test_registry_has_every_engine_of_seed_000_and_the_offline_stand_in():
    assert {"postgres", "mysql", "oracle", "sqlserver", "mongodb", "tidb", "yugabytedb", "cockroachdb",
            "ferretdb"} <= set(ENGINES)


def test_unknown_engine_lists_known_keys():
    with pytest.raises(UnknownEngineError) as err:
        get_engine("db2")
    message = str(err.value)
    assert "'db2'" in message
    for key in ENGINES:
        assert key in message


@pytest.mark.parametrize("key", sorted(ENGINES))
def test_engine_declares_how_to_start_and_how_to_talk(key):
    engine = get_engine(key)
    assert isinstance(engine, Engine) and engine.key == key and engine.title and engine.family
    assert engine.color.startswith("#") and len(engine.color) == 7
    assert engine.client.protocol
    if isinstance(engine.client, SqlClient):
        assert engine.client.version_query.lower().startswith("select")
    if engine.kind == "server":
        server = engine.server
        assert server.port > 0
        assert server.official_image.count(":") == 1 if server.official_image else server.no_official_reason
        env = server.env(Credentials("u", "pw", "db"))
        # The password reaches the official env convention, or the engine says it runs without one.
        assert any("pw" in value for value in env.values()) or "without authentication" in engine.note
        assert server.recipe or server.no_recipe_reason
        # no configuration: the image's own command, unless the engine is a configured variant or
        # its image needs a start command (seed 000's `start-single-node --insecure`, ...)
        assert (server.command({}) is None) == (not server.default_config and key not in START_COMMANDS)
        if key in NO_COMMAND_LINE_SETTINGS:
            with pytest.raises(ParameterError, match="max_connections"):
                server.command({"max_connections": 7})
        else:
            command = server.command({"max_connections": 7})
            assert command and any("max_connections" in part or "max-connections" in part for part in command)
    else:
        assert engine.embedded.file_name and engine.embedded.library()


START_COMMANDS = {"cockroachdb", "yugabytedb", "tidb"}
NO_COMMAND_LINE_SETTINGS = {"oracle", "sqlserver"}


def test_an_engine_is_either_a_server_or_embedded():
    sqlite = get_engine("sqlite")
    with pytest.raises(ValueError, match="exactly one of server= or embedded="):
        Engine("x", "X", "#000000", "sqlite", client=sqlite.client)


def test_engine_colors_are_distinct():
    colors = [e.color for e in ENGINES.values()]
    assert len(set(colors)) == len(colors)


@pytest.mark.parametrize("key", sorted(k for k in ENGINES if dialect_for(ENGINES[k]) and
                                        get_engine(k).family != "document"))
def test_dml_dialect_renders_for_every_supported_engine(key):
    dialect = dialect_for(get_engine(key))
    for kind in PK_KINDS:
        statements = dialect.create(kind)
        assert statements[-1].startswith("create table demo (") and "primary key" in statements[-1]
        assert "insert into demo" in dialect.insert(10, kind)
    assert dialect.scalar([(42,)]) == 42.0


def test_mysql_family_shares_one_dialect_with_overrides_only_where_they_differ():
    mysql, mariadb = dialect_for(get_engine("mysql")), dialect_for(get_engine("mariadb"))
    assert "mysql" in DIALECTS and mysql is DIALECTS["mysql"]
    assert mariadb.insert_generated is mysql.insert_generated and mariadb.sleep is mysql.sleep
    assert "uuid_to_bin" in mysql.pk_columns["uuid"] and "uuid_to_bin" not in mariadb.pk_columns["uuid"]


def test_digits_generator_uses_enough_digits():
    assert digits_cross_join_insert(1_000_000).count(" x x") == 6
    assert digits_cross_join_insert(1_000_001).count(" x x") == 7
    assert digits_cross_join_insert(5).endswith("limit 5")


def test_credentials_repr_hides_password():
    assert "s3cret" not in repr(Credentials("root", "s3cret", "db"))


def test_the_isolation_note_says_what_each_start_read_and_whether_the_levels_differ(store):
    from benchlib.present.report import RunReport
    from synthetic_runs import write_run

    runs = iter(range(100))

    def report(readings: dict[str, str | None]):
        # A run stored as the driver stores one: each start's configuration holds what it read.
        run_id = write_run(store, f"iso-{next(runs)}", 0, {e: {"insert": [1.0]} for e in readings},
                           parameters={"engines": list(readings)},
                           configs={e: {"isolation": v} if v else {} for e, v in readings.items()})
        return RunReport(run_id, store).isolation_note()

    # Values as PostgreSQL 17.12, MySQL 9.7.4 (no innodb_snapshot_isolation) and SQLite's declared level gave them.
    mixed = report({"postgres": "transaction_isolation=read committed",
                    "mysql": "transaction_isolation=REPEATABLE-READ, innodb_snapshot_isolation unreadable "
                             "(OperationalError)",
                    "sqlite": "SERIALIZABLE, SQLite's only level (one writer at a time; no setting to read)"})
    assert "PostgreSQL transaction_isolation=read committed; MySQL transaction_isolation=REPEATABLE-READ" in mixed
    assert "each ran at its own level above, not at a common one" in mixed and "Not read" not in mixed
    same = report({"mysql": "transaction_isolation=REPEATABLE-READ", "mariadb": "transaction_isolation=REPEATABLE-READ, "
                   "innodb_snapshot_isolation=1", "postgres": None})
    assert "every engine here ran at that one level" in same and "innodb_snapshot_isolation=1" in same
    assert same.endswith("Not read (a start older than this reading, or a cluster node): PostgreSQL.")
    assert report({"postgres": None}) == ""  # a run from before the reading says nothing rather than guess


def test_every_sql_server_engine_declares_how_its_isolation_is_read():
    from benchlib.engines import ENGINES, get_engine

    for key in ("postgres", "mysql", "mariadb", "mariadb-myrocks"):
        names = [name for name, _ in get_engine(key).isolation]
        assert names[0] == "transaction_isolation", key
    for key in ("sqlite", "duckdb", "ferretdb"):
        assert get_engine(key).isolation_note and not get_engine(key).isolation, key
    assert set(ENGINES) >= {"postgres", "sqlite"}
