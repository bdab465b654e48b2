"""The package layers: the engine never reaches the nodes, rules or model comparison; comparison loads on demand.

Layers, bottom up: the engine core (``fgraph/*.py``, ``fgraph/families``) →
``fgraph.nodes`` → ``fgraph.rules`` (the repository's folders ``nodes/`` and
``rules/``); ``fgraph.comparison`` and ``fgraph.models`` build models from nodes
and so sit above them, beside the examples and the command line. ``import
fgraph`` loads the engine only; ``fgraph.average`` (and the other comparison
names) import :mod:`fgraph.comparison` on first use. Nothing is imported under
a top-level name other than ``fgraph``. ``import fgraph.models`` loads none of
the model families (nor scikit-learn): the estimators it exports, and the
families' names, are imported on first use.
"""
import ast
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
ABOVE_THE_ENGINE = ("fgraph.nodes", "fgraph.rules", "fgraph.comparison", "fgraph.models", "fgraph.examples",
                    "fgraph.cli")
ENTRY_POINTS = {"__init__.py", "__main__.py", "cli.py"}  # the package face and the command line
CORE = sorted(
    [p for p in (ROOT / "fgraph").glob("*.py") if p.name not in ENTRY_POINTS]
    + list((ROOT / "fgraph" / "families").glob("*.py"))
)
COMPARISON_NAMES = [
    "average", "select", "combine", "selection_settings", "combination_settings", "ModelComparison", "compare",
    "combine_online", "OnlineCombination", "dirichlet_model_reduction",
]


