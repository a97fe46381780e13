"""The cross-run notebook at its tiny set: the newest DML run compared with a rerun of it; the
rerun carries the base run's parameters, and the report shows a ratio for every engine and phase
measured in both."""
import pytest

from benchlib import batch
from benchlib.data import results
from benchlib.compare import ComparisonReport

pytestmark = [pytest.mark.notebook, pytest.mark.docker]

COMPARE = next(nb for nb in batch.notebooks() if nb.stem == "06-compare-runs")
DML = next(nb for nb in batch.notebooks() if nb.stem == "01-dml-cpu-cost")


def test_rerun_repeats_the_newest_dml_run_and_every_cell_is_compared(tiny_outcomes, run_ids_in):
    tiny_outcomes(DML)  # a finished DML run exists whatever order the tests ran in
    outcome = tiny_outcomes(COMPARE)
    assert outcome.ok, outcome.error
    (rerun,) = run_ids_in(outcome.executed)
    info = results.run_info(rerun)
    previous = results.runs(experiment="dml", limit=50)
    previous = previous[(previous["started_at"] < info["started_at"]) & previous["status"].isin(["ok", "partial"])]
    base = previous.iloc[0]["run_id"]
    stored = {k: v for k, v in results.run_info(base)["parameters"].items() if k not in ("skipped", "engines")}
    assert {k: v for k, v in info["parameters"].items() if k not in ("skipped", "engines")} == stored
    # tiny.yaml reruns two of the base run's engines (rerun_engines), the default set's choice.
    assert info["parameters"]["engines"] == ["postgres", "sqlite"]
    assert set(info["parameters"]["engines"]) <= set(results.run_info(base)["parameters"]["engines"])

    report = ComparisonReport([base, rerun])
    compared = report.compared
    engines = set(results.measurements(base)["engine"]) & set(results.measurements(rerun)["engine"])
    assert set(compared["engine"]) == engines == {"postgres", "sqlite"}
    assert set(compared["phase"]) == {"insert", "update", "select", "delete"}
    assert compared["ratio"].between(0.05, 20).all()  # the same work on the same host
    assert compared["welch_t"].notna().all()  # tiny runs have 2 repetitions: every cell tested
    found = report.findings()
    # Two repetitions: all tested; between identical reruns a flagged cell is the rule's false positive, never a change.
    assert set(found["verdict"]) <= {"false_positive", "same", "noise", "drift"}
    assert set(found["caveats"]) == {("rerun",)}  # the same work again: every change is run-to-run variation
    page = outcome.html.read_text().replace("&#39;", "'")
    assert "Seed 003's spreadsheet" in page and "geometric mean" in page
