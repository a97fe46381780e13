"""Real containers through testcontainers (no mocks): start, connect, query, stop; security;
clean-up after SIGKILL; faults with one clear error and nothing left behind."""
import os
import signal
import subprocess
import sys
import textwrap

import pytest

import benchlib
from benchlib.host.docker_host import docker_client
from benchlib.engines import ENGINES, SqlClient
from benchlib.core.errors import EngineStartError, ImageBuildError
from engine_cases import runnable

pytestmark = pytest.mark.docker


def _runnable(keys):
    """Every engine of the registry at its default version (tests/engines/test_versions.py covers
    each version): a new engine is tested by default, and one this host cannot run is skipped with
    the reason `benchlib engines` gives."""
    return [runnable(key) for key in keys]


SERVERS = [k for k, e in ENGINES.items() if e.server is not None]
EMBEDDED = [k for k in ENGINES if k not in SERVERS]


@pytest.mark.parametrize("key", _runnable(EMBEDDED))
def test_engine_interface(key):
    """Embedded engines; a server's interface is checked on the first instance that
    test_server_interface_security_and_stop starts (a server start costs seconds)."""
    with benchlib.start(key) as eng:
        _check_interface(eng, key)


def _check_interface(eng, key):
    """What every engine instance offers: provenance, a session, durability read back, SQL and
    SQLAlchemy where it speaks them, and for a server its container, cgroup and hidden password."""
    assert eng.key == key
    p = eng.provenance
    assert p["server_version"] and p["image_ref"] and p["image_source"] in ("official", "local-build", "embedded")
    session = eng.session()
    session.ready()
    assert session.version() == p["server_version"]
    # What a commit waits for, read from the engine itself: every declared setting has a value.
    declared = [name for name, _ in eng.engine.durability]
    assert p["durability"] and all(f"{name}=" in p["durability"] for name in declared), p["durability"]
    assert "unreadable" not in p["durability"], p["durability"]
    if not declared:
        assert p["durability"] == eng.engine.durability_note
    if isinstance(eng.engine.client, SqlClient):
        session.execute("create table t (id int primary key, value float)")
        session.execute("insert into t values (1, 1.5)")
        # autocommit: a second session sees the row at once
        assert eng.query("select count(*), sum(value) from t")[0] == (1, 1.5)
        if eng.engine.client.has_sqlalchemy_dialect:
            from sqlalchemy import text

            sa_engine = eng.sqlalchemy_engine()
            with sa_engine.connect() as sa:
                assert sa.execute(text("select 2 + 2")).scalar() == 4
            sa_engine.dispose()  # its pooled connection is not one of the sessions the stop closes
        else:
            with pytest.raises(TypeError, match="SQLAlchemy has no dialect"):
                eng.sqlalchemy_engine()
    if eng.engine.server is not None:
        server = eng.engine.server
        if server.storage_setting and server.storage_setting != "default_table_access_method":
            have = {r[0].lower() for r in eng.query("select engine from information_schema.engines "
                                                    "where support in ('YES', 'DEFAULT')")}
            assert set(server.storage_engines) <= have, have  # the storage engines it declares exist
        assert eng.container_id and len(eng.container_id) == 64
        assert eng.cgroup and eng.cgroup.endswith(eng.container_id)
        assert eng.credentials.password not in repr(eng) + str(p)
        if isinstance(eng.engine.client, SqlClient):
            assert eng.sqlalchemy_url().render_as_string(hide_password=True).count("***") == 1
    else:
        assert eng.container_id is None and eng.cgroup is None


@pytest.mark.parametrize("key", _runnable(SERVERS))
def test_server_interface_security_and_stop(key, benchlib_containers):
    from dataclasses import replace

    with benchlib.start(key) as first:
        _check_interface(first, key)
        container = docker_client().containers.get(first.container_id)
        bindings = container.attrs["NetworkSettings"]["Ports"][f"{first.engine.server.port}/tcp"]
        assert bindings and {b["HostIp"] for b in bindings} == {"127.0.0.1"}, bindings
        assert first.host == "127.0.0.1"
        # benchlib's own clients go to the container's address, past docker-proxy, where the host reaches it.
        addresses = {n["IPAddress"] for n in container.attrs["NetworkSettings"]["Networks"].values()}
        if first.endpoint.host != "127.0.0.1":
            assert first.endpoint.host in addresses and first.endpoint.port == first.engine.server.port
            assert first.provenance["client_path"].startswith("the container's address")
        else:
            assert first.provenance["client_path"].startswith("the published port")
        creds = first.credentials
        if "without authentication" not in first.engine.note:
            session = None
            with pytest.raises(Exception) as err:
                session = first.engine.client.open(replace(first.endpoint, password=creds.password + "x"), 5)
                session.ready()  # pymongo logs in lazily, on the first command
            if session is not None:
                session.close()
            assert any(s in str(err.value) for s in ("password authentication failed", "Access denied",
                                                     "Authentication failed")), err.value
        with benchlib.start(key) as second:
            assert second.credentials.password != creds.password  # fresh per start
        cid = first.container_id
    assert cid not in benchlib_containers()


