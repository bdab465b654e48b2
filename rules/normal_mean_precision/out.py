"""Messages out of NormalMeanPrecision towards ``out``."""
import numpy as np

from fgraph.families import Distribution, NormalMeanVariance as Normal, UnivariateNormal
from fgraph.registry import rule
from fgraph.nodes.normal import NormalMeanPrecision
from fgraph.float_twins import NORMAL, float_rule


@rule(NormalMeanPrecision, "out")
def sum_product(m_mean: UnivariateNormal, q_precision: Distribution) -> UnivariateNormal:
    """∫ exp(E_q[log N(out | mean, 1/τ)]) m(mean) dmean.

    With a point-mass precision this is the exact sum-product message
    N(out | μ_m, v_m + 1/τ); with a Gamma marginal (structured VMP around the
    pair (out, mean)) it is N(out | μ_m, v_m + 1/E[τ]) scaled by
    exp(½ (E[log τ] - log E[τ])).
    """
    precision = q_precision.mean
    log_scale = 0.5 * (q_precision.mean_log - np.log(precision))
    return Normal(m_mean.mean, m_mean.var + 1.0 / precision, log_scale=log_scale, check=False)


@rule(NormalMeanPrecision, "out")
def mean_field(q_mean: Distribution, q_precision: Distribution) -> UnivariateNormal:
    """exp E_q[log N(out | mean, 1/τ)] ∝ N(out | E[mean], 1/E[τ])."""
    return Normal(q_mean.mean, 1.0 / q_precision.mean, check=False)


@float_rule(mean_field, NORMAL, q_mean=("mean",), q_precision=("mean",))
def _mean_field_on_floats(mean_mean: float, precision_mean: float) -> tuple:
    """:func:`mean_field` on one element, as ``(ξ, w, log-scale)`` (:mod:`fgraph.floats`)."""
    precision = 1.0 / (1.0 / precision_mean)
    return mean_mean * precision, precision, 0.0
