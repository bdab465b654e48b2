"""Bernoulli factor node: f(out, p) = p**out (1 - p)**(1 - out), ``out`` in {0, 1}, ``p`` in [0, 1]."""
from __future__ import annotations


from fgraph.families import Distribution
from fgraph.model import random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy
from fgraph.support import BINARY, PROBABILITY
from fgraph.nodes.categorical import times_log

__all__ = ["Bernoulli", "BernoulliNode"]


class BernoulliNode(FactorNode):
    energy_is_log_density = True
    interfaces = ("out", "p")
    event_ndims = {"out": 0, "p": 0}
    support = {"out": BINARY, "p": PROBABILITY}


def Bernoulli(name, p, observed=None, batch_shape=None, power=1.0):
    """Factor: adds to the model a binary variable ``name ~ Bernoulli(p)``; ``p`` is a probability (array) or a variable (e.g. Beta).

    ``observed`` is an array of 0/1 (or booleans); its shape is the plate.
    """
    return random_variable(BernoulliNode, name, {"p": p}, observed, batch_shape, power)


@average_energy(BernoulliNode)
def _bernoulli_energy(q_out: Distribution, q_p: Distribution):
    """``-E[out] E[log p] - (1 - E[out]) E[log(1 - p)]``."""
    x = q_out.mean
    return -(times_log(x, q_p.mean_log) + times_log(1.0 - x, q_p.mean_log1m))
