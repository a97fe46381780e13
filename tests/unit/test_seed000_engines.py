"""Seed 000's engines beyond PostgreSQL and MySQL, as declared: each statement of the DML
workload rendered as the article wrote it, each image's env conventions, start command and
client family. Checked offline: most of these engines cannot run on a host without a registry."""
import pytest

from benchlib.engines import Credentials, DocumentClient, SqlClient, get_engine
from benchlib.workloads import dml, sweep
from benchlib.workloads.dml import PK_KINDS, dialect_for
from benchlib.workloads.dml.dialects import _documents

CREDS = Credentials("u", "pw", "bench")


def statements(key, kind="uuid"):
    d = dialect_for(get_engine(key))
    return d, d.create(kind)[-1], d.insert(1_000_000, kind)


def test_cockroachdb_and_yugabytedb_run_postgres_statements_without_vacuum():
    for key in ("cockroachdb", "yugabytedb"):
        d, create, insert = statements(key)
        assert create == "create table demo (id uuid default gen_random_uuid() primary key, value float)"
        assert insert == "insert into demo(value) select generate_series(1, 1000000)"
        assert d.sleep(10) == "select pg_sleep(10)" and d.maintain is None
        assert d.update_all == "update demo set value = value + 1"
    assert dialect_for(get_engine("postgres")).maintain == "vacuum"


def test_tidb_supplies_the_uuid_key_in_the_insert_and_raises_its_memory_quota():
    d, create, insert = statements("tidb")
    assert create == "create table demo (id binary(16) primary key, value float)"  # no default: error 3770
    assert insert.startswith("insert into demo(id, value) with x as (select 0 as x union all select 1")
    assert "select uuid_to_bin(uuid()), x0.x + 10 * x1.x" in insert and insert.endswith("limit 1000000")
    assert d.create("uuid")[0] == "set tidb_mem_quota_query = 4294967296"  # seed 000: 4 << 30
    _, create, insert = statements("tidb", "sequential")
    assert "auto_increment" in create and insert.startswith("insert into demo(value) with x")
    assert d.sleep(10) == "do sleep(10)"


def test_oracle_statements_are_the_articles():
    d, create, insert = statements("oracle")
    assert create == "create table demo (id raw(16) default sys_guid() primary key, value float)"
    assert insert == "insert into demo(value) select rownum from xmltable('1 to 1000000')"
    assert d.sleep(10) == "begin dbms_session.sleep(10); end;"
    assert "identity" in d.create("sequential")[-1]


def test_sqlserver_statements_are_the_articles():
    d, create, insert = statements("sqlserver")
    assert create == "create table demo (id uniqueidentifier default newid() primary key, value float)"
    assert insert == "insert into demo(value) select value from generate_series(1, 1000000)"
    assert d.sleep(10) == "waitfor delay '00:00:10.000'"
    assert d.sleep(3725.5) == "waitfor delay '01:02:05.500'"


@pytest.mark.parametrize("key", ["mongodb", "ferretdb"])
def test_document_engines_run_pymongo_operations(key):
    engine = get_engine(key)
    assert isinstance(engine.client, DocumentClient) and engine.family == "document"
    d = dialect_for(engine)
    for kind in PK_KINDS:
        assert len(d.create(kind)) == 2 and all(callable(op) for op in d.create(kind))
        assert callable(d.insert(10, kind))
    assert all(callable(op) for op in (d.update_all, d.count_values, d.count_rows, d.delete_all))
    assert d.sleep is None and d.maintain is None and d.scalar(7) == 7.0


def test_generated_documents_have_the_declared_keys():
    random_keys = _documents(3, "uuid")
    assert [doc["value"] for doc in random_keys] == [1, 2, 3]
    assert len({bytes(doc["_id"]) for doc in random_keys}) == 3 and all(doc["_id"].subtype == 4 for doc in random_keys)
    assert _documents(2, "sequential") == [{"value": 1}, {"value": 2}]  # the driver adds ObjectIds


def test_env_conventions_of_the_official_images():
    assert get_engine("mongodb").server.env(CREDS) == {"MONGO_INITDB_ROOT_USERNAME": "u",
                                                       "MONGO_INITDB_ROOT_PASSWORD": "pw"}
    assert get_engine("oracle").server.env(CREDS) == {"ORACLE_PASSWORD": "pw", "APP_USER": "u",
                                                      "APP_USER_PASSWORD": "pw"}
    sqlserver = get_engine("sqlserver").server.env(CREDS)
    assert sqlserver["ACCEPT_EULA"] == "Y" and sqlserver["MSSQL_SA_PASSWORD"].startswith("pw")
    password = sqlserver["MSSQL_SA_PASSWORD"]  # SQL Server's policy: 3 of upper, lower, digit, symbol
    assert sum(any(test(c) for c in password) for test in (str.isupper, str.islower, str.isdigit,
                                                            lambda c: not c.isalnum())) >= 3
    assert get_engine("yugabytedb").server.env(CREDS) == {"YSQL_USER": "u", "YSQL_PASSWORD": "pw", "YSQL_DB": "bench"}
    assert get_engine("ferretdb").server.env(CREDS) == {"POSTGRES_PASSWORD": "pw", "POSTGRES_USER": "u",
                                                        "POSTGRES_DB": "bench"}
    for key in ("cockroachdb", "tidb"):  # no password to give: said in the note
        assert "without authentication" in get_engine(key).note


def test_start_commands_are_seed_000s():
    assert get_engine("cockroachdb").server.command({}) == ["start-single-node", "--insecure"]
    assert get_engine("yugabytedb").server.command({}) == ["bin/yugabyted", "start", "--background=false"]
    assert get_engine("yugabytedb").server.command({"ysql_max_connections": 10})[-1] == \
        "--tserver_flags=ysql_max_connections=10"
    assert get_engine("tidb").server.command({})[:1] == ["--store=unistore"]
    assert get_engine("ferretdb").server.command({}) is None  # the recipe's entrypoint starts both


