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


def test_every_table_figure_and_sentence_renders_without_postgresql(run):
    """PostgreSQL is the ratios' base: a run without it still renders, and the ratio figure says
    why it is empty instead of failing."""
    result, store = run
    report = write_cost.WriteCostReport(result.run_id, store)
    assert report.summary["ratio_to_postgres"].isna().all()
    ratio = report.ratio_figure()
    assert not ratio.data and ratio.layout.annotations[-1].text.startswith("no ratio: PostgreSQL")
    assert len(report.cpu_figure().data) == 2  # one panel per engine
    # Neither engine works after a call returns nor reports its log: each figure says so.
    assert report.after_figure().layout.annotations[-1].text.startswith("no settle window")
    assert report.amplification_figure().layout.annotations[-1].text.startswith("no engine in this run reports")
    for text in (report.findings(), report.what_seed_hides(), report.caveats(), report.replication_findings()):
        assert isinstance(text, str)
    assert "SQLite" in report.findings()
    report.cell_table().to_html()
    report.decomposition_table()

