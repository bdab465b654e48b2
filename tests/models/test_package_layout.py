"""The layout of :mod:`fgraph.models`: one package per model family, modules that use each other through public
names only, and one way to import each thing.

* No module under ``fgraph/models`` imports a private name (``_name``, not a dunder) of another module: not by
  ``from module import _name``, not as ``module._name`` after importing the module (or a name from it), and no
  private module (``package._module``). What one module needs of another is that module's public interface.
* The flat modules the families replaced are gone (no forwarding modules at the old paths).
* Every name a family package exports (its ``__all__``, resolved lazily) is the object its submodule defines.
"""
import ast
import importlib
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "fgraph" / "models"
MODULES = sorted(MODELS.rglob("*.py"))
FAMILIES = ["fgraph.models.logistic", "fgraph.models.cmn", "fgraph.models.gp", "fgraph.models.mixtures", "fgraph.models.tvb",
            "fgraph.models.vad"]
#: The flat modules of the layout before the families (now fgraph.models.<family>.<module>).
OLD_MODULES = ["logistic_regression", "multinomial_logistic_regression", "approximation_bound",
               "linear_gaussian_update", "cmn_priors", "cmn_predictive", "cmn_classifier", "gmm", "bayesian_gmm",
               "bmlr", "bmlr_tvb"]


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_uses(source: str) -> list:
    """(line, what) for every private name of another module that ``source`` imports or reads off an imported
    name."""
    tree = ast.parse(source)
    found, imported = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if any(_private(part) for part in alias.name.split(".")):
                    found.append((node.lineno, alias.name))
                imported.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if any(_private(part) for part in module.split(".")):
                found.append((node.lineno, module))
            for alias in node.names:
                if _private(alias.name):
                    found.append((node.lineno, f"{'.' * node.level}{module}.{alias.name}"))
                imported.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in imported \
                and _private(node.attr):
            found.append((node.lineno, f"{node.value.id}.{node.attr}"))
    return sorted(found)


def test_the_check_finds_each_way_of_reaching_a_private_name():
    source = ("from fgraph.models.tvb import table\n"
              "from fgraph.models.mixtures.gmm import _check_data as check\n"
              "import fgraph.models._hidden\n"
              "from fgraph.models.tvb.table import Table\n"
              "table._run_blocks()\n"
              "Table._arrays\n"
              "def f(self):\n"
              "    return self._own, table.__name__, _local\n")
    assert private_uses(source) == [(2, "fgraph.models.mixtures.gmm._check_data"), (3, "fgraph.models._hidden"),
                                    (5, "table._run_blocks"), (6, "Table._arrays")]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_uses_a_private_name_of_another(path):
    found = private_uses(path.read_text())
    assert not found, f"{path.relative_to(ROOT)} uses private names of other modules: {found}"


@pytest.mark.parametrize("name", OLD_MODULES)
def test_the_flat_modules_are_gone(name):
    assert importlib.util.find_spec(f"fgraph.models.{name}") is None


@pytest.mark.parametrize("package", FAMILIES)
def test_a_family_exports_the_objects_its_modules_define(package):
    pytest.importorskip("sklearn")
    module = importlib.import_module(package)
    assert module.__doc__ and module.__all__
    assert sorted(module.__all__) == sorted(set(module.__all__)), "a name is exported twice"
    for name in module.__all__:
        value = getattr(module, name)
        defined = getattr(value, "__module__", None)
        if defined is not None and defined.startswith(package + "."):
            assert getattr(importlib.import_module(defined), name) is value
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError, match="no_such_name"):
        module.no_such_name


def test_every_module_says_what_it_is():
    missing = [str(path.relative_to(ROOT)) for path in MODULES if not ast.get_docstring(ast.parse(path.read_text()))]
    assert not missing
