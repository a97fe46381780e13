"""The client-API workload's parameters, dialects and mix, without Docker: bad input fails naming
the value before anything starts."""
import sqlite3
from dataclasses import replace

import pytest

from benchlib.engines import get_engine
from benchlib.errors import ParameterError
from benchlib.lifecycle import start
from benchlib.workloads import client_api
from benchlib.workloads.client_api import contended, dialects, layers

GOOD = dict(engines=["sqlite"], layers=["driver", "core"], transports=["in-process"], objects=10, orm_batch_size=5,
            repetitions=1, contended_modes=["threads"], contended_workers=4, contended_scale=0.01,
            max_repetitions=1, ci_target=0.05, warmup=False, pin_cpus=False, idle_seconds=0, max_settle_seconds=0)


def params(**changes):
    return {**GOOD, **changes}


def test_good_parameters_validate():
    p = client_api.validate_parameters(params())
    assert p.engines == ["sqlite"] and p.layers == ["driver", "core"] and p.objects == 10
    # FerretDB and MongoDB are in the catalog: no caveat may claim the MongoDB wire protocol is absent.
    assert not any("MongoDB wire protocol" in reason for reason in p.skipped.values())


@pytest.mark.parametrize("changes, message", [
    (dict(layers=["driver", "hibernate"]), "layers must be a non-empty list of driver, .* got 'hibernate'"),
    (dict(layers=[]), "layers must be a non-empty list"),
    (dict(transports=["carrier-pigeon"]), "transports must be a non-empty list of in-process, tcp, unix .* got 'carrier-pigeon'"),
    (dict(transports=["unix"]), "sqlite runs in-process only"),
    (dict(engines=["postgres"], transports=["in-process"]), "postgres is a server"),
    (dict(contended_modes=["fibers"]), "contended_modes must be a list of threads, processes .* got 'fibers'"),
    (dict(objects=0), "objects must be an integer >= 1 and <= 100,000, got 0"),
    (dict(objects=-5), "got -5"),
    (dict(objects=10**7), "objects must be an integer >= 1 and <= 100,000, got 10000000"),
    (dict(orm_batch_size=0), "orm_batch_size must be an integer >= 1, got 0"),
    (dict(repetitions=0), "repetitions must be an integer >= 1, got 0"),
    (dict(contended_workers=0), "contended_workers must be an integer >= 1, got 0"),
    (dict(contended_scale=0), "contended_scale must be a number > 0"),
    (dict(contended_scale=-1.0), "got -1.0"),
    (dict(contended_scale=True), "got True"),
])
def test_bad_input_names_the_value(changes, message):
    with pytest.raises(ParameterError, match=message.replace("(", r"\(").replace(")", r"\)")):
        client_api.validate_parameters(params(**changes))


def test_unix_socket_on_a_server_without_one_is_rejected():
    postgres = get_engine("postgres")
    no_socket = replace(postgres, server=replace(postgres.server, socket_setting=None))
    assert client_api.engine_transports(postgres, ["tcp", "unix"]) == ["tcp", "unix"]
    with pytest.raises(ParameterError, match="transport 'unix' asked for postgres, which has no Unix socket"):
        client_api.engine_transports(no_socket, ["tcp", "unix"])


def test_start_refuses_a_unix_socket_for_an_embedded_engine_before_starting():
    with pytest.raises(ParameterError, match="sqlite has no Unix socket"):
        start("sqlite", unix_socket=True)


def test_every_server_in_the_catalog_declares_its_socket():
    for key in ("postgres", "mysql", "mariadb", "mariadb-myrocks"):
        server = get_engine(key).server
        assert server.socket_setting is not None and server.socket_file, key
        assert server.command(server.socket_setting("/run/x")), key  # reaches the start command


def test_the_object_has_24_members_and_every_dialect_creates_its_table():
    values = layers.object_values(7)
    assert len(values) == len(dialects.COLUMNS) == 24
    d = client_api.dialect_for(get_engine("sqlite"))
    conn = sqlite3.connect(":memory:")
    conn.execute(d.create_table())
    conn.execute(d.insert, (*values[:-1], d.timestamp(values[-1])))
    assert conn.execute(d.select, (7,)).fetchone()[:2] == (7, 49)
    for family in ("postgres", "mysql", "duckdb"):
        ddl = dialects.DIALECTS[family].create_table()
        assert ddl.count(",") == 23 and "primary key" in ddl


def test_prepared_statements_only_where_the_driver_has_them():
    assert client_api.layer_skip_reason("postgres", "prepared") is None
    assert "PyMySQL" in client_api.layer_skip_reason("mysql", "prepared")
    assert client_api.layer_skip_reason("sqlite", "driver") is None


def test_contended_mix_keeps_seed_002s_proportions():
    assert contended.inserts_per_worker(1.0) == 600  # 19,200 / 32
    per_worker = contended.inserts_per_worker(0.05)
    assert per_worker % 3 == 0 and per_worker == 30
    assert contended.inserts_per_worker(1e-6) == 3
    # ODB's threads driver: 32 workers x 200 iterations reproduce the seed's four counts exactly.
    iterations = 32 * 600 // contended.OBJECTS_PER_ITERATION
    assert {k: iterations * n for k, n in contended.PER_ITERATION.items()} == contended.SEED_COUNTS
