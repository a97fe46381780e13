"""What a run or batch will execute, all checked before the first kernel starts: the notebooks,
their parameter sets (papermill_params/<notebook>/<set>.yaml, plus what batches.yaml adds), each
notebook's parameters cell, title and question, and every value through the workload's own
`validate_parameters` (the module named in the notebook's metadata `benchlib.workload`)."""
from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml

from ..core.errors import BenchlibError, ParameterError
from ..core.settings import get_settings

BATCHES_FILE = "batches.yaml"


@dataclass(frozen=True)
class NotebookSpec:
    """What the runner reads from a notebook file without starting a kernel."""

    path: Path
    defaults: dict[str, Any]  # the parameters cell's values
    workload: str | None  # metadata benchlib.workload: module exposing validate_parameters(params)
    title: str | None  # the first markdown cell's H1
    question: str | None  # the paragraph after it


@dataclass(frozen=True)
class Planned:
    """A notebook with its checked parameters, ready to execute."""

    notebook: Path
    params: dict[str, Any]
    params_file: str | None = None
    output_name: str | None = None  # when a batch runs one notebook with several sets
    # Engine keys the workload's validator chose for these parameters ("all available" resolved
    # to what can run here): the engines to prepare before the first notebook starts.
    engines: tuple[str, ...] = field(default=())
    # Those of them started under valgrind (`counter: valgrind`): their valgrind image is prepared too.
    valgrind: tuple[str, ...] = field(default=())


def notebooks() -> list[Path]:
    return sorted(get_settings().notebooks_dir.glob("[0-9]*.ipynb"))


def find_notebook(name: str) -> Path:
    path = Path(name)
    if path.suffix == ".ipynb" and path.exists():
        return path.resolve()
    for nb in notebooks():
        if nb.stem == name or nb.stem.startswith(f"{name}-") or nb.name == name:
            return nb
    known = ", ".join(nb.stem for nb in notebooks()) or "none"
    raise ParameterError(f"no notebook {name!r}; known notebooks: {known}")


def parameter_sets(notebook: Path) -> list[str]:
    return sorted(p.stem for p in (get_settings().params_dir / notebook.stem).glob("*.yaml"))


def params_file(notebook: Path, params_set: str) -> Path:
    path = get_settings().params_dir / notebook.stem / f"{params_set}.yaml"
    if not path.is_file():
        known = ", ".join(parameter_sets(notebook)) or "none"
        raise ParameterError(f"{notebook.stem} has no parameter set {params_set!r} "
                             f"(papermill_params/{notebook.stem}/{params_set}.yaml); known sets: {known}")
    return path


