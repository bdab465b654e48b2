"""Messages out of NormalMeanPrecision towards ``mean`` (symmetric in out and mean)."""
import numpy as np

from fgraph.families import Distribution, NormalMeanVariance as Normal, UnivariateNormal
from fgraph.registry import rule
from nodes.normal import NormalMeanPrecision


@rule(NormalMeanPrecision, "mean")
def sum_product(m_out: UnivariateNormal, q_precision: Distribution) -> UnivariateNormal:
    """∫ exp(E_q[log N(out | mean, 1/τ)]) m(out) dout (see ``out.sum_product``)."""
    precision = q_precision.mean
    log_scale = 0.5 * (q_precision.mean_log - np.log(precision))
    return Normal(m_out.mean, m_out.var + 1.0 / precision, log_scale=log_scale, check=False)


@rule(NormalMeanPrecision, "mean")
def mean_field(q_out: Distribution, q_precision: Distribution) -> UnivariateNormal:
    """exp E_q[log N(out | mean, 1/τ)] ∝ N(mean | E[out], 1/E[τ])."""
    return Normal(q_out.mean, 1.0 / q_precision.mean, check=False)
