"""Reports as a reader sees them at 1280 px in headless Chromium: a table wider than the page
scrolls in its own box instead of widening the page, and a figure whose engines differ 57x still
draws every engine's bar. The notebook report goes through the real render path
(batch.render_html); the site pages through write_folder and write_site_index."""
import datetime as dt
import shutil
from pathlib import Path

import pytest

from benchlib import batch
from benchlib.present import plots
from benchlib.batch import layout

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is installed by `make setup`")]

WIDTH = layout.WIDTH


def _executed_notebook(path: Path) -> Path:
    """An executed notebook as papermill leaves one, with what can be wider than a page: a pandas
    table and a styled one of 40 wide columns, a Markdown table (in a cell and as an output), a
    long printed line; and the DML figure with FerretDB 57x PostgreSQL as the report renderer
    emits it."""
    import nbformat
    import pandas as pd

    plots.use_report_renderer()
    import plotly.io as pio

    wide = pd.DataFrame([{f"a rather long column name {i}": f"value-{i}-{'x' * 20}" for i in range(40)}] * 3)
    phases = ["insert", "update", "select", "delete"]
    cpu = {"postgres": [7.5, 10.3, 0.29, 0.88], "mariadb": [3.0, 2.08, 0.37, 1.95], "ferretdb": [9.1, 587.1, 0.41, 1.2]}
    df = pd.DataFrame([{"engine": e, "phase": p, "v": v} for e, values in cpu.items() for p, v in zip(phases, values)])
    fig = plots.bars_by_phase(df, "v", title="CPU per phase", unit="CPU s", phases=phases)
    bundle = pio.renderers["benchlib"].to_mimebundle(fig.to_dict())

    def output(data: dict) -> dict:
        return nbformat.v4.new_output("display_data", data=data)

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    markdown_table = "\n".join(["| " + " | ".join(wide.columns) + " |", "|" + "---|" * len(wide.columns),
                                 "| " + " | ".join(wide.iloc[0]) + " |"])
    tables = nbformat.v4.new_code_cell("wide")
    tables.outputs = [
        nbformat.v4.new_output("execute_result", data={"text/html": wide.to_html()}, execution_count=1),
        output({"text/html": wide.style.hide(axis="index").to_html()}),
        output({"text/markdown": markdown_table}),
        nbformat.v4.new_output("stream", name="stdout", text="-".join(wide.iloc[0]) + "\n"),
    ]
    figure = nbformat.v4.new_code_cell("fig.show()")
    figure.outputs = [output(bundle)]
    nb.cells = [nbformat.v4.new_markdown_cell("# Wide things\n\nDo they fit?\n\n" + markdown_table), tables,
                figure]
    nbformat.write(nb, path)
    return path


def test_a_wide_table_scrolls_in_its_box_and_values_far_apart_are_dots_on_a_log_axis(tmp_path):
    html = batch.render_html(_executed_notebook(tmp_path / "wide.ipynb"), tmp_path / "wide.html")
    check = layout.check(html)
    assert check.width == WIDTH
    assert check.scroll_width <= WIDTH, f"the page is {check.scroll_width} px wide at {WIDTH} px"
    # FerretDB's 587 s update beside PostgreSQL's 0.29 s select takes a log axis, where a bar's length
    # means nothing: one dot per engine and phase, no bar (on a linear axis the select would be drawn
    # 0.15 px tall).
    [figure] = check.figures
    assert figure["bars"] == []
    assert check.problems() == [] and check.summary() == "fits 1280 px; 1 figures, 0 bars, no nonzero bar under 2 px"


def test_the_check_names_a_hairline_bar_and_a_page_wider_than_the_window(tmp_path):
    import nbformat
    import pandas as pd
    import plotly.io as pio

    plots.use_report_renderer()
    df = pd.DataFrame([{"engine": "postgres", "phase": "update", "v": 0.29},
                       {"engine": "ferretdb", "phase": "update", "v": 587.1}])
    fig = plots.bars_by_phase(df, "v", title="CPU per phase", unit="CPU s", phases=["update"], log_y=False)
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cell = nbformat.v4.new_code_cell("fig.show()")
    cell.outputs = [nbformat.v4.new_output("display_data", data=pio.renderers["benchlib"].to_mimebundle(fig.to_dict()))]
    nb.cells = [cell]
    nbformat.write(nb, tmp_path / "thin.ipynb")
    check = layout.check(batch.render_html(tmp_path / "thin.ipynb", tmp_path / "thin.html"))
    problems = check.problems()
    assert any("PostgreSQL at update drawn" in p for p in problems), problems
    assert not any("FerretDB" in p for p in problems), problems
    assert check.summary().startswith("1 layout problems at 1280 px: thin.html: figure 'CPU per phase'")


def test_the_check_names_a_page_wider_than_the_window(tmp_path):
    page = tmp_path / "wide.html"
    page.write_text(f'<html><body><div style="width:{WIDTH + 400}px">a fixed-width table</div></body></html>')
    assert layout.check(page).problems() == [f"wide.html: the page is {WIDTH + 408} px wide in a {WIDTH} px window"]


def test_the_shared_browser_once_dropped_starts_again(tmp_path):
    """The checks share one Chromium (batch.browser), dropped after a failed call: the next check
    starts a fresh one and reads the page as the first did."""
    from benchlib.batch import browser

    page = tmp_path / "wide.html"
    page.write_text(f'<html><body><div style="width:{WIDTH + 400}px">a fixed-width table</div></body></html>')
    first = layout.check(page)
    browser.shared().close()
    again = layout.check(page)
    assert (again.width, again.scroll_width) == (first.width, first.scroll_width) == (WIDTH, WIDTH + 408)


def test_site_pages_keep_long_rows_within_the_page(tmp_path):
    root = tmp_path / "reports"
    # Tokens a browser cannot break at a space or hyphen: a set name, a path in an error message.
    folder = batch.new_report_dir("set_" + "x" * 150, root)
    name = "01_a_notebook_" + "n" * 120
    executed = folder / f"{name}.ipynb"
    long_error = "OSError: cannot read " + "/".join(["data", "results"] + [f"run={'x' * 30}"] * 12)
    outcome = batch.NotebookOutcome(name, "default.yaml", False, 12.0, executed, None,
                                    error=long_error, engines=[f"engine-{i}" for i in range(30)],
                                    started_at="2026-11-23T20:00:00+00:00", measured_seconds=3.0)
    batch.write_folder(folder, "batch", "default", [outcome], dt.datetime.now(dt.timezone.utc))
    index = batch.write_site_index(root)
    for page in (index, folder / "index.html"):
        # The site pages carry no script (a test keeps them so): the check runs in a copy.
        check = layout.check(page)
        assert check.scroll_width <= WIDTH, f"{page.name}: {check.scroll_width} px wide at {WIDTH} px"
