"""The results store with real Parquet files and DuckDB: concurrent writers, a reader holding
the store open, export/import between machines, schema versions."""
import multiprocessing
import time

import pytest

from benchlib.data import comparison, results
from benchlib.core.errors import ParameterError, StoreError
from benchlib.run.measure import Run
from benchlib.data.store import SCHEMA_VERSION, Store, utcnow
from benchlib.workloads import per_operation


def _rows(run_id: str, n: int, phase: str = "insert") -> list[dict]:
    now = utcnow()
    return [{"run_id": run_id, "instance_id": "x-1", "engine": "sqlite", "experiment": "t", "phase": phase,
             "repetition": 1, "window": "phase", "metric": "cpu_time", "value": float(i), "unit": "s",
             "source": "process", "status": "ok", "started_at": now, "ended_at": now, "check_name": None,
             "check_value": None, "seq": i, "scope": "embedded", "labels": "{}"} for i in range(n)]


def _writer(root: str, tag: str, parts: int) -> None:
    store = Store(__import__("pathlib").Path(root))
    with Run("concurrency", {"tag": tag}, store=store) as run:
        for seq in range(parts):
            store.append_measurements(run.run_id, seq, _rows(run.run_id, 10))
            time.sleep(0.01)


def test_two_processes_writing_runs_at_once_both_land(store):
    # A reader keeps querying the store while both writers write, like a notebook kernel would.
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(store.root), tag, 20)) for tag in ("a", "b")]
    for p in procs:
        p.start()
    reads = []
    while any(p.is_alive() for p in procs):
        reads.append(int(store.query("select count(*) n from measurements")["n"][0]))
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert len(reads) >= 3 and reads == sorted(reads), reads  # read during the writes, never going back
    runs = store.query("select run_id, status, parameters from runs order by parameters")
    assert list(runs["status"]) == ["ok", "ok"]
    counts = store.query("select run_id, count(*) n from measurements group by run_id")
    assert sorted(counts["n"]) == [200, 200]


def test_failed_run_keeps_rows_written_before_the_failure(store):
    with pytest.raises(RuntimeError):
        with Run("t", {}, store=store) as run:
            store.append_measurements(run.run_id, 1, _rows(run.run_id, 3))
            raise RuntimeError("engine crashed")
    info = results.run_info(run.run_id, store)
    assert info["status"] == "failed" and "engine crashed" in info["error"]
    assert len(results.measurements(run.run_id, store)) == 3


def test_run_records_provenance(store):
    with Run("t", {"rows": 5}, notebook="nb", store=store) as run:
        pass
    info = results.run_info(run.run_id, store)
    assert info["parameters"] == {"rows": 5} and info["notebook"] == "nb"
    for key in ("hostname", "kernel", "cpu_model", "cpu_cores", "memory_bytes", "benchlib_version", "git_sha",
                "cgroup_layout", "perf_support", "pmu", "host_fingerprint"):
        assert info[key] not in (None, ""), key
    assert info["schema_version"] == SCHEMA_VERSION
    assert info["host_class"] is None and info["cluster_task"] is None  # nothing declared, no cluster


def test_a_run_records_the_declared_host_class_and_price(store, monkeypatch):
    monkeypatch.setenv("BENCHLIB_HOST_CLASS", "c6i.large")
    monkeypatch.setenv("BENCHLIB_HOST_PRICE", "0.085 USD/h")
    with Run("t", {}, store=store) as run:
        pass
    info = results.run_info(run.run_id, store)
    assert (info["host_class"], info["host_price"], info["host_price_unit"]) == ("c6i.large", 0.085, "USD/h")
    monkeypatch.setenv("BENCHLIB_HOST_PRICE", "cheap")
    with pytest.raises(ParameterError, match="BENCHLIB_HOST_PRICE must be a price per hour or month like "
                                             "'0.085 USD/h', got 'cheap'"):
        Run("t", {}, store=store).__enter__()


def test_v3_runs_gain_the_host_columns_unknown(store):
    import pyarrow.parquet as pq

    from benchlib.data.store import RUNS

    store.write_run({"run_id": "r1", "status": "ok"})
    path = store.root / "runs" / "r1.parquet"
    v3 = pq.read_table(path).drop_columns([c for c in RUNS.names if RUNS.names.index(c) >= RUNS.names.index("host_class")])
    pq.write_table(v3, path)
    (store.root / "schema_version").write_text("3\n")
    row = store.query("select host_class, host_fingerprint, pmu, cluster_task from runs").iloc[0]
    assert row.isna().all()
    assert (store.root / "schema_version").read_text().strip() == str(SCHEMA_VERSION)
    assert pq.read_schema(path).names == RUNS.names


