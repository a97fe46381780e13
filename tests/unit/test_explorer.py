"""The run explorer page from a real store and a real report folder: written by the site index
(the hook `make report` runs) and by `benchlib site`, self-contained, linking each run to the
report that lists it, cut to the newest runs when asked; and in headless Chromium from disk with
name resolution disabled, a selection in the URL hash draws the bars and fills the tables."""
import hashlib
import importlib.util
import json
import re
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

import plotly.offline
import pytest

from benchlib import batch, cli
from benchlib.compare import explorer
from benchlib.data import results
from benchlib.data.store import Store
from synthetic_runs import write_run

STEADY = [1.0, 1.02, 0.98, 1.01, 0.99]
MARIADB = [0.5, 0.51, 0.49, 0.5, 0.5]


@pytest.fixture
def site(tmp_path, monkeypatch):
    """Three DML runs (PostgreSQL 30% dearer on insert in the last) and a report folder whose
    manifest lists the second; the default store and reports folder of the test."""
    monkeypatch.setenv("BENCHLIB_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("BENCHLIB_REPORTS_DIR", str(tmp_path / "reports"))
    store = Store.default()
    for day, factor in ((1, 1.0), (2, 1.0), (3, 1.3)):
        write_run(store, f"r{day}", day, {"postgres": {"insert": [v * factor for v in STEADY], "update": STEADY},
                                          "mariadb": {"insert": MARIADB, "update": MARIADB}},
                  versions={"postgres": f"PostgreSQL 17.{day}", "mariadb": "MariaDB 11.8.6"})
    folder = tmp_path / "reports" / "20261102T000000Z-abcdef-01-dml-cpu-cost"
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({
        "kind": "run", "name": "01-dml-cpu-cost", "complete": True, "started_at": "2026-11-02T00:00:00+00:00",
        "outcomes": [{"notebook": "01-dml-cpu-cost", "ok": True, "html": "01-dml-cpu-cost.html", "run_ids": ["r2"]}]}))
    return tmp_path / "reports"


def _data(page) -> dict:
    text = re.search(r'<script type="application/json" id="explorer-data">(.*?)</script>', page.read_text(),
                     re.S).group(1)
    return json.loads(text)


def test_site_index_writes_a_self_contained_explorer_of_every_run(site):
    batch.write_site_index(site)
    page = site / "explorer.html"
    text = page.read_text()
    assert not re.search(r"<script[^>]*\bsrc=|<link[^>]*\bhref=\"?https?:", text), "the page loads something"
    assert text.count(explorer.plotly_js()) == 1  # the partial bundle, embedded once
    assert plotly.offline.get_plotlyjs() not in text  # not the full plotly.js the notebooks' reports embed
    assert "charts: plotly.js-basic-dist-min 4.1.1 (MIT)" in text
    assert len(re.findall(r"<script", text)) == 3  # data, the page's script, plotly.js
    data = _data(page)
    assert [r["id"] for r in data["runs"]] == ["r1", "r2", "r3"] and "all 3 runs in the store" in text
    links = {r["id"]: r["report"] for r in data["runs"]}
    assert links == {"r1": None, "r2": "20261102T000000Z-abcdef-01-dml-cpu-cost/01-dml-cpu-cost.html", "r3": None}
    metrics = [m["id"] for m in data["metrics"]]
    assert metrics[0] == "engine:cpu_time/op" and "engine:wall_time" in metrics
    (change,) = data["changes"]  # judged worse by findings.judge; the steady runs are not listed
    assert data["verdicts"][change["verdict"]]["key"] == "worse"
    compared = data["compare"]["dml|0"]  # each engine's newest run, against every other as base
    assert {data["runs"][r]["id"] for r in compared["runs"].values()} == {"r3"}
    assert len(compared["rows"]) == 4 and all(data["verdicts"][r[6]]["decided"] for r in compared["rows"])
    assert data["runs"][change["to"]]["id"] == "r3" and change["direction"] == "regression"
    assert (change["from_version"], change["to_version"]) == ("PostgreSQL 17.2", "PostgreSQL 17.3")
    assert "explorer.html" in (site / "index.html").read_text()


