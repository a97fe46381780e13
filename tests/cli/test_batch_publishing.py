"""A notebook whose report cannot be published must not stop the batch: its failure is recorded
in its outcome, the notebooks after it still run, and the batch exits 1. The summary ends with the
batch's harness share."""
import json
import re

import pytest

pytestmark = pytest.mark.notebook

# nbconvert refuses a markdown image pointing at an attachment the cell does not carry: a notebook
# that executes cleanly and then fails to render.
UNRENDERABLE = "![a figure](attachment:missing.png)"


def test_a_report_that_fails_to_render_is_recorded_and_the_batch_goes_on(project):
    project.add_notebook("02-unrenderable", sets={"tiny": "n: 1\n"}, closing_markdown=UNRENDERABLE)
    project.add_notebook("03-after", sets={"tiny": "n: 1\n"})
    result = project.run("batch", "--set", "tiny")
    assert result.returncode == 1, result.stderr
    assert "unexpected error" not in result.stderr

    (folder,) = project.report_folders()
    manifest = json.loads((folder / "manifest.json").read_text())
    outcomes = {o["notebook"]: o for o in manifest["outcomes"]}
    assert list(outcomes) == ["01-tiny", "02-unrenderable", "03-after"]
    failed = outcomes["02-unrenderable"]
    assert failed["ok"] is False and failed["error"] is None and failed["html"] is None
    assert "missing attachment: missing.png" in failed["render_error"]
    assert (folder / "02-unrenderable.ipynb").exists()  # the executed copy is kept
    after = outcomes["03-after"]
    assert after["ok"] is True and (folder / after["html"]).exists() and len(after["run_ids"]) == 1
    assert manifest["complete"] is True

    summary = (folder / "summary.txt").read_text()
    assert "02-unrenderable: FAILED: report not rendered: InvalidNotebook: missing attachment" in summary
    assert "1 of 3 notebook(s) failed" in result.stderr
    # The harness share, per notebook and for the batch (these notebooks measure no window).
    assert "harness share (wall time outside measured windows):" in result.stdout
    for name in ("01-tiny", "02-unrenderable", "03-after", "batch"):
        assert re.search(rf"^  {name}: \d+ s of \d+ s outside measured windows \(100%\); measured 0 s$",
                         result.stdout, re.M), result.stdout
    harness = manifest["harness"]
    assert [s["label"] for s in harness["notebooks"]] == list(outcomes)
    assert harness["total"]["measured_s"] == 0.0 and harness["total"]["wall_s"] > 0
    assert "report not rendered" in (folder / "index.html").read_text()


# The tiny workload's validator, answering like the real ones: the engines its notebook will start.
ENGINES_WORKLOAD = '''
from types import SimpleNamespace


def validate_parameters(params):
    return SimpleNamespace(engines=["postgres", "sqlite"])
'''


@pytest.mark.docker
def test_a_batch_prepares_the_engines_it_will_start_before_the_first_notebook(project):
    from benchlib.engines import get_engine
    from benchlib.containers.images import resolve_image

    resolve_image(get_engine("postgres"))  # built once if missing: this test is about the cached case
    (project.root / "pylib" / "tinywork.py").write_text(ENGINES_WORKLOAD)
    result = project.run("batch", "--set", "tiny")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert lines[0] == "preparing engines: 1 server image(s): postgres"
    seconds = re.fullmatch(r"  postgres: benchlib/postgres:\S+ cached \(local-build\), (\d+\.\d) s", lines[1])
    assert seconds and float(seconds[1]) < 5, lines[1]
    assert lines[2].startswith("preparing engines: done in ")
    assert lines[3].startswith("01-tiny | ")  # before the first notebook
