"""Reports as a reader sees them at 1280 px in headless Chromium: a table wider than the page
scrolls in its own box instead of widening the page, and a figure whose engines differ 57x still
draws every engine's bar. The notebook report goes through the real render path
(batch.render_html); the site pages through write_folder and write_site_index."""
import datetime as dt
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from benchlib import batch, plots

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is installed by `make setup`")]

WIDTH = 1280

# Runs in the page once it has loaded and plotly has drawn: the page's width against the
# window's, and each bar trace's visible heights (a bar on a log axis is drawn from far below the
# plot area and clipped to it: only the part inside the area counts), written into the DOM for
# --dump-dom to carry out.
CHECK_SCRIPT = """
<pre id="benchlib-check"></pre>
<script>
window.addEventListener("load", function () { setTimeout(function () {
  var bars = {};
  document.querySelectorAll(".js-plotly-plot").forEach(function (gd) {
    var area = gd.querySelector(".nsewdrag").getBoundingClientRect();
    gd.querySelectorAll(".barlayer .trace").forEach(function (trace, i) {
      bars[gd.data[i].name] = Array.from(trace.querySelectorAll(".point path")).map(function (p) {
        var r = p.getBoundingClientRect();
        return Math.max(0, Math.min(r.bottom, area.bottom) - Math.max(r.top, area.top));
      });
    });
  });
  document.getElementById("benchlib-check").textContent = JSON.stringify({
    scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth, bars: bars});
}, 1000); });
</script>
"""


def _page_check(page: Path) -> dict:
    dom = subprocess.run([
        "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={tempfile.mkdtemp()}", f"--window-size={WIDTH},900", "--virtual-time-budget=5000",
        "--dump-dom", page.as_uri(),
    ], check=True, capture_output=True, text=True, timeout=120).stdout
    match = re.search(r'<pre id="benchlib-check">(.*?)</pre>', dom, re.S)
    assert match and match[1], "the check script did not run"
    return json.loads(match[1].replace("&quot;", '"').replace("&amp;", "&"))


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
    check = nbformat.v4.new_code_cell("check")
    check.outputs = [output({"text/html": CHECK_SCRIPT})]
    nb.cells = [nbformat.v4.new_markdown_cell("# Wide things\n\nDo they fit?\n\n" + markdown_table), tables,
                figure, check]
    nbformat.write(nb, path)
    return path


def test_a_wide_table_scrolls_in_its_box_and_every_engines_bar_is_drawn(tmp_path):
    html = batch.render_html(_executed_notebook(tmp_path / "wide.ipynb"), tmp_path / "wide.html")
    check = _page_check(html)
    assert check["innerWidth"] == WIDTH
    assert check["scrollWidth"] <= WIDTH, f"the page is {check['scrollWidth']} px wide at {WIDTH} px"
    bars = check["bars"]
    assert set(bars) == {"PostgreSQL", "MariaDB", "FerretDB (PostgreSQL backend)"}, bars
    # Nonzero and more than a hairline: on a linear axis PostgreSQL's select (0.29 s beside
    # FerretDB's 587 s update) would be drawn 0.15 px tall.
    for engine, heights in bars.items():
        assert len(heights) == 4 and min(heights) >= 2, (engine, heights)


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
        text = page.read_text()
        # The site pages carry no script (a test keeps them so): the check runs in a copy.
        probe = page.with_name(f"probe-{page.name}")
        probe.write_text(text.replace("</body>", CHECK_SCRIPT + "</body>"))
        check = _page_check(probe)
        assert check["scrollWidth"] <= WIDTH, f"{page.name}: {check['scrollWidth']} px wide at {WIDTH} px"
