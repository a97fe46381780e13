"""The write-cost notebook at tiny scale: every engine's cells landed in the store with their
labels, the engine's log bytes where it has a counter and an explicit "not reported" where it has
none, the client scope beside the servers, and the report's figures."""
import json

import pytest

from benchlib import batch
from benchlib.data import results
from benchlib.data.store import Store

pytestmark = [pytest.mark.notebook, pytest.mark.docker]

NOTEBOOK = batch.find_notebook("05-write-cost")


def test_cells_land_in_the_store_with_log_bytes_or_not_reported(tiny_run, run_ids_in):
    (run_id,) = run_ids_in(tiny_run.executed)
    df = results.measurements(run_id, Store.default())
    assert {"postgres", "mysql", "mariadb", "mariadb-myrocks", "sqlite", "duckdb"} <= set(df["engine"])
    cells = {(lab["rows_per_txn"], lab["rows_per_stmt"], lab["rows_from"])
             for lab in map(json.loads, df[df["phase"] == "insert"]["labels"])}
    assert cells == {(1, 1, "client VALUES"), (100, 1, "client VALUES"), (100, 100, "client VALUES"),
                     (1, 1, "server generator"), (100, 100, "server generator")}
    inserts = df[(df["phase"] == "insert") & (df["metric"] == "cpu_time")]
    assert set(inserts["check_value"]) == {100} and set(inserts["check_status"]) == {"ok"}
    log = df[df["metric"] == "engine_log_bytes"]
    servers = df[df["metric"].isin(["engine_log_bytes", "engine_log_bytes_settle"])
                 & df["engine"].isin(["postgres", "mysql", "mariadb", "mariadb-myrocks"])]
    assert set(servers["status"]) == {"ok"} and (servers["value"] >= 0).all(), servers.to_string()
    # An engine may move its log position after the window closes (MySQL's and MariaDB's log
    # writer threads), so only window + settle together must show the committed rows.
    grown = servers.groupby(["engine", "repetition", "labels"])["value"].sum()
    assert (grown > 0).all(), grown.to_string()
    embedded = log[log["engine"].isin(["sqlite", "duckdb"])]
    assert set(embedded["status"]) == {"not reported"} and embedded["value"].isna().all()
    # Beside the engine and its driver: the wait for quiet (harness), the host-speed loop (calibration)
    # and the hypervisor's steal time over each window (host).
    assert set(df[df["engine"] == "postgres"]["scope"]) == {"server", "client", "harness", "calibration", "host"}
    assert set(df[(df["engine"] == "postgres") & (df["phase"] == "insert")]["window"]) == {"phase", "settle"}
    # Issue 37 item 1: every server cell is followed by an idle window of its own (its labels), the
    # idle rate its windows are net of; the start's baseline stays, with the start's labels.
    idle = df[(df["window"] == "baseline") & (df["metric"] == "cpu_time") & df["scope"].isin(["server", "embedded"])]
    for engine in ("postgres", "mysql"):
        mine = idle[idle["engine"] == engine]
        assert {json.loads(x).get("rows_per_txn") for x in mine["labels"]} == {None, 1, 100}
        assert set(mine.groupby("instance_id").size()) == {1 + 5}  # per start: its own, then one per cell
    assert set(idle[idle["engine"] == "sqlite"]["labels"]) == {"{}"}  # no settle window, no idle window per cell


def test_report_has_heatmaps_and_reference_only_engines(tiny_run):
    page = tiny_run.html.read_text()
    assert page.count("Plotly.newPlot") >= 4
    assert "CockroachDB" in page
    assert "the write_cost workload has no dialect for it" in page.replace("&#39;", "'")
    names = {p.name for p in tiny_run.figures}
    assert {"write-cost-parts.png", "write-cost-cpu.png", "write-cost-ratio.png"} <= names
    assert "This run asks:" not in page  # the title asks it; a run with clusters asks what replication adds


def test_report_splits_a_server_write_into_engine_and_driver_and_states_durability(tiny_run):
    page = tiny_run.html.read_text().replace("&#39;", "'")
    assert "commit (µs/row)" in page and ">driver</td>" in page
    # What each engine's commit waited for, as it reported it at start.
    assert "Durability as each engine started" in page and "synchronous_commit=on" in page
    assert "innodb_flush_log_at_trx_commit=1" in page and "synchronous=" in page
    assert "Client path:" in page
