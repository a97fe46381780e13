"""The client-API notebook at tiny scale: its windows in the store, both scopes per server
window, the harness's own cost under a microsecond, and the contended test's counts."""
import json

import pytest

from benchlib import batch
from benchlib.data import results
from benchlib.data.store import Store
from benchlib.workloads.client_api import ClientApiReport, contended

pytestmark = [pytest.mark.notebook, pytest.mark.docker]

NOTEBOOK = batch.find_notebook("04-client-api-overhead")


def test_rows_land_in_the_store_per_layer_transport_and_operation(tiny_run, run_ids_in):
    (run_id,) = run_ids_in(tiny_run.executed)
    df = results.measurements(run_id, Store.default())
    params = batch.load_params(batch.params_file(NOTEBOOK, "tiny"))
    assert set(df["engine"]) == set(params["engines"])
    labels = df["labels"].map(json.loads)
    phases = df.assign(layer=labels.map(lambda d: d.get("layer")), transport=labels.map(lambda d: d.get("transport")))
    phases = phases[phases["window"] == "phase"]  # not the idle baseline nor the calibration loop
    pg = phases[(phases["engine"] == "postgres") & (phases["phase"] != "contended") & (phases["layer"] != "harness")]
    assert set(pg["transport"]) == {"tcp", "unix"}
    assert set(pg["layer"]) == set(params["layers"]) - {"c_driver", "c_prepared"}  # psycopg already is C
    assert set(pg["phase"]) == {"persist", "load", "update", "erase"}
    assert set(pg["scope"]) == {"server", "client", "host"}  # host: steal time over the window
    sqlite = phases[phases["engine"] == "sqlite"]
    assert set(sqlite["transport"]) == {"in-process"} and "prepared" not in set(sqlite["layer"])
    checked = df[(df["metric"] == "cpu_time") & df["check_status"].notna()]
    assert set(checked["check_status"]) == {"ok"}
    server_cpu = pg[(pg["metric"] == "cpu_time") & (pg["scope"] == "server")]["value"]
    assert (server_cpu > 0).all()  # every window saw the engine work


def test_report_numbers(tiny_run, run_ids_in):
    (run_id,) = run_ids_in(tiny_run.executed)
    report = ClientApiReport(run_id)
    assert report.harness_us() < 1.0, "the measuring loop costs a microsecond or more per operation"
    s = report.summary
    pg = s[(s["engine"] == "postgres") & (s["phase"] == "load") & (s["layer"] != "harness")]
    assert (pg["loop_us"] > 0).all() and pg["client_share"].between(0, 1).all()
    c = report.contended
    params = batch.load_params(batch.params_file(NOTEBOOK, "tiny"))
    per_worker = contended.inserts_per_worker(params["contended_scale"])
    iterations = params["contended_workers"] * per_worker // contended.OBJECTS_PER_ITERATION
    expected = iterations * sum(contended.PER_ITERATION.values())
    assert set(c["mode"]) == {"threads", "processes"}
    assert (c["operations"] + c["failed"] == expected).all()
    assert (c[c["engine"] == "postgres"]["client_cpu_s"] > 0).all()
    # Each layer against the raw driver on PostgreSQL's most local transport, client and server,
    # and SQLite against PostgreSQL in seed 002's order, with the seed's ratio.
    found = report.findings()
    layers = found[(found["kind"] == "layer") & (found["engine"] == "postgres")]
    assert set(layers["layer"]) == set(params["layers"]) - {"driver", "c_driver", "c_prepared"}
    assert set(layers["metric"]) == {"client CPU per operation", "server CPU per operation"}
    order = found[found["kind"] == "order"]
    assert list(order["engine"]) == ["sqlite"] and order["seed_ratio"].iloc[0] == pytest.approx(17 / 65)
    page = tiny_run.html.read_text()
    assert page.index('class="benchlib-answer"') < page.index('class="benchlib-findings"')
    assert page.count("Plotly.newPlot") >= 3 and "What do the layers between an object and its row cost?" in page
    assert "POSTGRES_PASSWORD" not in page
