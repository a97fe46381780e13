"""Preparing engines before the first notebook: the engines come from what each parameter set's
validator chose, and a build is never silent (a line per stage, heartbeats, the last build's
time). Builds are stood in for here; tests/engines/test_prepare_engines.py uses Docker."""
import io
import json
import re
import textwrap
import time

import pytest

from benchlib import batch
from benchlib.containers import images
from benchlib.containers.images import ResolvedImage

# A workload whose validator resolves "all available" to a fixed list, as the real ones resolve it
# to what can run on the host; a notebook naming no engines (a comparison of stored runs) has none.
FAKE_WORKLOAD = '''
from types import SimpleNamespace


def validate_parameters(params):
    engines = params["engines"]
    if engines == "all available":
        engines = ["postgres", "mariadb", "ferretdb", "sqlite"]
    return SimpleNamespace(engines=list(engines)) if engines else {"plain": "dict"}
'''


def _notebook() -> dict:
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {"benchlib": {"workload": "fake_engines_workload"}},
            "cells": [{"cell_type": "code", "metadata": {"tags": ["parameters"]}, "outputs": [],
                       "execution_count": None, "source": "engines = []"}]}


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "pylib").mkdir()
    (tmp_path / "pylib" / "fake_engines_workload.py").write_text(textwrap.dedent(FAKE_WORKLOAD))
    monkeypatch.syspath_prepend(str(tmp_path / "pylib"))
    monkeypatch.setenv("BENCHLIB_PROJECT_ROOT", str(tmp_path))
    monkeypatch.setenv("BENCHLIB_DATA_DIR", str(tmp_path / "data"))
    sets = {"01-dml": {"default": "engines: [postgres@15, sqlite]", "wide": "engines: all available"},
            "02-clustered": {"default": "engines: [mariadb, postgres@15, duckdb]"},
            "06-compare": {"default": "engines: []"}}
    for stem, named in sets.items():
        (tmp_path / "notebooks").mkdir(exist_ok=True)
        (tmp_path / "notebooks" / f"{stem}.ipynb").write_text(json.dumps(_notebook()))
        for name, text in named.items():
            path = tmp_path / "papermill_params" / stem / f"{name}.yaml"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text + "\n")
    (tmp_path / "papermill_params" / batch.BATCHES_FILE).write_text("default:\n  01-dml: [default, wide]\n")
    return tmp_path


def test_the_plans_engines_come_from_each_parameter_sets_validated_engines(project):
    plan = batch.plan_batch("default")
    assert [(p.output_name or p.notebook.stem, p.engines) for p in plan] == [
        ("01-dml--default", ("postgres@15", "sqlite")),
        ("01-dml--wide", ("postgres", "mariadb", "ferretdb", "sqlite")),  # "all available", as resolved
        ("02-clustered", ("mariadb", "postgres@15", "duckdb")),
        ("06-compare", ()),
    ]
    # Once each, in order of first use; the embedded ones are skipped when preparing.
    assert batch.plan_engines(plan) == ["postgres@15", "sqlite", "postgres", "mariadb", "ferretdb", "duckdb"]
    assert batch.plan_engines(batch.plan_batch("default", only=["02"])) == ["mariadb", "postgres@15", "duckdb"]


def test_embedded_engines_need_no_preparing():
    out = io.StringIO()
    assert batch.prepare_engines(["sqlite", "duckdb"], stream=out) == batch.Prepared(0.0, {})
    assert out.getvalue() == ""


class _FakeBuilds:
    """resolve_image standing in for Docker: the image is missing until built, and a build takes
    `seconds` while reporting a stage and output lines like a docker build."""

    def __init__(self, seconds: float):
        self.seconds, self.built = seconds, False

    def __call__(self, engine, *, build: bool = True, valgrind: bool = False) -> ResolvedImage:
        ref = f"benchlib/{engine.key}:test"
        if build and not self.built:
            images._report(f"docker build {ref} from postgres/Dockerfile")
            images._report("Step 1/3 : FROM benchlib/debian-base:trixie", stage=False)
            images._report("Get:1 http://deb.debian.org/debian trixie/main postgresql-17", stage=False)
            time.sleep(self.seconds)
            self.built = True
        return ResolvedImage(ref, "sha256:test", "local-build", None, "test", present=self.built)


def test_a_build_says_what_from_which_recipe_then_heartbeats_and_its_time_is_kept(monkeypatch, tmp_path):
    monkeypatch.setenv("BENCHLIB_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(images, "resolve_image", _FakeBuilds(seconds=0.5))
    out = io.StringIO()
    batch.prepare_engines(["sqlite", "postgres"], stream=out, interval=0.1)
    lines = out.getvalue().splitlines()
    assert lines[0] == "preparing engines: 1 server image(s): postgres"
    assert re.fullmatch(r"  postgres: building its image from recipes/postgres on Debian \w+ \(postgresql-\d+\); "
                        r"no earlier time recorded", lines[1]), lines[1]
    assert lines[2] == "  postgres: docker build benchlib/postgres:test from postgres/Dockerfile"
    assert lines[3] == "  postgres: Step 1/3 : FROM benchlib/debian-base:trixie"
    heartbeats = [line for line in lines if "still building" in line]
    assert len(heartbeats) >= 3, lines
    assert heartbeats[-1].endswith("| Get:1 http://deb.debian.org/debian trixie/main postgresql-17")
    assert re.fullmatch(r"  postgres: benchlib/postgres:test ready in [01]s", lines[-2]), lines
    assert lines[-1].startswith("preparing engines: done in ")
    recorded = json.loads((tmp_path / "data" / "images" / images.BUILD_TIMES_FILE).read_text())
    assert recorded["postgres"]["ref"] == "benchlib/postgres:test" and recorded["postgres"]["seconds"] >= 0.5

    # The next build of it says how long the last one took; a present image is one 'cached' line.
    monkeypatch.setattr(images, "resolve_image", _FakeBuilds(seconds=0.3))
    out = io.StringIO()
    batch.prepare_engines(["postgres"], stream=out, interval=0.1)
    assert re.search(r"^  postgres: building .*; last time took [01]s$", out.getvalue(), re.M), out.getvalue()
    assert re.search(r"still building, \ds elapsed \(last time [01]s\)", out.getvalue()), out.getvalue()
    out = io.StringIO()
    batch.prepare_engines(["postgres"], stream=out)
    assert re.search(r"^  postgres: benchlib/postgres:test cached \(local-build\), \d+\.\d s$", out.getvalue(), re.M)


def test_a_failed_build_is_one_line_and_the_others_still_prepare(monkeypatch, tmp_path):
    from benchlib.core.errors import ImageBuildError

    monkeypatch.setenv("BENCHLIB_DATA_DIR", str(tmp_path / "data"))
    fake = _FakeBuilds(seconds=0.0)

    def resolve(engine, *, build=True, valgrind=False):
        if engine.key == "mariadb":
            raise ImageBuildError("cannot build benchlib/debian-base:trixie: debootstrap is not installed\nmore")
        return fake(engine, build=build)

    monkeypatch.setattr(images, "resolve_image", resolve)
    out = io.StringIO()
    prepared = batch.prepare_engines(["mariadb", "postgres"], stream=out, interval=0.1)
    assert prepared.failed == {"mariadb": "cannot build benchlib/debian-base:trixie: debootstrap is not installed"}
    text = out.getvalue()
    assert re.search(r"^  mariadb: FAILED after 0 s: cannot build benchlib/debian-base:trixie: debootstrap is "
                     r"not installed$", text, re.M), text
    assert "  postgres: benchlib/postgres:test ready in" in text
