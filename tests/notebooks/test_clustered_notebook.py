"""The clustered-vs-heap notebook at tiny scale: its battery and key-kind rows land in the store
with the engines' own counters, and NULL (not 0) where an engine has no counter; its report
answers first, from findings rows."""
import json

import pytest

from benchlib import batch
from benchlib.data import results
from benchlib.data.store import Store
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


def test_the_report_answers_first_from_its_findings(tiny_run, run_ids_in):
    (run_id,) = run_ids_in(tiny_run.executed)
    report = ClusteredReport(run_id)
    assert report.base == "mariadb"  # its dialect stores rows in a clustered B-tree
    found = report.findings()
    assert set(found["engine"]) == {"postgres"} and set(found["regime"]) == {"cached"}
    assert set(found["column"]) == {"QPS", "cpu/o", "pages/o", "rKB/o"}
    # One repetition (the tiny set): no noise estimate, so nothing is called better or worse; a cached tiny
    # table reads (almost) nothing from storage, so its storage ratios are not comparable.
    assert set(found["verdict"]) <= {"untested", "not_comparable", "n/a"}
    assert set(found.loc[found["column"] == "rKB/o", "verdict"]) == {"not_comparable"}
    head = found[found["headline"]]
    # Seed 003's classes, then the load (hostile read 43, 02 #3: the largest gap on its chart was left out).
    assert list(head["step"]) == ["load", "points-covered-pk.pre", "points-notcovered-pk.pre", "update-inlist", "insert"]
    # The first answer line travels to the indexes through the output's metadata.
    nb = json.loads(tiny_run.executed.read_text())
    answers = [o["metadata"]["benchlib"]["answer"] for c in nb["cells"] for o in c.get("outputs", [])
               if "benchlib" in o.get("metadata", {})]
    # The indexes' line is plain text: no bold, no footnote marks (the page's marks point into its notes).
    assert answers == [report.index_line(report.answer_lines())] and answers[0].startswith("Covered PK reads (points-covered")
    assert "<sup>" in report.answer_lines()[0] and "<sup>" not in answers[0]
    assert "cached: PostgreSQL" in answers[0] and "MariaDB's QPS" in answers[0] and "measured once" not in answers[0]
    assert sum("measured once" in line for line in report.answer_lines()) == 1  # said once, under the lines
    page = tiny_run.html.read_text()
    assert "When does a clustered primary key win" in page and "MARIADB_ROOT_PASSWORD" not in page
    assert page.index("benchlib-answer") < page.index("benchlib-findings") < page.index("benchlib-appendix")
    # Read from the server, never assumed: the appendix's table of what each start read.
    settings = report.settings_table().data.set_index("engine")["settings"]
    assert "innodb_change_buffering=" in settings["MariaDB"] and "innodb_change_buffering=" in page
    # Each server engine's PK index, as it reports it: smaller than the table with its indexes, the
    # heap's by far (InnoDB's clustered index holds the rows).
    keys = report.keys
    assert set(keys["layout"]) >= {"rowid", "without rowid"} and (keys["bytes_per_row"] > 0).all()
    pages = report.steps.drop_duplicates("engine").set_index("engine")["page_bytes"]
    assert pages.to_dict() == {"postgres": 8192, "mariadb": 16384}
    assert report.steps["storage_reads_per_op"].notna().all()
    sizes = report.steps[report.steps["step"] != "load"].drop_duplicates("engine").set_index("engine")
    assert 0 < sizes.loc["postgres", "pk_index_bytes"] < 0.5 * sizes.loc["postgres", "data_bytes"]
    assert 0.5 * sizes.loc["mariadb", "data_bytes"] < sizes.loc["mariadb", "pk_index_bytes"] <= \
        sizes.loc["mariadb", "data_bytes"]
    # Isolation as each server said it at its start (the shared appendix).
    note = report.isolation_note()
    assert "PostgreSQL transaction_isolation=read committed" in note and "MariaDB transaction_isolation=" in note
    assert "innodb_snapshot_isolation" in note and "Not read" not in note
    # One repetition: no cell is better or worse, so no all-grey heatmap is drawn, and no words about one.
    assert report.heatmap() is None and "No heatmap" not in page
    assert report.storage_table() is None  # no IO-bound regime ran
    assert list(report.layout_table().data["reads"]) == ["points", "points"]  # PostgreSQL, MariaDB
