"""Beta factor node: f(out, a, b) = Beta(out | a, b) = out**(a-1) (1-out)**(b-1) / B(a, b) on [0, 1]."""
from __future__ import annotations

from fgraph.families.special import betaln

from fgraph.families import Distribution, PointMass
from fgraph.model import random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy
from fgraph.support import POSITIVE, UNIT_INTERVAL
from fgraph.nodes.categorical import times_log

__all__ = ["Beta", "BetaNode"]


class BetaNode(FactorNode):
    energy_is_log_density = True
    interfaces = ("out", "a", "b")
    event_ndims = {"out": 0, "a": 0, "b": 0}
    support = {"out": UNIT_INTERVAL, "a": POSITIVE, "b": POSITIVE}


def Beta(name, a, b, observed=None, batch_shape=None, power=1.0):
    """Factor: adds to the model a variable ``name ~ Beta(a, b)`` on [0, 1] (mean ``a / (a + b)``); ``a``, ``b`` > 0, fixed."""
    return random_variable(BetaNode, name, {"a": a, "b": b}, observed, batch_shape, power)


@average_energy(BetaNode)
def _beta_energy(q_out: Distribution, q_a: PointMass, q_b: PointMass):
    """``-(a-1) E[log out] - (b-1) E[log(1-out)] + log B(a, b)`` for fixed shapes."""
    a, b = q_a.value, q_b.value
    return -(times_log(a - 1.0, q_out.mean_log) + times_log(b - 1.0, q_out.mean_log1m)) + betaln(a, b)
