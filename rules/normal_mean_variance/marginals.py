"""Joint marginal of the structured cluster (out, mean) of NormalMeanVariance."""
import numpy as np

from fgraph.families import Distribution, UnivariateNormal
from fgraph.families.mvnormal import MultivariateNormal, MvNormalWeightedMeanPrecision
from fgraph.registry import marginal_rule
from fgraph.nodes.normal import NormalMeanVariance


@marginal_rule(NormalMeanVariance, ("out", "mean"))
def out_mean(m_out: UnivariateNormal, m_mean: UnivariateNormal, q_var: Distribution) -> MultivariateNormal:
    """q(out, mean) ∝ exp(E_q[log N(out | mean, v)]) m(out) m(mean), a bivariate normal.

    With ``w = E[1/v]``: joint precision ``w [[1, -1], [-1, 1]] + diag(w_out, w_mean)``,
    weighted mean ``(ξ_out, ξ_mean)``.
    """
    w = np.asarray(q_var.mean_inverse, dtype=float)
    w_out, w_mean = m_out.precision, m_mean.precision
    batch = np.broadcast_shapes(np.shape(w), np.shape(w_out), np.shape(w_mean))
    precision = np.empty(batch + (2, 2))
    precision[..., 0, 0] = w + w_out
    precision[..., 1, 1] = w + w_mean
    precision[..., 0, 1] = precision[..., 1, 0] = -w
    weighted_mean = np.stack(np.broadcast_arrays(m_out.weighted_mean, m_mean.weighted_mean), axis=-1)
    return MvNormalWeightedMeanPrecision(weighted_mean, precision, check=False)