def test_the_vendored_bundle_is_the_registry_file_its_source_names():
    """scripts/vendor_plotly_basic.sh records where the file came from (the registry's tarball and
    integrity hash, the file's sha256): an edited or swapped file fails here."""
    source = explorer.plotly_source()
    js = (explorer.PLOTLY_DIR / source["file"]).read_bytes()
    assert hashlib.sha256(js).hexdigest() == source["sha256"]
    assert js.startswith(f"/**\n* plotly.js (basic - minified) v{source['version']}\n".encode())
    assert source["tarball"].endswith(f"/{source['package']}-{source['version']}.tgz") and source["license"] == "MIT"
    assert "MIT License" in (explorer.PLOTLY_DIR / "LICENSE").read_text()


def test_the_page_says_where_it_cuts_a_large_store(site):
    page = explorer.write_explorer(site, max_runs=2)
    assert [r["id"] for r in _data(page)["runs"]] == ["r2", "r3"]
    assert "the newest 2 of 3 runs, since 2026-11-03 00:00:00 UTC" in page.read_text()
    # The figure budget cuts too: one run's figures fit, two do not.
    one_run = len([1 for r in _data(page)["cells"]["run"] if r == 1])
    assert [r["id"] for r in _data(explorer.write_explorer(site, max_figures=one_run))["runs"]] == ["r3"]


def test_an_unreadable_store_still_gives_a_page_that_says_so(site, capsys):
    (Store.default().root / "schema_version").write_text("99\n")  # from a newer benchlib
    text = explorer.write_explorer(site).read_text()
    assert "the results store could not be read" in text and "schema version 99" in text
    assert "schema version 99" in capsys.readouterr().err


def test_site_command_rewrites_index_and_explorer(site, capsys):
    assert cli.main(["site"]) == 0
    assert (site / "index.html").exists() and (site / "explorer.html").exists()
    assert str(site / "explorer.html") in capsys.readouterr().out


