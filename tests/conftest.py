"""Every test writes to its own results store and reports folder, never to data/ or reports/.
The environment is set at configure time so that notebook kernels started by papermill inherit it."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
_SESSION_DIR = Path(tempfile.mkdtemp(prefix="benchlib-tests-"))


def pytest_configure(config):
    os.environ["BENCHLIB_DATA_DIR"] = str(_SESSION_DIR / "data")
    os.environ["BENCHLIB_REPORTS_DIR"] = str(_SESSION_DIR / "reports")


def pytest_unconfigure(config):
    shutil.rmtree(_SESSION_DIR, ignore_errors=True)


@pytest.fixture
def store(tmp_path):
    from benchlib.data.store import Store

    return Store(tmp_path / "results")


@pytest.fixture
def benchlib_containers():
    """Ids of benchlib containers that exist now (running or not)."""
    from benchlib.containers.lifecycle import managed_containers

    def list_ids() -> set[str]:
        return {c.id for c in managed_containers()}

    return list_ids
