"""Every declared `key@version` once on the real engine: it starts, reports that major of that
product, and runs the DML workload's statements. The full lifecycle tests run the defaults; this
keeps versions tested without multiplying the suite. Bad versions and storage engines fail
before any container starts."""
import subprocess
import sys

import pytest
from engine_cases import dml_roundtrip, runnable

import benchlib
from benchlib.run import sysbench
from benchlib.engines import ALL_ENGINES
from benchlib.core.errors import BenchlibError, ParameterError, UnknownEngineError
from benchlib.workloads.dml import dialect_for

pytestmark = pytest.mark.docker

# Clusters start several containers each: tests/engines/test_clusters.py covers their one version.
VERSIONED = [k for k, e in ALL_ENGINES.items() if e.version and e.server and e.cluster is None]
PRODUCT = {"postgres": "PostgreSQL", "mysql": "MySQL", "mariadb": "MariaDB", "ferretdb": "FerretDB",
           "mongodb": "MongoDB"}  # what the server calls itself


@pytest.mark.parametrize("key", [runnable(k) for k in VERSIONED])
def test_version_runs_that_major_and_the_dml_statements(key):
    with benchlib.start(key) as eng:
        version = eng.provenance["server_version"]
        product = PRODUCT.get(eng.engine.variant_of or eng.engine.name)
        assert version.startswith(f"{product} {eng.engine.version}.") if product else eng.engine.version in version, \
            version
        if product == "MySQL":
            assert "mariadb" not in version.lower()  # Oracle's MySQL, never MariaDB in its place
        if dialect_for(eng.engine):
            dml_roundtrip(eng, "uuid")


@pytest.mark.parametrize("key, storage", [runnable("mariadb-myrocks", "ROCKSDB"), runnable("mariadb", "InnoDB")])
def test_myrocks_tables_and_sysbench_tables_are_rocksdb_and_plain_mariadb_has_no_rocksdb(key, storage):
    with benchlib.start(key) as eng:
        session = eng.session()
        for statement in dialect_for(eng.engine).create("uuid"):
            session.execute(statement)
        engine_of = "select engine from information_schema.tables where table_name = 'demo'"
        assert session.execute(engine_of) == [(storage,)]
        assert eng.provenance["server_version"].endswith(f"default storage engine {storage}")
        loaded = {r[0] for r in session.execute("select engine from information_schema.engines "
                                                "where support in ('YES', 'DEFAULT')")}
        assert ("ROCKSDB" in loaded) == (storage == "ROCKSDB")  # InnoDB runs without RocksDB's threads
        if sysbench.unavailable_reason() is None:  # sysbench names a storage engine in its CREATE TABLE
            sysbench.prepare(eng, tables=1, table_size=100, rand_type="uniform")
            assert session.execute("select engine from information_schema.tables where table_name = 'sbtest1'") \
                == [(storage,)]


# That each server's declared storage engines exist on it is checked on the instance
# tests/engines/test_lifecycle.py starts anyway (_check_interface).


@pytest.mark.parametrize("key, config, error", [
    ("postgres@99", None, UnknownEngineError),
    ("mariadb", {"default_storage_engine": "rocksdb"}, ParameterError),
    ("mysql", {"default_storage_engine": "tokudb"}, ParameterError),
])
def test_bad_version_or_storage_engine_fails_before_any_container(key, config, error, benchlib_containers):
    before = benchlib_containers()
    with pytest.raises(error):
        with benchlib.start(key, config=config):
            pass
    assert benchlib_containers() == before


def test_cli_names_an_unknown_version_in_one_line():
    out = subprocess.run([sys.executable, "-m", "benchlib", "start", "postgres@99"], capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "unknown version '99' of postgres" in out.stderr and "15, 17, 18" in out.stderr


def test_cli_lists_every_version_with_how_it_would_run():
    out = subprocess.run([sys.executable, "-m", "benchlib", "engines"], capture_output=True, text=True, check=True)
    rows = {line.split()[0]: line for line in out.stdout.splitlines() if line and line.split()[0] in ALL_ENGINES}
    assert set(rows) == set(ALL_ENGINES)
    for key, line in rows.items():
        assert line.split()[3] in ("official", "local-build", "embedded", "unavailable"), line
    if "local-build" in rows["mysql"]:  # offline: say that the defaults differ
        assert "mysql:8.4" in out.stdout and "cannot be the same major" in out.stdout


def test_notebook_parameters_select_versions():
    from benchlib.run.validation import engine_selection

    runnable_keys, skipped = engine_selection(["postgres@15", "postgres@18"])
    assert runnable_keys == ["postgres@15", "postgres@18"] and skipped == {}


def test_all_available_except_runs_every_other_runnable_engine_and_names_the_left_out_ones():
    from benchlib.core.errors import ParameterError, UnknownEngineError
    from benchlib.run.validation import engine_selection

    everything, _ = engine_selection("all available")
    runnable, skipped = engine_selection({"all available except": ["mysql", "sqlite"]})
    assert runnable == [k for k in everything if k not in ("mysql", "sqlite")]
    assert skipped["mysql"] == skipped["sqlite"] == "left out by this parameter set"
    with pytest.raises(UnknownEngineError, match="nosuch"):
        engine_selection({"all available except": ["nosuch"]})
    with pytest.raises(ParameterError, match=r"'all available except' takes a non-empty list of engine keys, got \[\]"):
        engine_selection({"all available except": []})
    with pytest.raises(ParameterError, match=r"engines must be a non-empty list of engine keys, 'all available' or "
                                             r"\{'all available except': \[keys\]\}, got \{'all but': \['mysql'\]\}"):
        engine_selection({"all but": ["mysql"]})
