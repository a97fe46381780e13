"""The package's layers (issue 38), checked by import-linter on the real import graph: each
subpackage of benchlib imports only the layers below its own (.importlinter lists them, and every
top-level module or package must be listed), and no two modules import each other, directly or
through others."""
from pathlib import Path

import grimp
from importlinter import cli

ROOT = Path(__file__).resolve().parents[2]


def test_every_import_goes_down_a_layer():
    assert cli.lint_imports(config_filename=str(ROOT / ".importlinter"), no_cache=True, no_logo=True) == 0


def _cycles(name) -> set[frozenset[str]]:
    """Pairs of `name(module)` that reach each other through the import graph."""
    graph = grimp.build_graph("benchlib", cache_dir=None)
    edges: dict[str, set[str]] = {}
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            a, b = name(module), name(imported)
            if a != b and a != "benchlib" and b != "benchlib":
                edges.setdefault(a, set()).add(b)

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            node = todo.pop()
            if node == goal:
                return True
            if node not in seen:
                seen.add(node)
                todo.extend(edges.get(node, ()))
        return False

    return {frozenset({a, b}) for a, targets in edges.items() for b in targets if reaches(b, a)}


def test_no_cycle_between_layers():
    cycles = _cycles(lambda module: ".".join(module.split(".")[:2]))
    assert not cycles, sorted(map(sorted, cycles))


def test_no_cycle_between_modules():
    cycles = _cycles(lambda module: module)
    assert not cycles, sorted(map(sorted, cycles))
