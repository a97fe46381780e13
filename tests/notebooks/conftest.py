"""Every numbered notebook runs once per session with its `tiny` parameter set (discovered, not
listed): the smoke tests and the per-notebook checks share that execution."""
import json

import pytest

from benchlib import batch
from benchlib.run.measure import RUN_MIME

NOTEBOOKS = batch.notebooks()


def _run_ids_in(executed) -> list[str]:
    nb = json.loads(executed.read_text())
    return [o["data"][RUN_MIME]["run_id"] for c in nb["cells"] for o in c.get("outputs", [])
            if RUN_MIME in o.get("data", {})]


@pytest.fixture
def run_ids_in():
    """The run ids a notebook recorded in its executed copy."""
    return _run_ids_in


def pytest_generate_tests(metafunc):
    if "notebook" in metafunc.fixturenames:
        metafunc.parametrize("notebook", NOTEBOOKS, ids=[nb.stem for nb in NOTEBOOKS])


@pytest.fixture(scope="session")
def tiny_outcomes(tmp_path_factory):
    cache = {}

    def get(notebook):
        if notebook.stem not in cache:
            out = tmp_path_factory.mktemp(notebook.stem)
            params = batch.load_params(batch.params_file(notebook, "tiny"))
            cache[notebook.stem] = batch.execute(notebook, out, params)
        return cache[notebook.stem]

    return get


@pytest.fixture(scope="module")
def tiny_run(request, tiny_outcomes):
    """The tiny execution of the test module's `NOTEBOOK`, which must have succeeded."""
    outcome = tiny_outcomes(request.module.NOTEBOOK)
    assert outcome.ok, outcome.error
    return outcome
