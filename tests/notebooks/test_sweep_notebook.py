"""The concurrency-sweep notebook at tiny scale: the run records seed 004's table options and its
host class, and the rendered report opens on its answer (each engine against the base at its
knee and at the p95 goal), keeps the declared prices and seed 004's settings in its appendix."""
import pytest

from benchlib import batch
from benchlib.data import results
from benchlib.data.findings import Verdict
from benchlib.data.store import Store
from benchlib.workloads.sweep import SweepReport

pytestmark = [pytest.mark.notebook, pytest.mark.docker]

NOTEBOOK = batch.find_notebook("03-concurrency-sweep")


def test_report_answers_first_and_keeps_prices_and_settings_in_the_appendix(tiny_run, run_ids_in):
    (run_id,) = run_ids_in(tiny_run.executed)
    params = results.run_info(run_id, Store.default())["parameters"]
    assert (params["host_class"], params["create_secondary"], params["auto_inc"]) == ("aws-us-east-1-2vcpu", False,
                                                                                      False)
    report = SweepReport(run_id, Store.default())
    found = report.findings()
    # PostgreSQL is the base; MySQL against it in both tests, capacity and cost each; a price row only
    # where it is more than the throughput row inverted (one price at the same steps is not).
    assert set(found["engine"]) == {"mysql"} and set(found["base_engine"]) == {"postgres"}
    assert (found["kind"] != "price").sum() == 4 and set(found["verdict"]) <= {v.value for v in Verdict}
    # Up to 4 threads on this host the 60 ms goal cannot bind: every price row says so.
    price = found[found["kind"] == "price"]
    assert all("goal-never-bound" in c for c in price["caveats"])
    page = tiny_run.html.read_text()
    assert page.index('class="benchlib-answer"') < page.index('class="benchlib-findings"') < page.index(
        'class="benchlib-appendix"')
    appendix = page[page.index('class="benchlib-appendix"'):]
    # The price rows' sources whole (not cut at pandas' 50 characters), and seed 004's settings.
    assert "Amazon EC2 on-demand price list; declared by hand, not fetched from this host" in appendix
    assert "seed 004 (its text)" in appendix and "--rand-seed=1234567" in appendix
    assert "--create_secondary=false --auto_inc=false" in page
