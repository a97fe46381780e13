"""The concurrency-sweep notebook at tiny scale: the run records seed 004's table options and its
host class, and the rendered report says that its prices are declared (what they include), what
the throughput priced is where the p95 goal never bound, and how the tables were created."""
import pytest

from benchlib import batch, results
from benchlib.store import Store

pytestmark = [pytest.mark.notebook, pytest.mark.docker]

NOTEBOOK = batch.find_notebook("03-concurrency-sweep")


def test_report_states_prices_goal_and_table_options(tiny_run, run_ids_in):
    (run_id,) = run_ids_in(tiny_run.executed)
    params = results.run_info(run_id, Store.default())["parameters"]
    assert (params["host_class"], params["create_secondary"], params["auto_inc"]) == ("aws-us-east-1-2vcpu", False,
                                                                                      False)
    page = tiny_run.html.read_text()
    assert "declared, list price as of 2024-06, not verified here" in page
    assert "same kind of offering (self-managed instance)" in page and "EC2 instance hours only" in page
    # The price rows' sources whole, not cut at pandas' 50 characters.
    assert "Amazon EC2 on-demand price list; declared by hand, not fetched from this host" in page
    # The knee's rule, what n = 2 cannot tell apart, and seed 004's settings beside this run's.
    assert "throughput gain per doubling of threads was at least 10%" in page
    assert "Nothing in this report is coloured" in page
    assert "seed 004 (its text)" in page and "--rand-seed=1234567" in page
    # Up to 4 threads on loopback the 60 ms goal cannot bind: the table and the text say so.
    assert "peak TPS: the goal never bound up to 4 threads" in page
    assert "The p95 goal of 60 ms never bound for " in page and "PostgreSQL oltp_point_select (median p95 at most" in page
    assert "--create_secondary=false --auto_inc=false" in page
