"""Inverse-gamma factor node: f(out, shape, scale) = InverseGamma(out | shape, scale).

    InverseGamma(x | α, β) = β^α / Γ(α) x^(-α-1) exp(-β / x),   x > 0,

the law of ``1/τ`` for ``τ ~ Gamma(α, rate=β)``. ``β`` is a *scale* of
``x`` (``c x ~ InverseGamma(α, c β)``), so the interface is called ``scale``
rather than ``rate``; as in the Gamma node it is conjugate to a Gamma prior
(``f`` is ``β^α exp(-β/x)`` in β), and a random ``shape`` gets
:class:`~fgraph.families.gamma_shape.GammaShapeLikelihood` messages.
The family of ``out`` is :class:`~fgraph.families.inverse_gamma.InverseGamma`,
the conjugate prior of a normal variance.
"""
from __future__ import annotations

import numpy as np

from fgraph.families import Distribution
from fgraph.families.gamma_shape import expected_log_gamma
from fgraph.model import random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy

__all__ = ["InverseGamma", "InverseGammaNode"]


class InverseGammaNode(FactorNode):
    energy_is_log_density = True
    collapsible_plates = True
    interfaces = ("out", "shape", "scale")
    event_ndims = {"out": 0, "shape": 0, "scale": 0}

    @staticmethod
    def check_parameter(interface, value):
        """Constants and observed data on every interface must be strictly positive."""
        if np.any(value <= 0):
            raise ValueError(f"{interface} must be strictly positive, got minimum {np.min(value)!r}")


def InverseGamma(name, shape, scale, observed=None, batch_shape=None, power=1.0):
    """Factor: adds to the model a positive variable ``name ~ InverseGamma(shape, scale)`` (mean ``scale / (shape - 1)`` for shape > 1).

    The conjugate prior of a normal variance: ``Normal("y", mean=m, var=v)``
    with ``v = InverseGamma("v", shape=a, scale=b)``.
    """
    return random_variable(InverseGammaNode, name, {"shape": shape, "scale": scale}, observed, batch_shape, power)


@average_energy(InverseGammaNode)
def _inverse_gamma_energy(q_out: Distribution, q_shape: Distribution, q_scale: Distribution):
    """U = -(E[α] E[log β] - E[log Γ(α)] - (E[α] + 1) E[log x] - E[β] E[1/x]) under independent marginals."""
    shape = q_shape.mean
    return -(
        shape * q_scale.mean_log - expected_log_gamma(q_shape) - (shape + 1.0) * q_out.mean_log
        - q_scale.mean * q_out.mean_inverse
    )