def test_export_then_import_merges_runs_into_another_store(store, tmp_path):
    with Run("t", {}, store=store) as run:
        store.append_measurements(run.run_id, 1, _rows(run.run_id, 4))
    exported = store.export_runs([run.run_id], tmp_path / "export")
    other = Store(tmp_path / "other")
    assert other.import_runs(exported) == [run.run_id]
    assert other.import_runs(exported) == []  # idempotent
    assert len(results.measurements(run.run_id, other)) == 4
    with pytest.raises(StoreError, match="no such run"):
        store.export_runs(["nope"], tmp_path / "x")


def test_v1_store_is_migrated_to_v2(store):
    """A store written by schema v1 (no scope, labels, owner, check columns) opens, gains them,
    and a run v1 left 'running' is marked aborted with the reason."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = store.root
    now = utcnow()
    (root / "runs").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist([{"run_id": "r1", "experiment": "dml", "status": "ok", "started_at": now,
                                          "schema_version": 1},
                                         ]), root / "runs" / "r1.parquet")
    pq.write_table(pa.Table.from_pylist([{"run_id": "r0", "experiment": "dml", "status": "running",
                                          "started_at": now, "schema_version": 1}]), root / "runs" / "r0.parquet")
    (root / "instances" / "r1").mkdir(parents=True)
    for iid, kind in (("postgres-0001", "server"), ("sqlite-0002", "embedded")):
        pq.write_table(pa.Table.from_pylist([{"run_id": "r1", "instance_id": iid, "engine": iid.split("-")[0],
                                              "kind": kind, "schema_version": 1}]),
                       root / "instances" / "r1" / f"{iid}.parquet")
    (root / "measurements" / "r1").mkdir(parents=True)
    v1_rows = [{k: v for k, v in r.items() if k not in ("scope", "labels")} for r in _rows("r1", 2)]
    v1_rows[0]["instance_id"], v1_rows[1]["instance_id"] = "postgres-0001", "sqlite-0002"
    pq.write_table(pa.Table.from_pylist(v1_rows), root / "measurements" / "r1" / "compacted.parquet")
    (root / "schema_version").write_text("1\n")

    df = store.query("select instance_id, scope, labels, check_status from measurements order by instance_id")
    assert list(df["scope"]) == ["server", "embedded"] and list(df["labels"]) == ["{}", "{}"]
    assert (root / "schema_version").read_text().strip() == str(SCHEMA_VERSION)
    aborted = results.run_info("r0", store)
    assert aborted["status"] == "aborted" and "schema-v1" in aborted["status_note"]
    assert results.run_info("r1", store)["status"] == "ok"


def test_store_of_a_newer_schema_is_refused(store):
    store.write_run({"run_id": "r1", "status": "ok"})
    (store.root / "schema_version").write_text(f"{SCHEMA_VERSION + 1}\n")
    with pytest.raises(StoreError, match="newer than this benchlib"):
        store.connect()


def test_unknown_column_is_refused(store):
    with pytest.raises(StoreError, match="not in the store schema"):
        store.write_run({"run_id": "r1", "colour": "red"})


def test_empty_store_reads_as_empty_tables(store):
    assert store.query("select count(*) n from measurements")["n"][0] == 0
    assert results.runs(store=store).empty


def test_compare_runs_pairs_repetitions_across_runs_and_flags_real_changes(store):
    """Run b: insert 20% dearer (beyond noise), update within noise of run a."""
    ids = []
    for insert, update in (([10.0, 10.2, 9.8], [5.0, 5.5, 4.5]), ([12.0, 12.2, 11.8], [5.2, 5.7, 4.6])):
        with Run("t", {}, store=store) as run:
            rows = []
            for rep, (ins, upd) in enumerate(zip(insert, update), start=1):
                for phase, value in (("insert", ins), ("update", upd)):
                    row = _rows(run.run_id, 1, phase)[0]
                    rows.append({**row, "instance_id": f"x-{rep}", "repetition": rep, "value": value})
            store.append_measurements(run.run_id, 1, rows)
            ids.append(run.run_id)
    cmp = comparison.compare_runs(ids, per_operation=per_operation, store=store).set_index(["run_id", "phase"])
    insert, update = cmp.loc[(ids[1], "insert")], cmp.loc[(ids[1], "update")]
    assert insert["ratio"] == pytest.approx(1.2) and insert["beyond_noise"] and insert["flagged"]
    assert update["ratio"] == pytest.approx(5.1667 / 5.0, rel=1e-3) and not update["beyond_noise"]
    assert not update["flagged"]
    assert cmp.loc[(ids[0], "insert")]["ratio"] == 1.0  # the base run against itself


def test_finished_run_is_compacted_into_one_file_without_losing_rows(store):
    with Run("t", {}, store=store) as run:
        for seq in range(1, 6):
            store.append_measurements(run.run_id, seq, _rows(run.run_id, 3))
        assert len(list((store.root / "measurements" / run.run_id).glob("*.parquet"))) == 5
    files = list((store.root / "measurements" / run.run_id).glob("*.parquet"))
    assert [f.name for f in files] == ["compacted.parquet"]
    assert len(results.measurements(run.run_id, store)) == 15


def _profile_rows(run_id: str, seq: int, window: str = "phase") -> list[dict]:
    common = {"run_id": run_id, "instance_id": "sqlite-0001", "engine": "sqlite", "phase": "insert",
              "repetition": 1, "labels": "{}", "window": window, "seq": seq, "window_instructions": 1000,
              "files": 1, "source": "valgrind callgrind", "tool_version": "valgrind-3.19.0", "reader": "gprof2dot x"}
    return [{**common, "kind": "function", "name": "sqlite3VdbeExec", "object": "libsqlite3.so.0",
             "subsystem": "executor", "self_instructions": 600, "inclusive_instructions": 990, "self_rank": 1,
             "inclusive_rank": 1},
            {**common, "kind": "subsystem", "name": "executor", "subsystem": "executor", "self_instructions": 600},
            {**common, "kind": "subsystem", "name": "other", "subsystem": "other", "self_instructions": 400}]


def test_profiles_round_trip_through_compaction_export_and_import(store, tmp_path):
    with Run("t", {}, store=store) as run:
        store.append_measurements(run.run_id, 1, _rows(run.run_id, 2))
        store.append_profile(run.run_id, 1, "phase", _profile_rows(run.run_id, 1))
        store.append_profile(run.run_id, 1, "settle", _profile_rows(run.run_id, 1, "settle"))
        # Readable while the run is going, one file per window.
        assert len(results.instruction_profile(run.run_id, store=store)) == 4
    assert [p.name for p in (store.root / "profiles" / run.run_id).iterdir()] == ["compacted.parquet"]
    subsystems = results.instruction_profile(run.run_id, store=store)
    assert subsystems.groupby("window")["self_instructions"].sum().to_dict() == {"phase": 1000, "settle": 1000}
    assert subsystems.groupby("window")["self_share"].sum().to_dict() == {"phase": 1.0, "settle": 1.0}
    functions = results.instruction_profile(run.run_id, "function", store=store)
    assert functions[["name", "self_instructions", "inclusive_share"]].iloc[0].tolist() == ["sqlite3VdbeExec", 600, 0.99]
    other = Store(tmp_path / "other")
    assert other.import_runs(store.export_runs([run.run_id], tmp_path / "export")) == [run.run_id]
    assert len(results.instruction_profile(run.run_id, "function", store=other)) == 2
    with pytest.raises(ParameterError, match="kind must be one of"):
        results.instruction_profile(run.run_id, "functions", store=store)


def test_v4_store_gains_an_empty_profiles_table_and_an_export_without_one_imports(store, tmp_path):
    with Run("t", {}, store=store) as run:
        store.append_measurements(run.run_id, 1, _rows(run.run_id, 2))
    (store.root / "schema_version").write_text("4\n")
    assert results.instruction_profile(run.run_id, store=store).empty  # measured, nothing under valgrind
    assert (store.root / "schema_version").read_text().strip() == str(SCHEMA_VERSION) == "5"
    exported = store.export_runs([run.run_id], tmp_path / "export")
    (exported / "profiles.parquet").unlink()  # as a v4 benchlib exported it
    other = Store(tmp_path / "other")
    assert other.import_runs(exported) == [run.run_id]
    assert len(results.measurements(run.run_id, other)) == 2
