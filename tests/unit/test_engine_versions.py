"""Versions and storage engines as data: every `key@version` derived from the declarations, bad
versions and storage engines named before anything starts, official images through a mirror."""
import re

import pytest

from benchlib.engines import ALL_ENGINES, CLUSTERS, ENGINES, engine_color, engine_title, get_engine
from benchlib.core.errors import ParameterError, UnknownEngineError
from benchlib.workloads.dml import DIALECTS, dialect_for

VERSIONED = [k for k in ALL_ENGINES if "@" in k]


def test_every_server_version_is_a_key_and_defaults_are_plain_keys():
    assert {"postgres@15", "postgres@17", "postgres@18", "mysql@9", "mariadb@11.8", "mariadb-myrocks@11.8"} \
        <= set(VERSIONED)
    assert not any("@" in k for k in ENGINES)  # "all available" and the lifecycle tests run defaults
    for key, engine in ENGINES.items():
        assert {f"{key}@{v}" for v in engine.versions} <= set(ALL_ENGINES)


@pytest.mark.parametrize("key", VERSIONED)
def test_a_pinned_version_runs_that_major_and_keeps_the_engine_identity(key):
    engine = get_engine(key)
    name, _, version = key.partition("@")
    base = {**ENGINES, **CLUSTERS}[name]
    assert engine.key == key and engine.name == name and engine.version == version
    assert engine.title == f"{base.title} {version}" and engine_title(key) == engine.title
    assert engine_color(key) == base.color == engine.color  # versions share their engine's colour
    assert dialect_for(engine) is dialect_for(base)
    server = engine.server
    if server.official_image:
        # the tag names the major: `postgres:17`, `gvenzl/oracle-free:23-slim`, `pingcap/tidb:v8.5.1`
        tag = server.official_image.rpartition(":")[2]
        assert tag == version or version in tag.split("-") or tag.lstrip("v").startswith(f"{version}.") \
            or tag == f"latest-v{version}", tag
    if server.recipe:
        assert server.local_version.version == version
    assert not engine.defaults_note  # pinned: official and local are the same major


@pytest.mark.parametrize("key", [k for k, e in ENGINES.items() if e.server])
def test_defaults_agree_on_the_major_or_say_why_not(key):
    engine = get_engine(key)
    server = engine.server
    if server.defaults_differ:
        note = engine.defaults_note
        assert server.official_image in note and f"{engine.title} {server.local_default}" in note
        assert note in engine.report_note
    else:
        assert get_engine(f"{key}@{server.default}").server == server
        assert not engine.defaults_note


def test_mysql_is_mysql_and_its_defaults_differ():
    mysql = get_engine("mysql")
    assert mysql.server.official_image == "mysql:8.4" and mysql.server.recipe.folder == "mysql"
    assert "MariaDB" not in mysql.title and "mysql:8.4" in mysql.report_note and "MySQL 9" in mysql.report_note
    assert mysql.client.version_query.startswith("select concat('MySQL ")


@pytest.mark.parametrize("key, fragments", [
    ("postgres@99", ["unknown version '99' of postgres", "15, 17, 18"]),
    ("mariadb-myrocks@10.11", ["'10.11' of mariadb-myrocks", "known versions: 11.8"]),
    ("sqlite@3", ["sqlite is embedded", "no version to choose"]),
    ("postgress@15", ["unknown engine 'postgress@15'", "known engines: postgres, ", "postgres@15"]),
])
def test_unknown_versions_name_the_bad_key_and_the_known_ones(key, fragments):
    with pytest.raises(UnknownEngineError) as err:
        get_engine(key)
    assert "\n" not in str(err.value)
    for fragment in fragments:
        assert fragment in str(err.value)


def test_myrocks_is_mariadb_with_rocksdb_tables():
    myrocks, mariadb = get_engine("mariadb-myrocks"), get_engine("mariadb")
    assert myrocks.variant_of == "mariadb" and dialect_for(myrocks) is DIALECTS["mariadb"]
    assert myrocks.color != mariadb.color  # side by side in one figure
    assert myrocks.server.official_image is None and "MyRocks" in myrocks.server.no_official_reason
    command = myrocks.server.command({})
    assert "--default-storage-engine=rocksdb" in command and "--plugin-load-add=ha_rocksdb" in command
    assert myrocks.server.storage_engine() == "rocksdb" and mariadb.server.storage_engine() is None
    # a run's own configuration still wins over the variant's
    assert "--default-storage-engine=innodb" in myrocks.server.command({"default_storage_engine": "innodb"})
    assert myrocks.server.storage_engine({"default-storage-engine": "InnoDB"}) == "innodb"


@pytest.mark.parametrize("key, config, fragments", [
    ("mariadb", {"default_storage_engine": "rocksdb"}, ["'rocksdb'", "innodb", "mariadb-myrocks"]),
    ("mysql@9", {"default-storage-engine": "Aria"}, ["'Aria'", "innodb"]),
    ("postgres@15", {"default_table_access_method": "columnar"}, ["'columnar'", "heap"]),
])
def test_a_storage_engine_the_server_lacks_is_named(key, config, fragments):
    with pytest.raises(ParameterError) as err:
        get_engine(key).server.command(config)
    assert "no such storage engine" in str(err.value) and "\n" not in str(err.value)
    for fragment in fragments:
        assert fragment in str(err.value)


@pytest.mark.parametrize("mirror, image, expected", [
    (None, "postgres:17", "postgres:17"),
    ("127.0.0.1:5000", "postgres:17", "127.0.0.1:5000/library/postgres:17"),
    ("http://mirror.example:5000/", "mysql:8.4", "mirror.example:5000/library/mysql:8.4"),
    ("registry.example/hub", "org/image:1", "registry.example/hub/org/image:1"),
])
def test_official_images_come_from_the_configured_mirror(monkeypatch, mirror, image, expected):
    from benchlib.containers.images import official_ref

    if mirror is None:
        monkeypatch.delenv("BENCHLIB_REGISTRY_MIRROR", raising=False)
    else:
        monkeypatch.setenv("BENCHLIB_REGISTRY_MIRROR", mirror)
    assert official_ref(image) == expected


def test_unreachable_registry_is_named():
    from benchlib.containers.images import _pull_failure

    refused = Exception('Get "http://127.0.0.1:5999/v2/": dial tcp 127.0.0.1:5999: connect: connection refused')
    assert _pull_failure("127.0.0.1:5999/library/postgres:17", refused) == \
        "cannot pull 127.0.0.1:5999/library/postgres:17 (registry 127.0.0.1:5999 does not answer)"
    assert re.search(r"\(no image registry reachable from this host\)$", _pull_failure("postgres:17", refused))


def test_base_images_are_declared_per_suite():
    from benchlib.containers import images

    suites = {e.server.version(v).recipe.suite for e in ENGINES.values() if e.server
              for v in e.versions if e.server.version(v).recipe}
    assert suites == {"bookworm", "trixie", "sid"} == set(images.SUITES)
    assert "known: bookworm, trixie, sid" in images.base_image_problem("buster")
