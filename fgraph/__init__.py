"""fgraph: Bayesian inference by message passing on Forney-style factor graphs.

Write a model with :class:`Model` and the node constructors in ``nodes``;
run :func:`infer` with ``algorithm="bp"`` (sum-product, exact evidence on
trees) or ``"vmp"`` (variational message passing, free energy per iteration).
"""
from fgraph import families
from fgraph.constraints import Constraints
from fgraph.errors import (
    AmbiguousRuleError,
    ConvergenceWarning,
    DataError,
    DataTypeError,
    FgraphError,
    ModelError,
    ModelTypeError,
    NumericalError,
    RuleError,
    RuleNotFoundError,
    ScheduleError,
)
from fgraph.families import *  # noqa: F401,F403  (families are part of the user API)
from fgraph.inference import compile, infer, run
from fgraph.model import Data, Model, Variable, random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy, marginal_rule, rule
from fgraph.schedule import Schedule

__version__ = "0.1.0"

__all__ = [
    "families", "Constraints", "AmbiguousRuleError", "ConvergenceWarning", "DataError", "DataTypeError", "FgraphError",
    "ModelError", "ModelTypeError", "NumericalError", "RuleError", "RuleNotFoundError", "ScheduleError", "compile",
    "infer", "run", "Data", "Model", "Variable", "random_variable", "FactorNode", "average_energy", "marginal_rule",
    "rule", "Schedule",
] + list(families.__all__)

