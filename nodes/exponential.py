"""Exponential factor node: f(out, rate) = rate · exp(−rate · out), out > 0, rate > 0.

Its conjugate partner for ``rate`` is the Gamma family: a Gamma(a, b) prior on
the rate and N observations x_i give the posterior Gamma(a + N, b + Σ x_i).
Interfaces are scalars (event rank 0).
"""
from __future__ import annotations


from fgraph.families import Distribution
from fgraph.model import random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy
from fgraph.support import POSITIVE

__all__ = ["Exponential", "ExponentialNode"]


class ExponentialNode(FactorNode):
    energy_is_log_density = True
    interfaces = ("out", "rate")
    event_ndims = {"out": 0, "rate": 0}
    support = {"out": POSITIVE, "rate": POSITIVE}  # constants and observed data on either interface


def Exponential(name, rate, observed=None, batch_shape=None, power=1.0):
    """A positive variable ``name ~ Exponential(rate)`` (mean ``1/rate``, same units as ``out``).

    ``rate`` is a number, an array (batched) or a variable (e.g. with a Gamma
    prior). ``observed`` binds strictly positive data of shape ``batch_shape``;
    ``power`` in (0, 1] tempers the factor.
    """
    return random_variable(ExponentialNode, name, {"rate": rate}, observed, batch_shape, power)


@average_energy(ExponentialNode)
def _exponential_energy(q_out: Distribution, q_rate: Distribution):
    """U = −E[log rate] + E[rate] E[out] under independent marginals (shape: node batch)."""
    return q_rate.mean * q_out.mean - q_rate.mean_log
