"""Each notebook end to end at tiny scale through papermill: it succeeds, its own run (the id
recorded in the executed notebook, not "the newest") landed in the store, and its report is
self-contained with no secret in it."""
import re

import pytest

from benchlib.data import results
from benchlib.data.store import Store

pytestmark = [pytest.mark.notebook, pytest.mark.docker]


def test_tiny_run_lands_in_the_store_and_renders(notebook, tiny_outcomes, run_ids_in):
    outcome = tiny_outcomes(notebook)
    assert outcome.ok, outcome.error
    run_ids = run_ids_in(outcome.executed)
    assert run_ids, "the notebook recorded no run id"
    store = Store.default()
    for run_id in run_ids:
        info = results.run_info(run_id, store)
        assert info["notebook"] == notebook.stem and info["status"] == "ok", info["error"]
        df = results.measurements(run_id, store)
        assert not df.empty and df["value"].notna().any()
        assert (df["check_status"].isna() | (df["check_status"] == "ok")).all()
    page = outcome.html.read_text()
    assert not re.search(r"<script[^>]*\bsrc=", page), "the report loads a script from elsewhere"
    assert "PASSWORD" not in page and "password=" not in page.lower()
