"""Messages out of NormalMeanVariance towards ``out``.

With a random variance ``v`` (VMP, an InverseGamma marginal) only
``E[1/v]`` and ``E[log v]`` enter: ``E_q[log N(out | mean, v)] = -½ log 2π
- ½ E[log v] - ½ E[1/v] (out - mean)²``, a normal of variance ``1/E[1/v]``
(not ``E[v]``: the mean-field message is ``exp E_q log f``).
"""
import numpy as np

from fgraph.families import Distribution, NormalMeanVariance as Normal, PointMass, UnivariateNormal
from fgraph.registry import rule
from fgraph.nodes.normal import NormalMeanVariance
from fgraph.float_twins import NORMAL, float_rule


@rule(NormalMeanVariance, "out")
def sum_product(m_mean: UnivariateNormal, q_var: PointMass) -> UnivariateNormal:
    """∫ N(out | mean, v) m(mean) dmean = N(out | μ_m, v_m + v); integrates to one in ``out``."""
    return Normal(m_mean.mean, m_mean.var + q_var.value, check=False)


@rule(NormalMeanVariance, "out")
def structured(m_mean: UnivariateNormal, q_var: Distribution) -> UnivariateNormal:
    """∫ exp(E_q[log N(out | mean, v)]) m(mean) dmean for a random variance (structured VMP around (out, mean)).

    ``exp E_q[log N(out | mean, v)] = N(out | mean, 1/E[1/v]) · exp(-½ (E[log v] + log E[1/v]))``, so the
    message is N(out | μ_m, v_m + 1/E[1/v]) with that log-scale (≤ 0 by Jensen), which the free
    energy of the cluster needs.
    """
    precision = q_var.mean_inverse
    log_scale = -0.5 * (q_var.mean_log + np.log(precision))
    return Normal(m_mean.mean, m_mean.var + 1.0 / precision, log_scale=log_scale, check=False)


@rule(NormalMeanVariance, "out")
def mean_field(q_mean: Distribution, q_var: PointMass) -> UnivariateNormal:
    """exp E_q[log N(out | mean, v)] ∝ N(out | E[mean], v)."""
    return Normal(q_mean.mean, q_var.value, check=False)


@rule(NormalMeanVariance, "out")
def mean_field_random_variance(q_mean: Distribution, q_var: Distribution) -> UnivariateNormal:
    """exp E_q[log N(out | mean, v)] ∝ N(out | E[mean], 1/E[1/v])."""
    return Normal(q_mean.mean, 1.0 / q_var.mean_inverse, check=False)


@float_rule(mean_field, NORMAL, q_mean=("mean",), q_var=("value",))
def _mean_field_on_floats(mean_mean: float, variance: float) -> tuple:
    """:func:`mean_field` on one element, as ``(ξ, w, log-scale)`` (:mod:`fgraph.floats`)."""
    precision = 1.0 / variance
    return mean_mean * precision, precision, 0.0
