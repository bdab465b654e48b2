"""Joint marginal of the structured cluster (out, mean) of NormalMeanPrecision."""
import numpy as np

from fgraph.families import Distribution, UnivariateNormal
from fgraph.families.mvnormal import MultivariateNormal, MvNormalWeightedMeanPrecision
from fgraph.registry import marginal_rule
from fgraph.nodes.normal import NormalMeanPrecision


@marginal_rule(NormalMeanPrecision, ("out", "mean"))
def out_mean(m_out: UnivariateNormal, m_mean: UnivariateNormal, q_precision: Distribution) -> MultivariateNormal:
    """q(out, mean) ∝ exp(E_q[log N(out | mean, 1/τ)]) m(out) m(mean), a bivariate normal.

    Joint precision ``E[τ] [[1, -1], [-1, 1]] + diag(w_out, w_mean)``, weighted mean ``(ξ_out, ξ_mean)``.
    """
    tau = np.asarray(q_precision.mean, dtype=float)
    w_out, w_mean = m_out.precision, m_mean.precision
    batch = np.broadcast_shapes(np.shape(tau), np.shape(w_out), np.shape(w_mean))
    precision = np.empty(batch + (2, 2))
    precision[..., 0, 0] = tau + w_out
    precision[..., 1, 1] = tau + w_mean
    precision[..., 0, 1] = precision[..., 1, 0] = -tau
    weighted_mean = np.stack(np.broadcast_arrays(m_out.weighted_mean, m_mean.weighted_mean), axis=-1)
    return MvNormalWeightedMeanPrecision(weighted_mean, precision, check=False)
