"""Report folders unique per run, a manifest per folder, and reports/index.html listing every folder
and the latest report of each notebook, built from real executed notebooks."""
import json
import re
from html.parser import HTMLParser

import pytest

from benchlib import batch
from benchlib.data.store import Store

FOLDER = re.compile(r"^\d{8}T\d{6}Z-[0-9a-f]{6}-(?P<name>.+)$")


def test_runs_started_in_the_same_second_get_their_own_folders(tmp_path):
    folders = [batch.new_report_dir("01-dml-cpu-cost", tmp_path) for _ in range(20)]
    assert len({f.name for f in folders}) == 20
    assert all(f.is_dir() and FOLDER.match(f.name)["name"] == "01-dml-cpu-cost" for f in folders)


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.scripts, self.external = [], 0, []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script":
            self.scripts += 1
        if tag == "a":
            self.links.append(attrs.get("href"))
        for key in ("src", "href"):
            if tag != "a" and attrs.get(key):
                self.external.append((tag, attrs[key]))


def _page(path):
    page = _Page()
    page.feed(path.read_text())
    return page


@pytest.mark.notebook
def test_run_and_batch_publish_manifests_and_the_site_index(project):
    result = project.run("run", "01", "--set", "tiny", "-P", "n=3")
    assert result.returncode == 0, result.stderr
    # The console follows the notebook's own steps (stderr is a pipe here: whole lines, not \r).
    assert re.search(r"^01-tiny \| sqlite rep 3/3 \| sleep \| 3/3 steps \| \d+s elapsed \| ETA 0s$",
                     result.stderr, re.M), result.stderr
    assert "Traceback" not in result.stderr and "IPKernelApp" not in result.stderr

    (run_folder,) = project.report_folders()
    assert FOLDER.match(run_folder.name)["name"] == "01-tiny"
    manifest = json.loads((run_folder / "manifest.json").read_text())
    assert manifest["kind"] == "run" and manifest["complete"] is True
    (outcome,) = manifest["outcomes"]
    assert outcome["ok"] is True and outcome["html"] == "01-tiny.html"
    assert outcome["title"] == "A tiny notebook" and outcome["question"] == "Does the runner work?"
    assert outcome["engines"] == ["sqlite"]
    # The report as a reader sees it (headless Chromium at 1280 px, make setup installs it).
    assert outcome["layout_problems"] == [] and outcome["layout"].startswith("fits 1280 px; "), outcome["layout"]
    assert "report fits 1280 px; " in (run_folder / "summary.txt").read_text()
    (run_id,) = outcome["run_ids"]
    stored = Store(project.data / "results").query("select run_id, status from runs")
    assert stored.to_dict("records") == [{"run_id": run_id, "status": "ok"}]

    project.add_notebook("02-failing", sets={"tiny": "n: 1\nfail: true\n"}, title="It fails",
                         question="*What does a failure look like?*")
    result = project.run("batch", "--set", "tiny")
    assert result.returncode == 1
    batch_folder = next(f for f in project.report_folders() if f != run_folder)
    assert FOLDER.match(batch_folder.name)["name"] == "tiny"
    assert (project.reports / "latest").resolve() == batch_folder.resolve()
    manifest = json.loads((batch_folder / "manifest.json").read_text())
    assert [(o["notebook"], o["ok"]) for o in manifest["outcomes"]] == [("01-tiny", True), ("02-failing", False)]
    assert "asked to fail" in manifest["outcomes"][1]["error"]

    index = project.reports / "index.html"
    text = index.read_text()
    page = _page(index)
    assert page.scripts == 0 and page.external == [], page.external  # self-contained: inline CSS only
    # Every folder, newest first.
    folders = [link.split("/")[0] for link in page.links if link.endswith("/index.html")]
    assert folders[-2:] == [batch_folder.name, run_folder.name]
    # The latest report of each notebook: title, question, engines, status, a link that resolves.
    assert f'href="{batch_folder.name}/01-tiny.html"' in text and f'href="{batch_folder.name}/02-failing.html"' in text
    assert "A tiny notebook" in text and "Does the runner work?" in text
    assert "It fails" in text and "What does a failure look like?" in text
    assert "sqlite" in text and "1 of 2 failed" in text
    for link in page.links:
        assert (project.reports / link).exists(), link
    folder_page = _page(batch_folder / "index.html")
    assert folder_page.scripts == 0 and folder_page.external == []


@pytest.mark.notebook
def test_a_batch_runs_a_notebook_with_each_set_batches_yaml_lists(project):
    notebook = project.root / "notebooks" / "01-tiny.ipynb"
    (project.root / "papermill_params" / "01-tiny" / "three.yaml").write_text("n: 3\n")
    (project.root / "papermill_params" / batch.BATCHES_FILE).write_text("tiny:\n  01-tiny: [three, tiny]\n")
    assert notebook.exists()
    result = project.run("batch", "--set", "tiny")
    assert result.returncode == 0, result.stderr
    (folder,) = project.report_folders()
    manifest = json.loads((folder / "manifest.json").read_text())
    outcomes = [(o["notebook"], o["params_file"], o["ok"], o["html"]) for o in manifest["outcomes"]]
    assert outcomes == [("01-tiny--three", "three.yaml", True, "01-tiny--three.html"),
                        ("01-tiny--tiny", "tiny.yaml", True, "01-tiny--tiny.html")]
    assert (folder / "01-tiny--three.ipynb").exists() and (folder / "01-tiny--tiny.ipynb").exists()
    runs = Store(project.data / "results").query("select count(*) as n from runs where status = 'ok'")
    assert runs["n"][0] == 2
