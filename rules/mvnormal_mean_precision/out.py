"""Messages out of MvNormalMeanPrecision towards ``out``."""
import numpy as np

from fgraph.families import Distribution, MultivariateNormal
from fgraph.families.linalg import cholesky, cholesky_inverse
from fgraph.families.mvnormal import MvNormalMeanCovariance, MvNormalMeanPrecision as Gaussian
from fgraph.registry import rule
from fgraph.nodes.mvnormal import MvNormalMeanPrecision


@rule(MvNormalMeanPrecision, "out")
def sum_product(m_mean: MultivariateNormal, q_precision: Distribution) -> MultivariateNormal:
    """∫ exp(E_q[log N(out | mean, Λ^-1)]) m(mean) dmean.

    With a point-mass precision this is the exact sum-product message
    N(out | μ_m, Σ_m + Λ^-1) (log-scale 0); with a Wishart marginal (structured
    VMP around the pair (out, mean)) it is N(out | μ_m, Σ_m + E[Λ]^-1) scaled by
    exp(½ (E[log|Λ|] - log|E[Λ]|)).
    """
    precision = q_precision.mean
    covariance = cholesky_inverse(cholesky(precision, "E[precision]"))
    log_scale = 0.5 * (q_precision.mean_logdet - np.linalg.slogdet(precision)[1])
    return MvNormalMeanCovariance(m_mean.mean, m_mean.cov + covariance, log_scale=log_scale, check=False)


@rule(MvNormalMeanPrecision, "out")
def mean_field(q_mean: Distribution, q_precision: Distribution) -> MultivariateNormal:
    """exp E_q[log N(out | mean, Λ^-1)] ∝ N(out | E[mean], E[Λ]^-1); exact (log-scale 0) for clamped mean and precision."""
    return Gaussian(q_mean.mean, q_precision.mean, check=False)
