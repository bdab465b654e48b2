"""Messages out of the Gamma node towards ``rate`` (conjugate: the rate has a Gamma prior)."""
import math

import numpy as np

from fgraph.families import Distribution, PointMass
from fgraph.families.gamma import Gamma
from fgraph.float_twins import GAMMA, float_rule
from fgraph.registry import rule
from fgraph.nodes.gamma import GammaNode


@rule(GammaNode, "rate")
def mean_field(q_out: Distribution, q_shape: PointMass) -> Gamma:
    """exp E_q[log Gamma(out | α, β)] ∝ β^α exp(-β E[out]) = Gamma(β | α + 1, E[out]).

    The log-scale is the integral over β of exp E_q[log Gamma(out | α, β)]
    = β^α exp(-β E[out]) exp((α - 1) E[log out]) / Γ(α), that is
    ``log α - (α + 1) log E[out] + (α - 1) E[log out]``, so that with a clamped
    ``out = x`` the message is the exact sum-product message (log-scale
    ``log α - 2 log x``).
    """
    shape, mean = q_shape.value, q_out.mean
    log_scale = np.log(shape) - (shape + 1.0) * np.log(mean) + (shape - 1.0) * q_out.mean_log
    return Gamma(shape + 1.0, mean, log_scale=log_scale, check=False)


@rule(GammaNode, "rate")
def mean_field_random_shape(q_out: Distribution, q_shape: Distribution) -> Gamma:
    """exp E_q[log Gamma(out | a, β)] ∝ β^E[a] exp(-β E[out]) = Gamma(β | E[a] + 1, E[out]).

    A variational message (the shape is a random variable with its own
    marginal), defined up to a constant: log-scale 0.
    """
    return Gamma(q_shape.mean + 1.0, q_out.mean, check=False)


@float_rule(mean_field, GAMMA, q_out=("mean", "mean_log"), q_shape=("value",))
def _mean_field_on_floats(out_mean: float, out_mean_log: float, shape: float) -> tuple:
    """:func:`mean_field` on one element, as ``(a, b, log-scale)`` (:mod:`fgraph.floats`)."""
    log_scale = math.log(shape) - (shape + 1.0) * math.log(out_mean) + (shape - 1.0) * out_mean_log
    return shape + 1.0, out_mean, log_scale
