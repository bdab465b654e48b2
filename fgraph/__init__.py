"""fgraph: Bayesian inference by message passing on Forney-style factor graphs.

Write a model with :class:`Model` and the node constructors in ``nodes``;
run :func:`infer` with ``algorithm="bp"`` (sum-product, exact evidence on
trees) or ``"vmp"`` (variational message passing, free energy per iteration).
Model comparison (``average``, ``select``, ``combine``, ``ModelComparison``, …)
lives in :mod:`fgraph.comparison`; its names are also reachable here.
"""
from fgraph import families
from fgraph.constraints import Constraints
from fgraph.errors import (
    AmbiguousRuleError,
    ConvergenceWarning,
    DataError,
    DataTypeError,
    FgraphError,
    JitterWarning,
    ModelError,
    ModelTypeError,
    NumericalError,
    RuleError,
    RuleNotFoundError,
    ScheduleError,
)
from fgraph.families import *  # noqa: F401,F403  (families are part of the user API)
from fgraph.inference import compile, infer, run
from fgraph.model import Data, Model, PerCopy, Variable, entropy_weight, per_copy, random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy, energy_total, marginal_rule, rule
from fgraph.schedule import Schedule

__version__ = "0.1.0"

__all__ = [
    "families", "Constraints", "AmbiguousRuleError", "ConvergenceWarning", "DataError", "DataTypeError", "FgraphError",
    "JitterWarning", "ModelError", "ModelTypeError", "NumericalError", "RuleError", "RuleNotFoundError", "ScheduleError", "compile",
    "infer", "run", "Data", "Model", "PerCopy", "Variable", "entropy_weight", "per_copy", "random_variable", "FactorNode", "average_energy", "energy_total", "marginal_rule",
    "rule", "Schedule",
] + list(families.__all__)

# Model comparison builds models from concrete nodes, so it sits above them and
# is imported on first use, never by ``import fgraph`` (the engine does not
# depend on it, and importing it here would import every node).
_COMPARISON_NAMES = frozenset({
    "average", "select", "combine", "selection_settings", "combination_settings", "ModelComparison", "compare",
    "combine_online", "OnlineCombination", "dirichlet_model_reduction",
})


def __getattr__(name: str):
    if name == "comparison" or name in _COMPARISON_NAMES:
        import fgraph.comparison

        return fgraph.comparison if name == "comparison" else getattr(fgraph.comparison, name)
    raise AttributeError(f"module 'fgraph' has no attribute {name!r}")


def __dir__() -> list:
    return sorted(set(globals()) | _COMPARISON_NAMES | {"comparison"})
