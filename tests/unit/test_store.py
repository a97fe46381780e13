"""The results store with real Parquet files and DuckDB: concurrent writers, a reader holding
the store open, export/import between machines, schema versions."""
import multiprocessing
import time

import pytest

from benchlib import results
from benchlib.errors import StoreError
from benchlib.measure import Run
from benchlib.store import SCHEMA_VERSION, Store, utcnow


def _rows(run_id: str, n: int, phase: str = "insert") -> list[dict]:
    now = utcnow()
    return [{"run_id": run_id, "instance_id": "x-1", "engine": "sqlite", "experiment": "t", "phase": phase,
             "repetition": 1, "window": "phase", "metric": "cpu_time", "value": float(i), "unit": "s",
             "source": "process", "status": "ok", "started_at": now, "ended_at": now, "check_name": None,
             "check_value": None, "seq": i} for i in range(n)]


def _writer(root: str, tag: str, parts: int) -> None:
    store = Store(__import__("pathlib").Path(root))
    with Run("concurrency", {"tag": tag}, store=store) as run:
        for seq in range(parts):
            store.append_measurements(run.run_id, seq, _rows(run.run_id, 10))
            time.sleep(0.01)


def test_two_processes_writing_runs_at_once_both_land(store):
    # A reader holds a DuckDB connection on the store the whole time, like a notebook kernel would.
    reader = store.connect()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(store.root), tag, 20)) for tag in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    reader.close()
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
                "cgroup_layout", "perf_support"):
        assert info[key] not in (None, ""), key
    assert info["schema_version"] == SCHEMA_VERSION


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


def test_compare_runs_gives_ratios(store):
    ids = []
    for scale in (1.0, 2.0):
        with Run("t", {}, store=store) as run:
            rows = _rows(run.run_id, 2)
            for r in rows:
                r["value"] = scale * 10
            store.append_measurements(run.run_id, 1, rows)
            ids.append(run.run_id)
    cmp = results.compare_runs(ids[0], ids[1], store=store)
    assert list(cmp["ratio_b_over_a"]) == [2.0]


def test_finished_run_is_compacted_into_one_file_without_losing_rows(store):
    with Run("t", {}, store=store) as run:
        for seq in range(1, 6):
            store.append_measurements(run.run_id, seq, _rows(run.run_id, 3))
        assert len(list((store.root / "measurements" / run.run_id).glob("*.parquet"))) == 5
    files = list((store.root / "measurements" / run.run_id).glob("*.parquet"))
    assert [f.name for f in files] == ["compacted.parquet"]
    assert len(results.measurements(run.run_id, store)) == 15