def test_site_command_on_a_new_checkout_says_there_is_no_run(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHLIB_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("BENCHLIB_REPORTS_DIR", str(tmp_path / "reports"))
    assert cli.main(["site"]) == 0
    assert "No run in the store yet." in (tmp_path / "reports" / "explorer.html").read_text()


def _cells_table(dom: str) -> list[dict]:
    table = re.search(r'<table id="cells">(.*?)</table>', dom, re.S).group(1)
    rows = []
    for attrs, body in re.findall(r"<tr (data-engine[^>]*)>(.*?)</tr>", table, re.S):
        row = dict(re.findall(r'data-(\w+)="([^"]*)"', attrs))
        row["cells"] = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", body, re.S)]
        rows.append(row)
    return rows


@pytest.mark.browser
@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium (scripts/setup.sh installs it)")
def test_a_selection_in_the_url_draws_bars_relative_to_the_base_offline(site):
    page = explorer.write_explorer(site)
    selection = "#experiment=dml&runs=r1,r3&phases=insert&metric=engine:cpu_time/op&base=r1:postgres"
    profile = tempfile.mkdtemp(prefix="explorer-test-chromium-")
    try:
        dom = subprocess.run([
            "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={profile}", "--dump-dom",
            # The figures are drawn after the load event (plotly.js is evaluated once the tables are
            # painted): virtual time lets the timers run before the DOM is dumped.
            "--virtual-time-budget=60000",
            page.as_uri() + selection,
        ], capture_output=True, text=True, timeout=120, check=True).stdout
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    assert 'data-ready="yes"' in dom, "the page did not finish drawing"
    body = dom[dom.index("<h1"):]
    bars = re.search(r'<div id="bars".*?<p class="links"', body, re.S).group(0)
    assert bars.count('class="trace bars"') == 4  # two engines x two runs
    assert bars.count('class="yerror"') >= 4  # each bar's 95% CI
    legend = re.findall(r'class="legendtext"[^>]*data-unformatted="([^"]*)"', bars)
    assert sorted(name.split(" · ")[0] for name in legend) == ["MariaDB", "MariaDB", "PostgreSQL", "PostgreSQL"]
    rows = {(r["engine"], r["run"]): r for r in _cells_table(body)}
    assert set(rows) == {("postgres", "r1"), ("postgres", "r3"), ("mariadb", "r1"), ("mariadb", "r3")}
    assert {r["variant"] for r in rows.values()} == {"insert"}
    # The page's ratio and CI to the base are results.contrast's.
    summary = results.summarize(*_insert_costs(), columns=("value",), by=("run_id", "engine"))
    expected = results.contrast(summary.iloc[0], summary.iloc[1], "value")
    ratio, ci = (float(x) for x in rows[("postgres", "r3")]["cells"][7].split(" ± "))
    assert ratio == pytest.approx(expected["ratio"], rel=1e-3) and ci == pytest.approx(expected["ratio_ci95"], rel=0.02)
    # The page opens on the comparison: each engine's newest run against the base engine (PostgreSQL,
    # first in catalog order), its ratio, CI and verdict from findings rows written by Python.
    compare = re.search(r'<table id="compare-table">(.*?)</table>', body, re.S).group(1)
    cell = re.search(r'<tr data-engine="mariadb"><th>MariaDB</th><td class="verdict-better" data-verdict="better">'
                     r'<a href="#([^"]+)">0.385x \(0.376–0.393\)</a>', compare)
    assert cell, compare
    assert "runs=r3" in cell[1] and "phases=insert" in cell[1]  # one click to the raw figures of that cell
    assert re.search(r'<div id="compare".*?class="trace scatter', body, re.S)
    assert body.index('id="compare"') < body.index('id="bars"')
    assert rows[("postgres", "r1")]["cells"][1] == "PostgreSQL 17.1"  # provenance beside the figure
    assert "20261102T000000Z-abcdef-01-dml-cpu-cost/01-dml-cpu-cost.html" not in rows[("postgres", "r1")]["cells"][2]
    changes = re.findall(r'<tr class="change" data-engine="(\w+)" data-direction="(\w+)"', body)
    assert changes == [("postgres", "regression")]
    assert re.search(r'<div id="history".*?class="trace scatter', body, re.S)  # the series over time


def _insert_costs():
    import pandas as pd

    rows = [{"run_id": run, "engine": "postgres", "value": v * 1000.0} for run, factor in (("r1", 1.0), ("r3", 1.3))
            for v in (x * factor for x in STEADY)]  # µs per row: rows=1000
    return (pd.DataFrame(rows),)


BUDGET_MB, BUDGET_MS = 10.0, 2000.0  # issue 25: 100 runs x 200 windows, < 10 MB, opens in < 2 s
# The errors bars drawn and a hover label shown once every figure is drawn, with plotly.js's own
# hover (the partial bundle keeps both).
PROBE = """new Promise((done) => {
  const bars = document.getElementById("bars");
  Plotly.Fx.hover(bars, [{curveNumber: 0, pointNumber: 0}]);
  setTimeout(() => done({errorbars: bars.querySelectorAll("g.errorbar path").length,
                         hover: [...bars.querySelectorAll(".hoverlayer .hovertext")].map((n) => n.textContent)}), 200);
})"""


def _bench():
    path = Path(__file__).resolve().parents[2] / "scripts" / "bench_explorer.py"
    spec = importlib.util.spec_from_file_location("bench_explorer", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.browser
@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium (scripts/setup.sh installs it)")
def test_a_page_of_100_runs_x_200_windows_is_under_10_mb_and_draws_every_figure_within_2_s(tmp_path):
    """The size and speed budget, measured as scripts/bench_explorer.py measures it: the median of
    three loads in headless Chromium from disk, to every figure drawn (the history last)."""
    bench = _bench()
    page = explorer.write_explorer(tmp_path / "reports", store=bench.build_store(tmp_path / "results", 100, 200))
    assert len(_data(page)["runs"]) == 100
    size_mb = page.stat().st_size / 1e6
    assert size_mb < BUDGET_MB, f"the page weighs {size_mb:.2f} MB"
    loads = [bench.load_once(page, PROBE) for _ in range(3)]
    every_figure_ms = statistics.median(load[3] for load in loads)
    assert every_figure_ms < BUDGET_MS, f"every figure drawn at {every_figure_ms:.0f} ms (median of {loads})"
    probe = loads[-1][-1]
    assert probe["errorbars"] > 0 and probe["hover"], probe
    assert re.search(r"run bench-\d{4}", " ".join(probe["hover"])), probe  # the bar's own hover template
