"""Data prepared once and reused by a later start: a real server's data directory snapshotted with
the server frozen, restored into a new container as it was at the snapshot (never with what came
after), answering to a fresh password; and the clustered workload's regimes sharing one sysbench
load, each beginning from the table as loaded."""
import json
from dataclasses import replace

import pytest

import benchlib
from benchlib.data import results
from benchlib.run import sysbench
from benchlib.containers.lifecycle import managed_volumes
from benchlib.workloads import clustered
from engine_cases import runnable

pytestmark = pytest.mark.docker


@pytest.mark.parametrize("key", [runnable("postgres"), runnable("mariadb")])  # a checkpoint; InnoDB redo recovery
def test_a_restored_snapshot_holds_the_data_as_it_was_with_a_fresh_password(key, benchlib_containers):
    with benchlib.start(key, data_volume=True) as first:
        session = first.session()
        session.execute("create table t (id int primary key, v int)")
        session.execute("insert into t values (1, 10), (2, 20)")
        snapshot = first.snapshot_data()
        session.execute("insert into t values (3, 30)")  # after the snapshot: never restored
        assert first.query("select count(*) from t")[0][0] == 3  # the server goes on after its freeze
        first_volume, old = first.data_volume, first.endpoint
    assert first_volume not in {v.name for v in managed_volumes()}  # removed with its container
    with benchlib.start(key, restore=snapshot) as second:
        assert second.query("select count(*), sum(v) from t")[0] == (2, 30)
        assert second.credentials.password != old.password
        with pytest.raises(Exception):
            second.engine.client.open(replace(second.endpoint, password=old.password), 5).ready()
        assert second.provenance["config"]["data_restored_from"] == first.container_id
        restored_volume = second.data_volume
    assert restored_volume == snapshot.volume
    assert restored_volume not in {v.name for v in managed_volumes()}
    with pytest.raises(Exception, match="already restored"):
        snapshot.take()


# Writes that leave what no restart reads: recycled WAL segments named past the one PostgreSQL
# writes, and a binary log MySQL has rotated away from.
LOG_CHURN = {
    "postgres": ["insert into t select g, g from generate_series(3, 20000) g", "select pg_switch_wal()",
                 "insert into t select g, g from generate_series(20001, 40000) g", "select pg_switch_wal()",
                 "checkpoint", "select pg_switch_wal()", "checkpoint"],
    "mysql": ["insert into t select seq, seq from (with recursive s(seq) as (select 3 union all select seq + 1 "
              "from s where seq < 900) select seq from s) x", "flush binary logs"],
}


@pytest.mark.parametrize("key", [runnable("postgres"), runnable("mysql")])
def test_a_snapshot_leaves_out_the_logs_no_restart_reads(key, benchlib_containers):
    with benchlib.start(key, data_volume=True) as first:
        session = first.session()
        session.execute("create table t (id int primary key, v int)")
        session.execute("insert into t values (1, 10), (2, 20)")
        for statement in LOG_CHURN[key]:
            session.execute(statement)
        expected = first.query("select count(*), sum(v) from t")[0]
        if key == "postgres":
            walfiles = {r[0] for r in first.query("select name from pg_ls_waldir()")}
            current = first.query("select pg_walfile_name(pg_current_wal_insert_lsn())")[0][0]
            assert any(name > current for name in walfiles), walfiles  # recycled segments to leave out
        else:
            assert len(first.query("show binary logs")) >= 2
        snapshot = first.snapshot_data()
    with benchlib.start(key, restore=snapshot) as second:
        assert second.query("select count(*), sum(v) from t")[0] == expected
        if key == "postgres":
            assert snapshot.left_out > 0
            assert len(second.query("select name from pg_ls_waldir()")) < len(walfiles)
            # The restored server goes on writing WAL past the segments the copy left out.
            second.query("insert into t select g, g from generate_series(40001, 60000) g")
            for _ in range(3):
                second.query("select pg_switch_wal()")
            second.query("checkpoint")
        else:
            assert snapshot.left_out == 0
            assert len(second.query("show binary logs")) <= 2  # the active log at the snapshot, and the restart's
            second.query("insert into t values (-1, 0)")
        assert second.query("select count(*) from t")[0][0] > expected[0]


@pytest.mark.skipif(sysbench.unavailable_reason() is not None, reason=str(sysbench.unavailable_reason()))
def test_clustered_regimes_share_one_load_and_begin_from_the_loaded_table(store, monkeypatch):
    prepares = []
    real_prepare = sysbench.prepare
    monkeypatch.setattr(sysbench, "prepare", lambda eng, **kw: (prepares.append(eng.key), real_prepare(eng, **kw)))
    params = clustered.validate_parameters({
        "engines": ["postgres", "mariadb"], "tests": ["points-covered-pk", "insert"], "regimes": ["cached", "io-bound"],
        "reads_after_writes": False, "threads": 1, "range": 10, "test_seconds": 1, "warmup_seconds": 0,
        "table_size": 2000, "cached_buffer_pool_mb": 64, "io_bound_buffer_pool_mb": 16,
        "io_bound_memory_limit_mb": 256, "key_kinds": [], "insert_orders": [], "key_rows": 0, "rand_type": "uniform", "binary_log": False,
        "max_settle_seconds": 0, "repetitions": 1, "max_repetitions": 1, "ci_target": 0.05, "warmup": False,
        "pin_cpus": False, "idle_seconds": 0})
    result = clustered.run(params, store=store)
    assert not result.errors, result.errors
    assert sorted(prepares) == ["mariadb", "postgres"]  # one load per engine, not one per regime
    m = results.measurements(result.run_id, store)
    labels = m["labels"].map(json.loads)
    steps = m.assign(regime=labels.map(lambda x: x.get("regime")), step=labels.map(lambda x: x.get("step")))
    steps = steps[steps["window"] == "phase"]
    loads = steps[steps["step"] == "load"].drop_duplicates(["engine", "regime"])
    assert sorted(zip(loads["engine"], loads["regime"])) == [("mariadb", "cached"), ("postgres", "cached")]
    # The cached regime's insert test changed the table after the snapshot; the IO-bound start
    # still found it as loaded (its check raises otherwise, failing the start), then ran its tests.
    ran = steps[(steps["metric"] == "transactions") & (steps["value"] > 0)]
    assert {(e, r, s) for e, r, s in zip(ran["engine"], ran["regime"], ran["step"])} >= {
        (e, r, s) for e in ("postgres", "mariadb") for r in ("cached", "io-bound")
        for s in ("points-covered-pk.pre", "insert")}
    note = results.run_info(result.run_id, store)["status_note"]
    for engine in ("postgres", "mariadb"):
        assert f"{engine} io-bound: began from the first regime's snapshot of the loaded table (2,000 rows" in note
    instances = results.instances(result.run_id, store)
    origin = {r.engine: r.container_id for r in instances.itertuples() if "data_restored_from" not in json.loads(r.config)}
    restored = {r.engine: json.loads(r.config)["data_restored_from"] for r in instances.itertuples()
                if "data_restored_from" in json.loads(r.config)}
    assert restored == origin
    buffers = steps[(steps["metric"] == "buffer_pool_bytes") & (steps["regime"] == "io-bound")]
    assert set(buffers["engine"]) == {"postgres", "mariadb"} and (buffers["value"] == 16 * 2 ** 20).all()
    assert not [v for v in managed_volumes() if v.attrs["Labels"].get("benchlib.run") == result.run_id]
