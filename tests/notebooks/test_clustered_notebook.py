"""The clustered-vs-heap notebook at tiny scale: its battery and key-kind rows land in the store
with the engines' own counters, and NULL (not 0) where an engine has no counter."""
import json

import pandas as pd
import pytest

from benchlib import batch, results
from benchlib.store import Store
from benchlib.workloads.clustered import ClusteredReport

pytestmark = [pytest.mark.notebook, pytest.mark.docker]

NOTEBOOK = batch.find_notebook("02-clustered-vs-heap")


def test_rows_land_in_the_store(tiny_run, run_ids_in):
    (run_id,) = run_ids_in(tiny_run.executed)
    df = results.measurements(run_id, Store.default())
    assert {"postgres", "mariadb", "sqlite"} <= set(df["engine"])
    steps = {json.loads(x).get("step") for x in df["labels"]} - {None}
    assert steps == {"load", "points-covered-pk.pre", "points-notcovered-pk.pre", "update-inlist", "insert"}
    reads = df[(df["metric"] == "engine_reads") & (df["window"] == "phase")]
    assert set(reads["source"]) == {"pg_stat_database.blks_read", "Innodb_buffer_pool_reads"}
    assert reads["value"].notna().all() and (reads["status"] == "ok").all()
    sysbench_rows = df[(df["source"] == "sysbench") & (df["metric"] == "transactions")]
    assert (sysbench_rows["value"] > 0).all()
    sizes = df[df["metric"] == "table_bytes"]
    assert set(sizes["engine"]) == {"postgres", "mariadb", "sqlite"} and (sizes["value"] > 0).all()
    inserts = df[(df["phase"] == "key-insert") & (df["metric"] == "cpu_time") & (df["window"] == "phase")]
    assert set(inserts["check_status"]) == {"ok"} and set(inserts["check_value"]) == {1000}


def test_report_has_the_spreadsheet_and_key_table(tiny_run, run_ids_in):
    (run_id,) = run_ids_in(tiny_run.executed)
    report = ClusteredReport(run_id)
    assert report.base == "mariadb"
    table = report.spreadsheet_frame("cached")
    assert "geometric mean" in table.index and table.shape[1] == 4
    keys = report.keys
    assert set(keys["layout"]) >= {"rowid", "without rowid"}
    assert (keys["bytes_per_row"] > 0).all()
    # r/o is storage reads in each engine's own page size, from the pages it reported per window
    pages = report.steps.drop_duplicates("engine").set_index("engine")["page_bytes"]
    assert pages.to_dict() == {"postgres": 8192, "mariadb": 16384}
    assert report.steps["storage_reads_per_op"].notna().all()
    assert (report.steps["data_bytes"] > 0).all()
    page = tiny_run.html.read_text()
    assert "When does a clustered primary key win" in page and "MARIADB_ROOT_PASSWORD" not in page
    # One repetition (the tiny set): no noise estimate, so no cell is coloured and the findings say so.
    assert "one repetition per test: noise unknown, so nothing is coloured" in page
    # A cached tiny table reads (almost) nothing from storage: its storage ratios are n/a, not ratios.
    assert set(report.ratios["verdict"]) <= {"same", "untested", "n/a", "floor", "unjudged"}
    assert "storage pages per operation (a ratio of two near-zeros)" in page
    assert "within-start noise only" in page  # back-to-back repetitions in one start
    assert ("pages/o", "pages/o") in report.spreadsheet_frame("cached").columns.map(lambda c: (c[1], "pages/o"))
    # This run's columns are pages/o and rKB/o; r/o is named only as the seed's column they stand beside.
    assert "r/o" not in report.caveats().replace("pages/o", "").replace("rKB/o", "").replace("cpu/o", "").replace(
        "seed 003's r/o", "")
    assert "MariaDB innodb_change_buffering=" in page  # read from the server, never assumed
    # Each server engine's PK index, as it reports it: smaller than the table with its indexes, the
    # heap's by far (InnoDB's clustered index holds the rows).
    sizes = report.steps[report.steps["step"] != "load"].drop_duplicates("engine").set_index("engine")
    assert 0 < sizes.loc["postgres", "pk_index_bytes"] < 0.5 * sizes.loc["postgres", "data_bytes"]
    assert 0.5 * sizes.loc["mariadb", "data_bytes"] < sizes.loc["mariadb", "pk_index_bytes"] <= \
        sizes.loc["mariadb", "data_bytes"]
    # Isolation as each server said it at its start; MariaDB's own answer for innodb_snapshot_isolation
    # (a value, or absent), never a default filled in.
    note = report.isolation_note()
    assert "PostgreSQL transaction_isolation=read committed" in note and "MariaDB transaction_isolation=" in note
    assert "innodb_snapshot_isolation" in note and "Not read" not in note
    assert "PostgreSQL transaction_isolation=read committed" in page
    assert "noise unknown on" in report.findings()
