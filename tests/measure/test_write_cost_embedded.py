"""The write sweep on the two embedded engines end to end into a fresh store: real SQLite and
DuckDB, each cell's rows counted, NULL log counters with their status, and the report built."""
import pytest

from benchlib.data import results
from benchlib.workloads import write_cost


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from benchlib.data.store import Store

    store = Store(tmp_path_factory.mktemp("wc") / "results")
    params = write_cost.validate_parameters(dict(
        engines=["sqlite", "duckdb"], rows=200, rows_per_txn=[1, 200], rows_per_stmt=[1, 100], server_generated=True,
        repetitions=2, max_repetitions=2, ci_target=0.05, warmup=False, pin_cpus=False, idle_seconds=0.1,
        pk_kind="sequential", max_settle_seconds=0, clusters=[], cluster_nodes={}, engine_config={}))
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
    parts = report.parts.set_index("engine")
    # Two repetitions: every part has a CI; whether the largest clears the next is the findings' verdict.
    assert parts[["commit_ci95", "statement_ci95", "row_ci95"]].notna().all().all()
    found = report.findings()
    assert set(found[found["kind"] == "decomposition"]["engine"]) == {"sqlite", "duckdb"}
    assert set(found["verdict"]) <= {"worse", "better", "same", "noise", "n/a"}
    assert (report.summary["engine_per_row"] > 0).all()
    assert "CockroachDB" in set(report.reference_only_table()["engine"])
    assert "not reported" in set(report.amplification_table()["log bytes / row byte"])


def test_every_table_figure_and_sentence_renders_without_postgresql(run):
    """PostgreSQL is the ratios' base: a run without it still renders, and where a figure has
    nothing to draw it says why instead of drawing an empty axis."""
    from benchlib.workloads.write_cost.report import Note

    result, store = run
    report = write_cost.WriteCostReport(result.run_id, store)
    assert report.summary["ratio_to_postgres"].isna().all()
    assert isinstance(report.ratio_figure(), Note) and report.ratio_figure().startswith("No ratio to draw")
    assert len(report.cost_figure().data) == 2  # one panel per engine
    # Neither engine works after a call returns nor reports its log: each figure says so.
    assert isinstance(report.after_figure(), Note) and "no engine here works after a call returns" in report.after_figure()
    assert isinstance(report.amplification_figure(), Note)
    assert not [row for row in report.findings().to_dict("records") if row["kind"] == "bulk"]  # no base
    assert all(line.startswith(("SQLite", "DuckDB")) for line in report.answer_lines())
    report.cell_table().to_html()
    report.decomposition_table().to_html()
    report.appendix()
