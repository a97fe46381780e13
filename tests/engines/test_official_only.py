"""Engines that run only from their official images (seed 000's CockroachDB, YugabyteDB, TiDB,
Oracle, SQL Server and MongoDB), on a host whose registry does not answer: listed with the
reason, skipped by "all available", refused in one line when asked for, and no container starts.
The registry is a closed port on 127.0.0.1, so the answer is the same on every host."""
import socket
import subprocess
import sys

import pytest

from benchlib.engines import ENGINES
from benchlib.core.errors import EngineUnavailableError

pytestmark = pytest.mark.docker

OFFICIAL_ONLY = [k for k, e in ENGINES.items() if e.server is not None and e.server.recipe is None]


@pytest.fixture
def no_registry(monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again once the block ends: nothing answers there
    monkeypatch.setenv("BENCHLIB_REGISTRY_MIRROR", f"http://127.0.0.1:{port}")
    return port


def test_official_only_engines_are_seed_000s():
    assert set(OFFICIAL_ONLY) == {"mongodb", "cockroachdb", "yugabytedb", "tidb", "oracle", "sqlserver"}


@pytest.mark.parametrize("key", OFFICIAL_ONLY)
def test_reason_names_engine_image_and_registry(key, no_registry):
    from benchlib.run.validation import unavailable_reason

    reason = unavailable_reason(key)
    image = ENGINES[key].server.official_image
    assert reason.startswith(f"{key}: official image only ({image}); no registry reachable; no local recipe: ")
    assert "\n" not in reason


def test_all_available_skips_them_and_an_explicit_request_fails_before_any_container(no_registry,
                                                                                   benchlib_containers):
    from benchlib import batch
    from benchlib.workloads import dml

    before = benchlib_containers()
    notebook = batch.find_notebook("01")
    tiny = batch.load_params(batch.params_file(notebook, "tiny"))
    params = {**batch.read_notebook(notebook).defaults, **tiny, "engines": "all available"}
    checked = dml.validate_parameters(params)
    assert set(OFFICIAL_ONLY) <= set(checked.skipped) and not set(OFFICIAL_ONLY) & set(checked.engines)
    assert all("official image only" in checked.skipped[k] for k in OFFICIAL_ONLY)
    with pytest.raises(EngineUnavailableError, match=r"engine 'cockroachdb' cannot run on this host: cockroachdb: "
                                                     r"official image only \(cockroachdb/cockroach:"):
        dml.validate_parameters({**params, "engines": ["postgres", "cockroachdb"]})
    assert benchlib_containers() == before


def test_cli_refuses_in_one_line(no_registry, benchlib_containers):
    before = benchlib_containers()
    out = subprocess.run([sys.executable, "-m", "benchlib", "start", "tidb"], capture_output=True, text=True)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert "tidb" in lines[0] and "pingcap/tidb:" in lines[0] and "no registry reachable" in lines[0]
    assert benchlib_containers() == before
