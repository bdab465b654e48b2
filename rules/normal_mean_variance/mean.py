"""Messages out of NormalMeanVariance towards ``mean`` (the factor is symmetric in out and mean).

With a random variance ``v`` (an InverseGamma marginal) only ``E[1/v]`` and
``E[log v]`` enter (see ``out.py``).
"""
import math

import numpy as np

from fgraph.families import Distribution, NormalMeanVariance as Normal, PointMass, UnivariateNormal
from fgraph.plates import EmpiricalMoments
from fgraph.registry import plate_rule, rule
from fgraph.nodes.normal import NormalMeanVariance
from fgraph.float_twins import NORMAL, float_rule

TWO_PI = 2.0 * math.pi


@rule(NormalMeanVariance, "mean")
def sum_product(m_out: UnivariateNormal, q_var: PointMass) -> UnivariateNormal:
    """∫ N(out | mean, v) m(out) dout = N(mean | μ_m, v_m + v)."""
    return Normal(m_out.mean, m_out.var + q_var.value, check=False)


@rule(NormalMeanVariance, "mean")
def structured(m_out: UnivariateNormal, q_var: Distribution) -> UnivariateNormal:
    """∫ exp(E_q[log N(out | mean, v)]) m(out) dout = N(mean | μ_m, v_m + 1/E[1/v]) · exp(-½ (E[log v] + log E[1/v]))."""
    precision = q_var.mean_inverse
    log_scale = -0.5 * (q_var.mean_log + np.log(precision))
    return Normal(m_out.mean, m_out.var + 1.0 / precision, log_scale=log_scale, check=False)


@rule(NormalMeanVariance, "mean")
def mean_field(q_out: Distribution, q_var: PointMass) -> UnivariateNormal:
    """exp E_q[log N(out | mean, v)] ∝ N(mean | E[out], v); exact for an observed ``out``."""
    return Normal(q_out.mean, q_var.value, check=False)


@rule(NormalMeanVariance, "mean")
def mean_field_random_variance(q_out: Distribution, q_var: Distribution) -> UnivariateNormal:
    """exp E_q[log N(out | mean, v)] ∝ N(mean | E[out], 1/E[1/v])."""
    return Normal(q_out.mean, 1.0 / q_var.mean_inverse, check=False)


@plate_rule(NormalMeanVariance, "mean")
def observed_plate(q_out: EmpiricalMoments, q_var: PointMass) -> UnivariateNormal:
    """Π_i N(y_i | mean, v) over N observations = N(mean | ȳ, v/N), scaled.

    With ``s²`` the empirical variance of the y_i, the log-scale is
    ``-(N-1)/2 log(2π v) - ½ log N - N s² / (2v)``.
    """
    count, variance, spread = q_out.count, q_var.value, q_out.var
    if type(variance) is np.float64 and type(spread) is np.float64 and variance > 0.0:
        # one plate of scalars, the common case: Python floats (numpy's per-call cost would be most of the time)
        variance = float(variance)
        log_scale = (-0.5 * (count - 1) * math.log(TWO_PI * variance) - 0.5 * math.log(count)
                     - count * float(spread) / (2.0 * variance))
        return Normal.unbatched(float(q_out.mean), variance / count, log_scale)
    log_scale = -0.5 * (count - 1) * np.log(2.0 * np.pi * variance) - 0.5 * np.log(count) - count * spread / (2.0 * variance)
    return Normal(q_out.mean, variance / count, log_scale=log_scale, check=False)


@float_rule(mean_field, NORMAL, q_out=("mean",), q_var=("value",))
def _mean_field_on_floats(out_mean: float, variance: float) -> tuple:
    """:func:`mean_field` on one element, as ``(ξ, w, log-scale)`` (:mod:`fgraph.floats`)."""
    precision = 1.0 / variance
    return out_mean * precision, precision, 0.0