def _imports(tree: ast.AST):
    """(line, imported module, enclosing function or None) for every import in a module, at any depth."""
    found = []

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            if isinstance(child, ast.Import):
                found.extend((child.lineno, alias.name, function) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                found.append((child.lineno, child.module, function))
                # ``from fgraph import comparison`` names the subpackage
                found.extend((child.lineno, f"{child.module}.{alias.name}", function) for alias in child.names)
            visit(child, inner)

    visit(tree, None)
    return found


def _is_above(module: str) -> bool:
    return any(module == layer or module.startswith(layer + ".") for layer in ABOVE_THE_ENGINE)


@pytest.mark.parametrize("path", CORE, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_engine_core_imports_nothing_above_it(path):
    offending = [(line, module) for line, module, _ in _imports(ast.parse(path.read_text())) if _is_above(module)]
    assert not offending, f"{path.relative_to(ROOT)} imports from above the engine: {offending}"


def test_the_package_face_reaches_comparison_only_on_demand():
    imports = _imports(ast.parse((ROOT / "fgraph" / "__init__.py").read_text()))
    above = [(line, module, function) for line, module, function in imports if _is_above(module)]
    assert above, "fgraph/__init__.py was expected to forward the comparison names"
    assert all(module.startswith("fgraph.comparison") and function == "__getattr__" for _, module, function in above), above


_PROBE = """
import json, sys
loaded = lambda: sorted({m.split(".")[0] if not m.startswith("fgraph.") else ".".join(m.split(".")[:2])
                         for m in sys.modules if m.split(".")[0] in ("fgraph", "nodes", "rules")})
report = {}
import fgraph
report["after import fgraph"] = loaded()
import fgraph.comparison as comparison
average = fgraph.average
report["after fgraph.average"] = loaded()
names = %r
report["same objects"] = all(getattr(fgraph, n) is getattr(comparison, n) for n in names)
try:
    fgraph.no_such_name
except AttributeError as error:
    report["fgraph error"] = str(error)
import fgraph.rules
report["after fgraph.rules"] = loaded()
report["top-level names"] = sorted({m.split(".")[0] for m in sys.modules} & {"nodes", "rules"})
print(json.dumps(report))
"""


def _probe(script: str):
    completed = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def test_import_fgraph_stays_light_and_comparison_loads_on_first_use():
    report = _probe(_PROBE % (COMPARISON_NAMES,))
    assert report["after import fgraph"] == ["fgraph", "fgraph.binding", "fgraph.calls", "fgraph.codegen", "fgraph.collection",
                                             "fgraph.constraints", "fgraph.distributive", "fgraph.engine",
                                             "fgraph.equality", "fgraph.errors", "fgraph.factorise", "fgraph.families", "fgraph.float_math", "fgraph.float_source", "fgraph.float_twins", "fgraph.floats",
                                             "fgraph.free_energy",
                                             "fgraph.graph",
                                             "fgraph.inference", "fgraph.jit", "fgraph.memory", "fgraph.message_families", "fgraph.model", "fgraph.node", "fgraph.numerical_checks", "fgraph.plan",
                                             "fgraph.plates", "fgraph.progress", "fgraph.registry", "fgraph.result",
                                             "fgraph.run_state", "fgraph.schedule"]
    assert {"fgraph.comparison", "fgraph.nodes"} <= set(report["after fgraph.average"])
    assert "fgraph.rules" not in report["after fgraph.average"]
    assert report["same objects"]
    assert "no_such_name" in report["fgraph error"]
    assert "fgraph.rules" in report["after fgraph.rules"]
    assert report["top-level names"] == []  # the nodes and rules live under fgraph only


_HEAVY_PROBE = """
import json, sys
import fgraph
print(json.dumps(sorted(m for m in %r if m in sys.modules)))
"""

#: Libraries only some models need, imported where they are used: ``import fgraph`` must not pay for them.
HEAVY_LIBRARIES = ("networkx", "scipy", "scipy.special", "scipy.stats", "bayespy", "matplotlib", "tqdm")


def test_import_fgraph_leaves_heavy_libraries_to_first_use():
    assert _probe(_HEAVY_PROBE % (HEAVY_LIBRARIES,)) == []


def test_the_lazy_special_functions_are_scipys():
    from scipy import special

    from fgraph.families import special as lazy

    x = np.array([0.0, 0.3, 2.5])
    for name, arguments in {"digamma": (x + 1,), "gammaln": (x + 1,), "entr": (x,), "xlogy": (x, x + 2),
                            "xlog1py": (x, x), "betaln": (x + 1, x + 2)}.items():
        np.testing.assert_array_equal(getattr(lazy, name)(*arguments), getattr(special, name)(*arguments))


_MODELS_PROBE = """
import json, sys
import fgraph.models
import fgraph.models.cmn, fgraph.models.gp, fgraph.models.logistic, fgraph.models.mixtures, fgraph.models.tvb
import fgraph.models.vad
report = {"sklearn after the packages": "sklearn" in sys.modules}
from fgraph.models import BayesianGMM, BayesianLogisticRegression, CMNClassifier, GPClassifier
from fgraph.models import MultinomialLogisticRegression
report["estimators"] = [f"{c.__module__}.{c.__name__}" for c in (BayesianLogisticRegression,
                        MultinomialLogisticRegression, BayesianGMM, CMNClassifier, GPClassifier)]
report["sklearn after the estimators"] = "sklearn" in sys.modules
print(json.dumps(report))
"""


def test_import_fgraph_models_loads_no_family_until_an_estimator_is_named():
    pytest.importorskip("sklearn")
    report = _probe(_MODELS_PROBE)
    assert report["sklearn after the packages"] is False  # the models' packages export their names lazily
    assert report["estimators"] == ["fgraph.models.logistic.binary.BayesianLogisticRegression",
                                    "fgraph.models.logistic.multinomial.MultinomialLogisticRegression",
                                    "fgraph.models.mixtures.bayesian_gmm.BayesianGMM",
                                    "fgraph.models.cmn.classifier.CMNClassifier",
                                    "fgraph.models.gp.classifier.GPClassifier"]
    assert report["sklearn after the estimators"] is True


def test_tests_and_benchmarks_share_through_fgraph_testing_not_through_each_other():
    """The suite never imports a benchmark (the benchmarks' own tests are benchmarks/tests/), and no benchmark
    imports the tests: what both use — the numpy references — is :mod:`fgraph.testing`."""
    crossing = []
    for folder, other in (("tests", "benchmarks"), ("benchmarks", "tests")):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if folder == "benchmarks" and "tests" in path.relative_to(ROOT / folder).parts:
                continue
            for line, module, _ in _imports(ast.parse(path.read_text())):
                if module == other or module.startswith(other + "."):
                    crossing.append((str(path.relative_to(ROOT)), line, module))
    assert not crossing, crossing
