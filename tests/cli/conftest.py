import pytest

from cliproject import Project, make_project


@pytest.fixture
def project(tmp_path) -> Project:
    """A throw-away project: one tiny notebook (01-tiny, parameter set `tiny`), its own store and reports."""
    return make_project(tmp_path / "project")