def _yaml(text: str, where: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ParameterError(f"{where}: invalid YAML{at}: {problem}") from None


def load_params(path: Path | None, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if path is not None:
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise ParameterError(f"cannot read parameter file {path}: {exc.strerror}") from None
        loaded = _yaml(text, str(path)) or {}
        if not isinstance(loaded, dict):
            raise ParameterError(f"{path}: expected a mapping of parameter names to values")
        params.update(loaded)
    params.update(overrides or {})
    return params


def parse_override(text: str) -> tuple[str, Any]:
    """`rows=2000000`, `engines=[postgres, mariadb]`: values are YAML."""
    if "=" not in text:
        raise ParameterError(f"override {text!r} must look like name=value")
    key, _, value = text.partition("=")
    return key.strip(), _yaml(value, f"-P {text!r}")


def read_notebook(path: Path) -> NotebookSpec:
    """Defaults, workload, title and question of a notebook; no kernel, no nbformat (fast)."""
    try:
        nb = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise ParameterError(f"cannot read notebook {path}: {exc}") from None
    cells = nb.get("cells", [])
    tagged = [c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    defaults: dict[str, Any] = {}
    if tagged:
        namespace: dict[str, Any] = {}
        try:
            # The parameters cell holds plain values only (a project rule), so running it is safe and cheap.
            exec(compile(_source(tagged[0]), f"{Path(path).name} parameters cell", "exec"), namespace)
        except Exception as exc:
            raise ParameterError(f"{Path(path).stem}: the parameters cell is not plain values: {exc}") from None
        defaults = {k: v for k, v in namespace.items() if not k.startswith("_")}
    title, question = _title_and_question(cells)
    workload = (nb.get("metadata", {}).get("benchlib") or {}).get("workload")
    return NotebookSpec(Path(path), defaults, workload, title, question)


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _title_and_question(cells: list[dict]) -> tuple[str | None, str | None]:
    """The first H1 of the markdown cells and the paragraph after it. Not simply the first markdown
    cell: papermill puts an error banner above a failed notebook's cells."""
    for cell in cells:
        if cell.get("cell_type") != "markdown":
            continue
        lines = _source(cell).splitlines()
        for i, line in enumerate(lines):
            if not line.startswith("# "):
                continue
            paragraph: list[str] = []
            for after in lines[i + 1:]:
                if after.strip():
                    paragraph.append(after.strip())
                elif paragraph:
                    break
            return line[2:].strip(), _plain(" ".join(paragraph)) or None
    return None, None


def _plain(markdown: str) -> str:
    """Markdown emphasis, code spans and links as plain text (the site index shows it as text)."""
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", markdown)
    text = re.sub(r"\*+|`|(?<!\w)_+|_+(?!\w)", "", text)
    return text.strip()


def check_parameters(notebook: Path, params: dict[str, Any]) -> Any:
    """Reject unknown parameter names and bad values before any kernel starts, with the
    workload's own validator (raises ParameterError, UnknownEngineError, EngineUnavailableError).
    Returns what the validator returns (the workload's checked parameters)."""
    spec = read_notebook(notebook)
    unknown = sorted(set(params) - set(spec.defaults))
    if unknown:
        raise ParameterError(f"{notebook.stem} has no parameter(s) {', '.join(unknown)}; "
                             f"its parameters are: {', '.join(sorted(spec.defaults))}")
    if not spec.workload:
        raise ParameterError(f"{notebook.stem}: its metadata names no workload (metadata.benchlib.workload), "
                             "so its parameters cannot be checked before a kernel starts")
    try:
        module = importlib.import_module(spec.workload)
    except ImportError as exc:
        raise ParameterError(f"{notebook.stem}: workload module {spec.workload!r} cannot be imported: {exc}") from None
    validate = getattr(module, "validate_parameters", None)
    if validate is None:
        raise ParameterError(f"{notebook.stem}: workload module {spec.workload!r} has no validate_parameters")
    return validate({**spec.defaults, **params})


def engines_to_run(checked: Any) -> tuple[str, ...]:
    """The engine keys a workload's checked parameters will start: its `engines` (every workload
    that starts engines declares them so; one that starts none, like a comparison of stored runs,
    has no such field), and its `clusters` where it runs clusters beside them."""
    keys: list[str] = []
    for field_name in ("engines", "clusters"):
        chosen = getattr(checked, field_name, None)
        if isinstance(chosen, (list, tuple)):
            keys += [str(key) for key in chosen]
    return tuple(keys)


def plan_engines(plan: list[Planned]) -> list[str]:
    """Every engine key the plan's notebooks will start, once each, in the order they first appear."""
    return list(dict.fromkeys(key for item in plan for key in item.engines))


def valgrind_to_run(checked: Any) -> tuple[str, ...]:
    """The engines a workload's checked parameters start under valgrind (`counter: valgrind`)."""
    return tuple(getattr(checked, "engines", ())) if getattr(checked, "counter", None) == "valgrind" else ()


def plan_valgrind(plan: list[Planned]) -> list[str]:
    """Every engine key the plan's notebooks start under valgrind, once each."""
    return list(dict.fromkeys(key for item in plan for key in item.valgrind))


def batch_sets(params_set: str) -> Callable[[Path], list[str]]:
    """notebook -> the parameter sets a batch named `params_set` runs it with: the set of that
    name, unless papermill_params/batches.yaml lists more for the notebook (e.g. the report's DML
    run at its default scale and again with every available engine at a scale FerretDB can take)."""
    path = get_settings().params_dir / BATCHES_FILE
    batches = _yaml(path.read_text(), str(path)) if path.exists() else {}
    listed = (batches or {}).get(params_set, {}) or {}
    if not isinstance(listed, dict):
        raise ParameterError(f"{path}: {params_set} must map notebooks to lists of parameter-set names; "
                             f"got {listed!r}")

    def sets_of(notebook: Path) -> list[str]:
        sets = listed.get(notebook.stem, [params_set])
        if not isinstance(sets, list) or not sets or not all(isinstance(s, str) for s in sets):
            raise ParameterError(f"{path}: {params_set}.{notebook.stem} must be a list of parameter-set names; "
                                 f"got {sets!r}")
        return sets

    return sets_of


def plan_batch(params_set: str = "default", only: list[str] | None = None,
               overrides: dict[str, Any] | None = None) -> list[Planned]:
    """Every numbered notebook (or `only` these) with papermill_params/<notebook>/<params_set>.yaml,
    each file read and each notebook's parameters checked, all before the first one runs: a typo
    in the last notebook's file must not surface after an hour of the first ones."""
    selected = [find_notebook(n) for n in only] if only else notebooks()
    if not selected:
        raise ParameterError(f"no notebooks in {get_settings().notebooks_dir}")
    sets_of = batch_sets(params_set)
    plan, problems = [], []
    for nb in selected:
        try:
            sets = sets_of(nb)
        except BenchlibError as exc:
            problems.append(str(exc))
            continue
        for name in sets:
            try:
                pfile = params_file(nb, name)
                params = load_params(pfile, overrides)
                checked = check_parameters(nb, params)
                plan.append(Planned(nb, params, pfile.name, f"{nb.stem}--{name}" if len(sets) > 1 else None,
                                    engines_to_run(checked), valgrind_to_run(checked)))
            except BenchlibError as exc:
                problems.append(str(exc))
    if problems:
        raise ParameterError("; ".join(problems))
    return plan