def test_clients_and_images():
    expected = {
        "mongodb": ("mongodb wire", "mongo:8.0", 27017),
        "cockroachdb": ("postgres wire", "cockroachdb/cockroach:latest-v24.1", 26257),
        "yugabytedb": ("postgres wire", "yugabytedb/yugabyte:2024.1.3.0-b105", 5433),
        "tidb": ("mysql wire", "pingcap/tidb:v8.5.1", 4000),
        "oracle": ("oracle net", "gvenzl/oracle-free:23-slim", 1521),
        "sqlserver": ("tds", "mcr.microsoft.com/mssql/server:2022-latest", 1433),
    }
    for key, (protocol, image, port) in expected.items():
        engine = get_engine(key)
        assert (engine.client.protocol, engine.server.official_image, engine.server.port) == (protocol, image, port)
        assert engine.server.recipe is None and "ships" in engine.server.no_recipe_reason
    assert isinstance(get_engine("oracle").client, SqlClient) and get_engine("oracle").client.needs == ("oracledb",)
    assert get_engine("sqlserver").client.needs == ("pymssql",)
    ferretdb = get_engine("ferretdb")
    assert ferretdb.server.official_image is None and ferretdb.server.recipe.folder == "ferretdb"
    # FerretDB's image is the postgres@17 recipe's plus FerretDB: the same PostgreSQL as `postgres@17`.
    recipe, postgres = ferretdb.server.recipe, get_engine("postgres@17").server.recipe
    assert recipe.base_recipe == "postgres@17" and recipe.suite == postgres.suite
    assert "the postgres@17 recipe" in recipe.description
    assert "FerretDB" in ferretdb.title and "PostgreSQL" in ferretdb.title and "MongoDB" not in ferretdb.title


def test_every_workload_states_the_engines_it_supports():
    keys = ["postgres", "mysql", "mariadb", "sqlite", "duckdb", "ferretdb", "mongodb", "oracle", "sqlserver", "tidb",
            "yugabytedb", "cockroachdb"]
    assert all(dml.supports(get_engine(k)) for k in keys)
    assert [k for k in keys if sweep.supports(get_engine(k))] == ["postgres", "mysql", "mariadb", "tidb",
                                                                  "yugabytedb", "cockroachdb"]


def test_seed_engines_are_drawn_in_their_modules_colours():
    from benchlib.engines import REFERENCE_ENGINES, engine_color, engine_title

    for key in ("oracle", "sqlserver", "mongodb", "tidb", "yugabytedb", "cockroachdb"):
        assert key not in REFERENCE_ENGINES  # a module declares it: no second list may claim otherwise
        assert engine_color(key) == get_engine(key).color and engine_title(key) == get_engine(key).title
    assert engine_color("ferretdb") not in {get_engine(k).color for k in ("mongodb", "postgres")}


def test_ferretdb_build_needs_a_recent_go_and_says_so(monkeypatch):
    from benchlib.engines import gobuild

    binary = get_engine("ferretdb").server.recipe.host_build
    assert binary.module == "github.com/FerretDB/FerretDB" and binary.version == "v1.24.0"
    assert binary.generated["build/version/version.txt"].strip() == binary.version  # else it panics at start
    monkeypatch.setattr(gobuild, "find_go", lambda: (None, None))
    assert "needs Go >= 1.22" in binary.problem() and "none found" in binary.problem()
    monkeypatch.setattr(gobuild, "find_go", lambda: ("/usr/bin/go", "1.19.8"))
    assert binary.problem() == ("building github.com/FerretDB/FerretDB@v1.24.0 needs Go >= 1.22; the host's "
                                "/usr/bin/go is 1.19.8")
    monkeypatch.setattr(gobuild, "find_go", lambda: ("/usr/local/go/bin/go", "1.26.8"))
    assert binary.problem() is None


def test_write_cost_supports_only_engines_with_their_own_log_counter():
    from benchlib.workloads.write_cost.dialects import dialect_for as write_dialect

    for key in ("cockroachdb", "yugabytedb", "tidb", "ferretdb", "mongodb", "oracle", "sqlserver"):
        assert write_dialect(get_engine(key)) is None, key
    assert write_dialect(get_engine("postgres")) is not None


def test_ferretdb_row_limit_fails_by_name_or_skips_with_the_reason():
    """FerretDB 1.24's delete_many binds one parameter per document: above 65,535 it fails, so
    the DML workload refuses such a row count for it before any container starts."""
    from benchlib.core.errors import ParameterError
    from benchlib.workloads.dml import DmlParams

    def _within_row_limits(keys, skipped, rows, *, explicit):
        return DmlParams.narrow_engines(list(keys), skipped, {"rows": rows}, explicit=explicit)

    assert dialect_for(get_engine("ferretdb")).max_rows == 65_535
    assert dialect_for(get_engine("mongodb")).max_rows is None
    skipped = {}
    assert _within_row_limits(["sqlite", "ferretdb"], skipped, 20_000, explicit=True) == ["sqlite", "ferretdb"]
    assert _within_row_limits(["sqlite", "ferretdb"], skipped, 200_000, explicit=False) == ["sqlite"]
    assert "rows=200000 is over its 65,535" in skipped["ferretdb"]
    with pytest.raises(ParameterError, match=r"rows=200000 is more than engine 'ferretdb' takes .*65,535"):
        _within_row_limits(["ferretdb"], {}, 200_000, explicit=True)