def test_killed_runner_leaves_no_stale_container_after_next_start(benchlib_containers):
    code = textwrap.dedent("""
        import time, benchlib
        with benchlib.start("postgres") as eng:
            print(eng.container_id, flush=True)
            time.sleep(120)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    cid = proc.stdout.readline().strip()
    assert len(cid) == 64
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    assert cid in benchlib_containers()  # SIGKILL ran no clean-up ...
    with benchlib.start("sqlite"):
        pass
    assert cid in benchlib_containers()  # ... embedded starts do not touch Docker ...
    with benchlib.start("mariadb"):
        assert cid not in benchlib_containers()  # ... the next server start reaps it


def test_engine_that_exits_during_startup_gives_one_error_and_no_container(benchlib_containers):
    before = benchlib_containers()
    with pytest.raises(EngineStartError, match="exited during start-up") as err:
        benchlib.start("postgres", config={"no_such_setting": "1"}).__enter__()
    assert "no_such_setting" in str(err.value)  # the server's own complaint, from the log tail
    assert benchlib_containers() == before


def test_engine_never_ready_times_out_and_leaves_no_container(benchlib_containers):
    before = benchlib_containers()
    # The server runs but listens on a port nobody published, so it can never answer: a short
    # timeout alone is no such engine (a fast host starts MariaDB within its first 1 s login try).
    with pytest.raises(EngineStartError, match="not ready within 3s"):
        with benchlib.start("mariadb", config={"port": "3307"}, startup_timeout=3):
            pass
    assert benchlib_containers() == before


def test_docker_not_reachable_is_one_clear_error():
    env = {**os.environ, "DOCKER_HOST": "unix:///nonexistent/docker.sock"}
    out = subprocess.run([sys.executable, "-m", "benchlib", "start", "postgres"], env=env, capture_output=True,
                         text=True)
    assert out.returncode == 2
    assert "no Docker engine answers at unix:///nonexistent/docker.sock" in out.stderr
    assert "Traceback" not in out.stderr


def test_image_build_failure_names_the_recipe(tmp_path):
    from benchlib.containers import images

    images.ensure_base_image()
    (tmp_path / "Dockerfile").write_text(f"FROM {images.BASE_IMAGE}\nRUN echo broken-step && false\n")
    with pytest.raises(ImageBuildError) as err:
        images._build(docker_client(), tmp_path, "benchlib/broken:test")
    assert str(tmp_path) in str(err.value) and "broken-step" in str(err.value)
    assert images._get_image(docker_client(), "benchlib/broken:test") is None  # nothing tagged as usable


def test_mysql_is_mysql_or_explained():
    """`mysql` runs MySQL (official 8.4, or offline Oracle's 9.x from Debian), never MariaDB; 8.4
    pinned offline is unavailable with the reason."""
    from benchlib.containers.images import availability

    default, pinned = availability(benchlib.get_engine("mysql")), availability(benchlib.get_engine("mysql@8.4"))
    assert default.status in ("official", "local-build"), default.detail
    if default.status == "local-build":
        assert "recipes/mysql on Debian sid" in default.detail
        assert pinned.status == "unavailable" and "Debian ships no MySQL 8.4" in pinned.detail
    else:
        assert pinned.status == "official"


def test_cli_lists_engines_with_their_availability():
    out = subprocess.run([sys.executable, "-m", "benchlib", "engines"], capture_output=True, text=True, check=True)
    lines = {line.split()[0]: line for line in out.stdout.splitlines() if line and line.split()[0] in benchlib.ENGINES}
    assert set(lines) == set(benchlib.ENGINES)
    for key in SERVERS:
        assert any(word in lines[key] for word in ("local-build", "official", "unavailable"))
    assert "Docker: reachable" in out.stdout and "perf:" in out.stdout
