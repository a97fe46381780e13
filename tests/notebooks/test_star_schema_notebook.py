"""The SSB notebook at tiny scale: every engine's five loads and flat build landed with the staged
row counts, sizes read by each engine's own function, every query cold once and hot each
repetition with its answer equal to DuckDB's, ClickHouse's rows read and its cold runs' storage
reads, and a report whose findings and seed figures come from the numbers."""
import json

import pytest

from benchlib import batch, results
from benchlib.store import Store

pytestmark = [pytest.mark.notebook, pytest.mark.docker]

NOTEBOOK = batch.find_notebook("08-star-schema")


def test_loads_sizes_and_checked_answers_land_in_the_store(tiny_run, run_ids_in):
    (run_id,) = run_ids_in(tiny_run.executed)
    m = results.measurements(run_id, Store.default())
    params = batch.load_params(batch.params_file(NOTEBOOK, "tiny"))
    engines = set(params["engines"])
    assert set(m["engine"]) == engines
    # One row per window (a server's window has the engine's and the driver's CPU rows).
    checked = m[(m["window"] == "phase") & m["check_name"].notna()].drop_duplicates("seq")
    loads = checked[checked["phase"].str.startswith("load ") | (checked["phase"] == "build lineorder_flat")]
    assert {(e, p) for e, p in zip(loads["engine"], loads["phase"])} == {
        (e, p) for e in engines for p in ("load lineorder", "load customer", "load supplier", "load part",
                                          "load dwdate", "build lineorder_flat")}
    assert set(loads["check_status"]) == {"ok"}
    sizes = m[m["metric"] == "table_bytes"]
    assert len(sizes) == 6 * len(engines) and (sizes["value"] > 0).all()
    answers = checked[checked["check_name"].str.startswith("answer")]
    runs = [json.loads(x)["run"] for x in answers["labels"]]
    per_engine = len(params["queries"]) * (1 + params["repetitions"])  # one cold, a hot run per repetition
    assert len(answers) == per_engine * len(engines) and runs.count("cold") == len(params["queries"]) * len(engines)
    assert set(answers["check_status"]) == {"ok"} and set(answers["check_value"]) == {1.0}
    rows_read = m[(m["metric"] == "rows_read") & (m["engine"] == "chdb")]
    assert (rows_read["value"] > 0).all() and len(rows_read) == per_engine
    assert m[(m["metric"] == "rows_read") & (m["engine"] == "postgres")]["status"].eq("not reported").all()
    # The page cache and ClickHouse's own caches dropped before each cold run: it reads from storage.
    cold = m[(m["metric"] == "storage_read_bytes") & (m["engine"] == "chdb") & (m["window"] == "phase")
             & m["labels"].str.contains('"run": "cold"')]
    assert len(cold) == len(params["queries"]) and (cold["value"] > 0).any()


def test_report_answers_from_the_numbers(tiny_run):
    page = tiny_run.html.read_text()
    for heading in ("What this run says", "The 13 queries", "Cold runs", "Engine against engine", "Loading",
                    "Bytes on disk", "Beside seed 001", "Answers and checks"):
        assert heading in page
    assert "Row store against column store:" in page and "ClickHouse on fine-grained filters" in page
    assert "the seed&#x27;s finding" in page or "the seed's finding" in page
    assert "returned the rows of the reference answer" in page and "not independently" in page
    assert "784,337" in page and "55.59 GiB" in page and "more fine-grained than just the year" in page
    names = {p.name for p in tiny_run.figures}
    assert {"ssb-hot-query-times.png", "ssb-load-seconds.png", "ssb-seed-load-cpu-per-row.png"} <= names
