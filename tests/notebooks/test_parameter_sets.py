"""Every parameter set of every notebook passes its workload's validator on this host: a set that
`make report` or a user would run must not fail at its first cell (a price missing for an engine
that joined "all available" did)."""
import pytest

from benchlib import batch

pytestmark = pytest.mark.docker  # "all available" asks Docker which engines can run

SETS = [(nb, name) for nb in batch.notebooks() for name in batch.parameter_sets(nb)]


@pytest.mark.parametrize("nb, name", SETS, ids=[f"{nb.stem}-{name}" for nb, name in SETS])
def test_parameter_set_is_valid_here(nb, name):
    batch.check_parameters(nb, batch.load_params(batch.params_file(nb, name)))
