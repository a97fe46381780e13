"""Project hygiene: dependency lists in step, notebooks stored without outputs, paths that do
not depend on the current directory."""
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ]", requirement.strip(), maxsplit=1)[0].lower()


def test_environment_yml_and_pyproject_declare_the_same_dependencies():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    declared = {_name(r) for r in pyproject["project"]["dependencies"]}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda, pip = set(), set()
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            pip |= {_name(r) for r in dep["pip"] if not r.startswith("-e")}
        else:
            conda.add(_name(dep))
    conda -= {"python", "pip"}
    assert conda | pip == declared


def test_notebooks_are_committed_without_outputs():
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks, "no notebooks found"
    for path in notebooks:
        nb = json.loads(path.read_text())
        assert nb["metadata"].get("kernelspec", {}).get("name") == "python3", f"{path.name}: kernelspec missing"
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                assert cell.get("outputs") == [], f"{path.name} has stored outputs"
                assert cell.get("execution_count") is None, f"{path.name} has execution counts"


def test_each_notebook_has_a_parameters_cell_and_parameter_sets():
    for path in sorted((ROOT / "notebooks").glob("[0-9]*.ipynb")):
        nb = json.loads(path.read_text())
        tagged = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(tagged) == 1, f"{path.name}: needs exactly one cell tagged 'parameters'"
        sets = {p.stem for p in (ROOT / "papermill_params" / path.stem).glob("*.yaml")}
        # tiny for the tests, default for `make report`, and at least one at the seed's scale.
        assert {"tiny", "default"} <= sets and len(sets) >= 3, f"{path.name}: parameter sets {sets}"


def test_stored_parameter_values_are_the_tiny_set_on_at_most_its_engines():
    """Opening a notebook and running it as stored is the tiny set's work: the stored values must be
    tiny.yaml's, so that the tiny smoke run executes every cell with them (`make test` no longer runs
    the stored notebooks a second time under nbval). Their engines may be fewer (a quick look in
    JupyterLab); tests/notebooks/test_parameter_sets.py checks they are valid here and run by tiny."""
    from benchlib import batch

    for path in batch.notebooks():
        stored = batch.read_notebook(path).defaults
        tiny = batch.load_params(batch.params_file(path, "tiny"))
        assert {**stored, **tiny, "engines": None} == {**stored, "engines": None}, \
            f"{path.name}: stored parameters differ from papermill_params tiny.yaml"
        if "engines" in tiny and tiny["engines"] != "all available":
            assert set(stored["engines"]) <= set(tiny["engines"]), f"{path.name}: stored engines beyond tiny.yaml's"


def test_settings_do_not_depend_on_the_current_directory(tmp_path):
    code = "from benchlib.core.settings import get_settings; s = get_settings(); print(s.data_dir, s.notebooks_dir)"
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHLIB_")}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == [str(ROOT / "data"), str(ROOT / "notebooks")]


def test_reports_and_results_are_ignored_by_git():
    ignored = (ROOT / ".gitignore").read_text().split()
    assert "/reports/" in ignored and "/data/results/" in ignored


def test_papermill_reads_every_parameter_of_every_notebook():
    # papermill warns and treats a parameter as unknown when it cannot parse its line (a comment
    # holding ">=" or "<=" is enough): every name in the cell must be one papermill sees.
    from papermill.translators import PythonTranslator

    from benchlib import batch

    for nb in batch.notebooks():
        cell = next(c for c in json.loads(nb.read_text())["cells"]
                    if "parameters" in c["metadata"].get("tags", []))
        seen = {p.name for p in PythonTranslator.inspect({"source": "".join(cell["source"])})}
        assert seen == set(batch.read_notebook(nb).defaults), nb.name
