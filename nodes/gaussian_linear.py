"""Gaussian linear transition: f(out, in, var) = N(out | a in, var).

A scalar state-space step ``x_t ~ N(a x_{t-1}, v)``: ``in`` is the previous
state, ``out`` the next, ``var`` the transition variance (a constant or
clamped value; there is no message towards it), and the gain ``a`` a fixed
non-zero number (attribute ``gain``, not an interface).
"""
from __future__ import annotations

import numpy as np

from fgraph.families import Distribution
from fgraph.families.normal import LOG_2PI
from fgraph.model import numeric_array, random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy
from fgraph.support import POSITIVE

__all__ = ["GaussianLinear", "Linear"]


class GaussianLinear(FactorNode):
    interfaces = ("out", "in", "var")
    event_ndims = {"out": 0, "in": 0, "var": 0}
    support = {"var": POSITIVE}

    def __init__(self, name, batch_shape=(), power=1.0, gain=None, **attributes):
        gain = numeric_array(gain, f"node {name!r}: the gain", TypeError)
        if gain.ndim != 0 or not np.isfinite(gain):
            raise ValueError(f"node {name!r}: the gain must be a finite number, got {gain!r}")
        if gain == 0.0:
            raise ValueError(f"node {name!r}: a zero gain disconnects out from in; use Normal(mean=0.0, var=...)")
        super().__init__(name, batch_shape, power, gain=gain, **attributes)


def Linear(name, previous, gain, var, observed=None, batch_shape=None, power=1.0):
    """A scalar variable ``name ~ N(gain * previous, var)``.

    ``previous`` is a variable (or a number/array), ``gain`` a non-zero number,
    ``var`` a positive number or array (batched). ``observed`` binds data
    (shape: the batch shape), ``power`` in (0, 1] tempers the factor.
    """
    return random_variable(
        GaussianLinear, name, {"in": previous, "var": var}, observed, batch_shape, power, gain=gain
    )


@average_energy(GaussianLinear)
def _gaussian_linear_energy(q_out: Distribution, q_in: Distribution, q_var: Distribution, node):
    """``½ (log 2π + E[log v] + E[1/v] E[(out - a in)²])`` under independent marginals."""
    gain = node.gain
    squared = q_out.second_moment - 2.0 * gain * q_out.mean * q_in.mean + gain**2 * q_in.second_moment
    return 0.5 * (LOG_2PI + q_var.mean_log + q_var.mean_inverse * squared)
