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


def test_the_indexes_show_a_short_count_and_count_layout_problems(tmp_path):
    """Hostile read 40 (index item 1): answers carried nested counts ("(2 of 20 comparisons decided
    (18 within noise))") and a full layout warning sat among them. The indexes give the short count
    and the number of layout problems."""
    root = tmp_path / "reports"
    folder = batch.new_report_dir("tiny", root)
    problems = [f"01-dml-cpu-cost.html: figure 'x': PostgreSQL at select drawn 1.{i} px tall" for i in range(4)]
    outcome = batch.NotebookOutcome("01-dml-cpu-cost", "tiny.yaml", True, 60.0, folder / "01.ipynb", folder / "01.html",
                                    answer=LINE, certainty="2 of 20 comparisons decided (18 within noise)",
                                    count="2 of 20 decided", layout_problems=problems,
                                    layout=f"4 layout problems at 1280 px: {'; '.join(problems)}",
                                    started_at="2026-11-27T22:00:00+00:00")
    batch.write_folder(folder, "batch", "tiny", [outcome], dt.datetime.now(dt.timezone.utc))
    for text in ((folder / "summary.txt").read_text(), (folder / "index.html").read_text(),
                 batch.write_site_index(root).read_text()):
        assert f"{LINE} (2 of 20 decided)" in text.replace('<span class="muted">', "").replace("</span>", "")
        assert "within noise)" not in text and "drawn 1.1 px tall" not in text
    assert "4 layout problems at 1280 px" in (folder / "index.html").read_text()


def test_the_index_line_is_the_best_supported_one():
    """Hostile read 40 (index item 2): for 07 the index took the first line, a "one each, so no
    test" one, over a tested line below it. The rule: decided, then tested, then one measurement,
    then no comparison; the first line of the best."""
    from benchlib.data.findings import Verdict

    order = [Verdict(v).support for v in ("untested", "noise", "better", "not_comparable", "drift", "n/a")]
    assert order == [1, 2, 3, 0, 2, 0]
    assert Verdict.FALSE_POSITIVE.support == 2 and not Verdict.FALSE_POSITIVE.decided
