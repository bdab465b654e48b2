"""Gamma factor node: f(out, shape, rate) = Gamma(out | shape, rate) (rate parameterisation).

``rate`` is conjugate (a Gamma prior on it gives a Gamma message); a random
``shape`` is not conjugate to any standard family: its messages are
:class:`~fgraph.families.gamma_shape.GammaShapeLikelihood` densities
(see ``rules/gamma/shape.py``).
"""
from __future__ import annotations


from fgraph.families import Distribution
from fgraph.families.gamma_shape import expected_log_gamma
from fgraph.model import random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy
from fgraph.support import POSITIVE
from fgraph.float_twins import float_energy

__all__ = ["Gamma", "GammaNode"]


class GammaNode(FactorNode):
    energy_is_log_density = True
    collapsible_plates = True
    interfaces = ("out", "shape", "rate")
    event_ndims = {"out": 0, "shape": 0, "rate": 0}
    support = {"out": POSITIVE, "shape": POSITIVE, "rate": POSITIVE}


def Gamma(name, shape, rate, observed=None, batch_shape=None, power=1.0):
    """Factor: adds to the model a positive variable ``name ~ Gamma(shape, rate)`` (mean shape/rate)."""
    return random_variable(GammaNode, name, {"shape": shape, "rate": rate}, observed, batch_shape, power)


@average_energy(GammaNode)
def _gamma_energy(q_out: Distribution, q_shape: Distribution, q_rate: Distribution):
    """U = -(E[a] E[log b] - E[log Γ(a)] + (E[a] - 1) E[log out] - E[b] E[out]).

    ``E[log Γ(a)]`` is ``log Γ(a)`` for a known shape and a quadrature for a
    random one (:func:`~fgraph.families.gamma_shape.expected_log_gamma`).
    """
    shape = q_shape.mean
    return -(
        shape * q_rate.mean_log - expected_log_gamma(q_shape) + (shape - 1.0) * q_out.mean_log
        - q_rate.mean * q_out.mean
    )


@float_energy(_gamma_energy, q_out=("mean", "mean_log"), q_shape=("mean", "mean_log_gamma"),
              q_rate=("mean", "mean_log"))
def _gamma_energy_on_floats(out_mean, out_mean_log, shape, shape_log_gamma, rate_mean, rate_mean_log):
    """The average energy of one element on floats (:mod:`fgraph.floats`)."""
    return -(shape * rate_mean_log - shape_log_gamma + (shape - 1.0) * out_mean_log - rate_mean * out_mean)
