"""The families are a clean layer: each module imports only what it names at its top, with no cycle.

Two checks. Statically, every import among ``fgraph/families`` modules sits at
the top of its module (no import inside a function, none after the first
definition), reaches nothing above the layer (nodes, rules, the engine), and
the graph of these imports is acyclic. Dynamically, every module imports in a
fresh interpreter on its own, with the package ``__init__`` files *not* run
(they import every family, which would hide a module that only works when
another was imported first).
"""
import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = ROOT / "fgraph" / "families"
MODULES = sorted(path.stem for path in FAMILIES.glob("*.py") if path.stem != "__init__")
# what a family may import from this project besides other families: the exceptions, which import nothing
ALLOWED_OUTSIDE = {"fgraph.errors"}


def _imported_modules(node: ast.AST) -> list:
    """The project modules an import statement names (``from fgraph.families import X`` names the package)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return [node.module]
    return []


def _project_imports(path: Path) -> tuple:
    """(top-of-file imports, imports placed anywhere else), each a list of (line, module) of this project."""
    tree = ast.parse(path.read_text(), filename=str(path))
    top, elsewhere = [], []
    body_started = False
    top_level = set()
    for statement in tree.body:
        is_import = isinstance(statement, (ast.Import, ast.ImportFrom))
        is_docstring = isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
        if is_import:
            top_level.add(id(statement))
            names = [(statement.lineno, m) for m in _imported_modules(statement) if m.split(".")[0] in ("fgraph", "nodes", "rules")]
            (elsewhere if body_started else top).extend(names)
        elif not is_docstring:
            body_started = True
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in top_level:
            elsewhere.extend((node.lineno, m) for m in _imported_modules(node) if m.split(".")[0] in ("fgraph", "nodes", "rules"))
    return top, elsewhere


def _import_graph() -> dict:
    graph = {}
    for name in MODULES:
        top, _ = _project_imports(FAMILIES / f"{name}.py")
        graph[name] = {module.split(".")[2] for _, module in top if module.startswith("fgraph.families.")}
    return graph


@pytest.mark.parametrize("name", MODULES)
def test_imports_sit_at_the_top_and_stay_inside_the_layer(name):
    top, elsewhere = _project_imports(FAMILIES / f"{name}.py")
    assert not elsewhere, f"fgraph/families/{name}.py imports inside a function or below its definitions: {elsewhere}"
    outside = [(line, m) for line, m in top if not m.startswith("fgraph.families.") and m not in ALLOWED_OUTSIDE]
    assert not outside, f"fgraph/families/{name}.py imports from above the families layer: {outside}"


def test_the_import_graph_among_families_is_acyclic():
    graph = _import_graph()
    state = {}  # name -> "open" while on the depth-first path, "done" after

    def visit(name, path):
        if state.get(name) == "done":
            return
        if state.get(name) == "open":
            cycle = path[path.index(name):] + [name]
            pytest.fail("import cycle among families: " + " -> ".join(cycle))
        state[name] = "open"
        for dependency in sorted(graph[name]):
            visit(dependency, path + [name])
        state[name] = "done"

    for name in MODULES:
        visit(name, [])


def test_no_family_imports_the_product_module():
    """The product dispatch sits on top of the layer: the families it multiplies do not need it."""
    graph = _import_graph()
    assert [name for name, dependencies in graph.items() if "product" in dependencies] == []
    assert {"base", "categorical", "mixture", "normal", "pointmass"} <= graph["product"]


_ISOLATED_IMPORT = """
import importlib, json, sys, types
root, name = sys.argv[1], sys.argv[2]
# the packages as bare namespaces: their __init__ (which imports every family) does not run
for package, path in (("fgraph", root + "/fgraph"), ("fgraph.families", root + "/fgraph/families")):
    module = types.ModuleType(package)
    module.__path__ = [path]
    sys.modules[package] = module
importlib.import_module("fgraph.families." + name)
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("fgraph", "nodes", "rules"))))
"""


def test_every_module_imports_alone_in_a_fresh_interpreter():
    processes = {
        name: subprocess.Popen([sys.executable, "-c", _ISOLATED_IMPORT, str(ROOT), name], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name in MODULES
    }
    graph = _import_graph()
    failures = []
    for name, process in processes.items():
        stdout, stderr = process.communicate(timeout=120)
        if process.returncode != 0:
            failures.append(f"fgraph.families.{name}: {stderr.strip().splitlines()[-1]}")
            continue
        loaded = set(json.loads(stdout)) - {"fgraph", "fgraph.families"}
        # exactly the modules it reaches through its own imports
        reachable, pending = set(), [name]
        while pending:
            module = pending.pop()
            if module not in reachable:
                reachable.add(module)
                pending.extend(graph[module])
        expected = {f"fgraph.families.{m}" for m in reachable}
        if loaded - ALLOWED_OUTSIDE != expected:
            failures.append(f"fgraph.families.{name} loaded {sorted(loaded)}, its imports reach {sorted(expected)}")
    assert not failures, "\n".join(failures)
