"""The DML notebook at tiny scale: its rows with provenance, checks and scopes, and its report
as a reader sees it in headless Chromium."""
import json
import re
import shutil
import subprocess
import tempfile
import time

import pytest

from benchlib import batch
from benchlib.data import results
from benchlib.host.docker_host import docker_client
from benchlib.data.store import Store

pytestmark = [pytest.mark.notebook, pytest.mark.docker]

NOTEBOOK = batch.find_notebook("01-dml-cpu-cost")
POSTGRES_BLUE = (0x33, 0x67, 0x91)


def test_rows_land_in_the_store_with_provenance(tiny_run, run_ids_in):
    store = Store.default()
    (run_id,) = run_ids_in(tiny_run.executed)
    df = results.measurements(run_id, store)
    assert {"postgres", "mysql", "sqlite", "duckdb"} <= set(df["engine"])
    # The article's phases, and once per repetition the host-speed loop.
    assert set(df["phase"]) == {"sleep", "insert", "update", "select", "delete", "calibration"}
    assert set(df["repetition"]) == {1, 2}
    checks = df[df["metric"] == "cpu_time"].groupby("phase")["check_value"].agg(["min", "max"])
    assert checks.loc["insert"].tolist() == [2000, 2000] and checks.loc["delete"].tolist() == [0, 0]
    assert set(df[~df["phase"].isin(["sleep", "calibration"])]["check_status"]) == {"ok"}
    assert set(df[df["phase"] == "sleep"]["window"]) == {"baseline"}
    servers = df[df["engine"].isin(["postgres", "mysql"])]
    # harness: the wait for quiet stored with each baseline; calibration: the host-speed loop;
    # host: the steal time the hypervisor counted during each window (host-wide, not the engine's)
    assert set(servers["scope"]) == {"server", "client", "harness", "calibration", "host"}
    assert set(df[df["engine"].isin(["sqlite", "duckdb"])]["scope"]) <= {"embedded", "calibration", "host"}
    host = df[df["scope"] == "host"]
    assert set(host["metric"]) == {"host_steal_time"} and (host["value"] >= 0).all()
    inst = results.instances(run_id, store).set_index("engine")
    for key in ("postgres", "mysql"):
        assert inst.loc[key, "server_version"].iloc[0] and inst.loc[key, "image_id"].iloc[0].startswith("sha256:")
    info = results.run_info(run_id, store)
    assert info["parameters"]["rows"] == 2000 and info["kernel"] and info["cpu_model"]


def test_report_is_self_contained_with_figures(tiny_run):
    page = tiny_run.html.read_text()
    assert not re.search(r"<script[^>]*\bsrc=", page), "the report loads a script from elsewhere"
    assert page.count("Plotly.newPlot") >= 2
    assert "<h1" in page and "What does simple DML cost each engine?" in page
    assert "dml.run(params" not in page and "report.cost_figure(" not in page  # code cells hidden
    assert "POSTGRES_PASSWORD" not in page and "MARIADB_ROOT_PASSWORD" not in page
    # Nothing between the question and the answer: no engines line from begin(), no run announcement.
    top = page[page.index("What does simple DML cost each engine?"):page.index('class="benchlib-answer"')]
    assert "engines:" not in top and "read back from the results store" not in top
    assert page.index('class="benchlib-answer"') < page.index('class="benchlib-findings"') < \
        page.index('class="benchlib-appendix"')
    names = {p.name for p in tiny_run.figures}
    assert {"dml-ratios.png", "dml-ratios.svg", "dml-value.png"} <= names
    # Issue 37.12: outside the appendix the report names only the engines that ran.
    from benchlib.engines import ENGINES

    read = page[:page.index('<details class="benchlib-appendix"')] + page[page.index("</details>", page.index(
        '<details class="benchlib-appendix"')):]
    ran = set(batch.load_params(batch.params_file(NOTEBOOK, "tiny"))["engines"])
    named = {key for key, e in ENGINES.items() if re.search(rf"\b{re.escape(e.title)}\b", read)}
    assert named == ran, named ^ ran
    for fig in tiny_run.figures:
        assert fig.stat().st_size > 2000


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is installed by `make setup`")
def test_report_charts_render_in_headless_chromium(tiny_run, tmp_path):
    from PIL import Image

    shot = tmp_path / "report.png"
    subprocess.run([
        "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={tempfile.mkdtemp()}", "--window-size=1200,4200", "--virtual-time-budget=8000",
        f"--screenshot={shot}", tiny_run.html.as_uri(),
    ], check=True, capture_output=True, timeout=120)
    image = Image.open(shot).convert("RGB")
    colors = image.getcolors(maxcolors=1 << 20) or []
    assert len(colors) > 200, "the page looks blank"
    blue = sum(n for n, rgb in colors if all(abs(a - b) < 8 for a, b in zip(rgb, POSTGRES_BLUE)))
    assert blue > 500, "no PostgreSQL bars drawn: the charts did not render"


def test_bad_parameter_fails_before_any_container_starts(tmp_path):
    since = int(time.time())
    outcome = batch.execute(NOTEBOOK, tmp_path, {"rows": 0})
    until = int(time.time()) + 1
    assert not outcome.ok
    assert "rows must be an integer >= 2, got 0" in outcome.error
    assert outcome.executed.exists() and outcome.html.exists()  # the failed copy is kept
    nb = json.loads(outcome.executed.read_text())
    assert any(o.get("ename") == "ParameterError" for c in nb["cells"] for o in c.get("outputs", []))
    # Docker's own event log, not a count a clean-up could restore: no container was created.
    created = list(docker_client().events(since=since, until=until, decode=True,
                                          filters={"type": "container", "event": "create"}))
    assert created == [], created



def test_ferretdb_runs_the_notebook_end_to_end(tmp_path, run_ids_in):
    """FerretDB (the offline MongoDB-wire stand-in) through the whole notebook at the tiny set's
    scale, on its own: it is not in the tiny set's engines (its share there would be ~16.5 s). Its
    phases land like the SQL engines', checked, with server and client scopes, named as FerretDB."""
    params = {**batch.load_params(batch.params_file(NOTEBOOK, "tiny")), "engines": ["ferretdb"], "repetitions": 1,
              "max_repetitions": 1}
    outcome = batch.execute(NOTEBOOK, tmp_path, params)
    assert outcome.ok, outcome.error
    store = Store.default()
    (run_id,) = run_ids_in(outcome.executed)
    ferretdb = results.measurements(run_id, store)
    assert set(ferretdb["engine"]) == {"ferretdb"}
    assert set(ferretdb["phase"]) == {"sleep", "insert", "update", "select", "delete", "calibration"}
    assert set(ferretdb[~ferretdb["phase"].isin(["sleep", "calibration"])]["check_status"]) == {"ok"}
    assert set(ferretdb["scope"]) == {"server", "client", "harness", "calibration", "host"}
    (version,) = set(results.instances(run_id, store)["server_version"])
    assert version.startswith("FerretDB 1.24") and "MongoDB wire protocol" in version
    page = outcome.html.read_text()
    assert "FerretDB (PostgreSQL backend)" in page and "not MongoDB" in page
