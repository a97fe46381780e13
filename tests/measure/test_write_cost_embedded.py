"""The write sweep on the two embedded engines end to end into a fresh store: real SQLite and
DuckDB, each cell's rows counted, NULL log counters with their status, and the report built."""
import pytest

from benchlib import results
from benchlib.workloads import write_cost


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from benchlib.store import Store

    store = Store(tmp_path_factory.mktemp("wc") / "results")
    params = write_cost.validate_parameters(dict(
        engines=["sqlite", "duckdb"], rows=200, rows_per_txn=[1, 200], rows_per_stmt=[1, 100], server_generated=True,
        repetitions=2, max_repetitions=2, ci_target=0.05, warmup=False, pin_cpus=False, idle_seconds=0.1,
        pk_kind="sequential", max_settle_seconds=0, clusters=[], cluster_nodes={}))
    result = write_cost.run(params, store=store)
    assert result.errors == {}
    return result, store


def test_every_cell_writes_the_same_rows(run):
    result, store = run
    df = results.measurements(result.run_id, store)
    cells = df[(df["phase"] == "insert") & (df["metric"] == "wall_time")]
    assert len(cells) == 2 * 2 * 5 and set(cells["check_value"]) == {200} and set(cells["check_status"]) == {"ok"}
    log = df[df["metric"].isin(["engine_log_bytes", "engine_log_bytes_settle"])]
    assert len(log) == 2 * 2 * 10 and set(log["status"]) == {"not reported"} and log["value"].isna().all()


def test_report_tables_from_the_store(run):
    result, store = run
    report = write_cost.WriteCostReport(result.run_id, store)
    table = report.txn_table()
    assert list(table.index) == ["SQLite", "DuckDB"] and "B io" in table.iloc[0, 0]
    parts = report.decomposition_table()
    # Two repetitions: every part has a CI, and "dominant" is only said when the CIs clear each other.
    assert set(parts["dominant part of a 1-row transaction"]) <= {"commit", "statement", "row",
                                                                 "not separable at this precision"}
    assert all(" ± " in cell for cell in parts["commit µs/row (95% CI)"])
    assert (report.summary["cpu_us_per_row"] > 0).all()
    assert "CockroachDB" in set(report.reference_only_table()["engine"])
    assert "not reported" in set(report.amplification_table()["log bytes / row byte"])
