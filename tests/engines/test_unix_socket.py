"""Servers started with `unix_socket=True`: the socket lands in a host directory mounted into the
container, the driver and SQLAlchemy reach the server through it (the server says so), and the
directory is gone after the stop."""
import pytest

import benchlib.core.errors
from benchlib.engines import ENGINES
from engine_cases import runnable

pytestmark = pytest.mark.docker

# How each family's server tells a Unix-socket session from a TCP one.
PEER = {
    "postgres": ("select coalesce(host(inet_client_addr()), 'local socket')", "local socket"),
    "mysql": ("select host from information_schema.processlist where id = connection_id()", "localhost"),
}
SERVERS = [k for k, e in ENGINES.items() if e.server is not None and e.server.socket_setting]
WITHOUT_SOCKET = [k for k, e in ENGINES.items() if e.server is not None and not e.server.socket_setting]


@pytest.mark.parametrize("key", [runnable(k) for k in SERVERS])
def test_sessions_reach_the_server_through_its_unix_socket(key):
    from sqlalchemy import text

    with benchlib.start(key, unix_socket=True) as eng:
        socket = eng.socket_endpoint.socket
        assert socket.exists() and socket.is_socket()
        query, local = PEER[eng.engine.family]
        assert eng.session(unix_socket=True).execute(query)[0][0] == local
        assert eng.session().execute(query)[0][0] != local  # TCP still answers beside it
        engine = eng.sqlalchemy_engine(unix_socket=True)
        with engine.connect() as conn:
            assert conn.execute(text(query)).scalar() == local
        engine.dispose()
        assert eng.endpoint.password not in repr(eng.socket_endpoint)
    assert not socket.parent.exists()


def test_an_instance_without_a_socket_says_so():
    with benchlib.start("sqlite") as eng:
        with pytest.raises(benchlib.core.errors.ParameterError, match="not started with a Unix socket"):
            eng.session(unix_socket=True)


@pytest.mark.parametrize("key", WITHOUT_SOCKET)
def test_a_server_without_a_socket_is_refused_before_it_starts(key, benchlib_containers):
    before = benchlib_containers()
    with pytest.raises(benchlib.core.errors.ParameterError, match=f"{key} has no Unix socket to connect through"):
        with benchlib.start(key, unix_socket=True):
            pass
    assert benchlib_containers() == before
