"""Each report's answer line travels from the executed notebook (RunReport.answer's output
metadata) to summary.txt, manifest.json, the batch index and the site index; a report that states
none says so in each."""
import datetime as dt
import json

import nbformat

from benchlib import batch
from benchlib.batch.execute import answer_of
from benchlib.batch.site import NO_ANSWER

LINE = "MySQL vs PostgreSQL: insert 1.3x (1.23-1.37); within noise: delete 2x"


def _executed(path, metadata=None):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("report.answer()")
    if metadata is not None:
        cell.outputs = [nbformat.v4.new_output("display_data", data={"text/html": "<div>answer</div>"},
                                               metadata=metadata)]
    nb.cells = [cell]
    nbformat.write(nb, path)
    return path


def test_the_answer_is_read_from_the_executed_notebook(tmp_path):
    stated = {"benchlib": {"answer": LINE, "lines": [LINE], "certainty": "5 of 8 comparisons decided", "seed": ""}}
    assert answer_of(_executed(tmp_path / "a.ipynb", stated)) == stated["benchlib"]
    assert answer_of(_executed(tmp_path / "b.ipynb", {})) == {}
    assert answer_of(_executed(tmp_path / "c.ipynb")) == {}


def test_indexes_and_summary_show_each_reports_answer_or_say_there_is_none(tmp_path):
    root = tmp_path / "reports"
    folder = batch.new_report_dir("default", root)
    answered = batch.NotebookOutcome("01-dml-cpu-cost", "default.yaml", True, 60.0, folder / "01-dml-cpu-cost.ipynb",
                                     folder / "01-dml-cpu-cost.html", answer=LINE,
                                     certainty="5 of 8 comparisons decided", started_at="2026-11-27T22:00:00+00:00")
    silent = batch.NotebookOutcome("04-client-api-overhead", "default.yaml", True, 30.0,
                                   folder / "04-client-api-overhead.ipynb", folder / "04-client-api-overhead.html",
                                   started_at="2026-11-27T22:01:00+00:00")
    batch.write_folder(folder, "batch", "default", [answered, silent], dt.datetime.now(dt.timezone.utc))
    summary = (folder / "summary.txt").read_text()
    assert f"  answer: {LINE} (5 of 8 comparisons decided)" in summary
    assert f"  answer: {NO_ANSWER}" in summary
    outcomes = {o["notebook"]: o for o in json.loads((folder / "manifest.json").read_text())["outcomes"]}
    assert outcomes["01-dml-cpu-cost"]["answer"] == LINE and outcomes["04-client-api-overhead"]["answer"] is None
    for page in (folder / "index.html", batch.write_site_index(root)):
        html = page.read_text()
        assert LINE in html and f"Answer: {NO_ANSWER}" in html, page
