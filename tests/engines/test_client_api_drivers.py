"""The client-API workload on the MySQL protocol (MariaDB): the C driver beside PyMySQL, its
prepared statements really server-side, and the contended window opening only once every worker
holds its connection."""
import pytest

import benchlib
from benchlib.data import results
from benchlib.workloads import client_api
from benchlib.workloads.client_api import contended
from benchlib.workloads.client_api.dialects import MYSQL_CONNECTOR_C, TABLE, dialect_for
from benchlib.workloads.client_api.report import ClientApiReport

pytestmark = [pytest.mark.docker,
              pytest.mark.skipif(MYSQL_CONNECTOR_C.available() is not None, reason=str(MYSQL_CONNECTOR_C.available()))]

OBJECTS = 300


def _status(session, name: str) -> int:
    return int(session.execute(f"show global status like '{name}'")[0][1])


def test_c_driver_and_its_prepared_statements_beside_pymysql(store):
    params = client_api.validate_parameters(dict(
        engines=["mariadb"], layers=["driver", "c_driver", "c_prepared"], transports=["tcp"], objects=OBJECTS,
        orm_batch_size=10, repetitions=3, max_repetitions=3, contended_modes=[], contended_workers=2,
        contended_scale=0.01, ci_target=0.05, warmup=False, pin_cpus=False, idle_seconds=0, max_settle_seconds=0))
    result = client_api.run(params, store=store)
    assert results.run_info(result.run_id, store)["status"] == "ok"
    report = ClientApiReport(result.run_id, store)
    load = report.summary[report.summary["phase"] == "load"].set_index("layer")
    assert set(load.index) == {"harness", "driver", "c_driver", "c_prepared"}
    # The same statements and server: the C driver spends less of this process's CPU per load. Means
    # of three repetitions, both C layers against PyMySQL: one 300-load window of each swung by 40%
    # on this host (PyMySQL measured below the C driver once).
    c_layers = load.loc[["c_driver", "c_prepared"], "client_us"].mean()
    assert c_layers < load.loc["driver", "client_us"], load[["client_us"]].to_string()
    # Each C layer is a findings row against PyMySQL, on the client and on the server.
    rows = report.findings().set_index(["layer", "metric"])
    assert {(layer, side) for layer in ("c_driver", "c_prepared") for side in ("client", "server")} == {
        (layer, metric.split(" CPU")[0]) for layer, metric in rows.index}


def test_c_prepared_executes_server_side_prepared_statements():
    dialect = dialect_for(benchlib.get_engine("mariadb"))
    with benchlib.start("mariadb") as eng:
        eng.query(dialect.create_table())
        status = eng.session()
        from benchlib.workloads.client_api.layers import LAYERS

        for name, prepared in (("c_driver", False), ("c_prepared", True)):
            layer = LAYERS[name](dialect, eng, False, 10)
            objects = layer.objects(list(range(1000 * len(name), 1000 * len(name) + 50)))
            executed = _status(status, "Com_stmt_execute")
            layer.run("persist", objects)
            layer.run("load", objects)
            layer.close()
            executed = _status(status, "Com_stmt_execute") - executed
            # A prepared cursor sends COM_STMT_EXECUTE per statement; a plain one sends text queries.
            assert (executed >= 100) if prepared else (executed == 0), (name, executed)


def test_the_contended_window_opens_after_every_worker_is_connected():
    dialect = dialect_for(benchlib.get_engine("mariadb"))
    with benchlib.start("mariadb") as eng:
        eng.query(dialect.create_table())
        watcher = eng.session()
        before = _status(watcher, "Threads_connected")
        with contended.connected("threads", "mariadb", eng.endpoint, dialect, 6, 3) as go:
            # All six workers and the clean-up's connection are in before any is released.
            assert _status(watcher, "Threads_connected") - before == 6 + 1
            assert watcher.execute(f"select count(*) from {TABLE}")[0][0] == 0
            seconds, done = go()
        workers, clean_up = done[:6], done[6]
        assert len(done) == 7 and seconds > 0
        assert sum(r.operations["insert"] for r in workers) == 6 * 3
        # ODB's iteration erases its first object; the clean-up the other two, once all are done.
        assert sum(r.operations["delete"] for r in workers) == 6 and clean_up.operations["delete"] == 6 * 2
        assert sum(r.operations["select"] for r in done) == 6 * (1 + contended.QUERIES_PER_ITERATION)
        assert watcher.execute(f"select count(*) from {TABLE}")[0][0] == 0
