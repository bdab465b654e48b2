"""Messages out of MvNormalMeanPrecision towards ``mean`` (the factor is symmetric in out and mean)."""
import numpy as np

from fgraph.families import Distribution, MultivariateNormal
from fgraph.families.linalg import cholesky, cholesky_inverse
from fgraph.families.mvnormal import MvNormalMeanCovariance, MvNormalMeanPrecision as Gaussian
from fgraph.registry import rule
from fgraph.nodes.mvnormal import MvNormalMeanPrecision


@rule(MvNormalMeanPrecision, "mean")
def sum_product(m_out: MultivariateNormal, q_precision: Distribution) -> MultivariateNormal:
    """∫ exp(E_q[log N(out | mean, Λ^-1)]) m(out) dout (see ``out.sum_product``)."""
    precision = q_precision.mean
    covariance = cholesky_inverse(cholesky(precision, "E[precision]"))
    log_scale = 0.5 * (q_precision.mean_logdet - np.linalg.slogdet(precision)[1])
    return MvNormalMeanCovariance(m_out.mean, m_out.cov + covariance, log_scale=log_scale, check=False)


@rule(MvNormalMeanPrecision, "mean")
def mean_field(q_out: Distribution, q_precision: Distribution) -> MultivariateNormal:
    """exp E_q[log N(out | mean, Λ^-1)] ∝ N(mean | E[out], E[Λ]^-1); exact (log-scale 0) for observed out, clamped precision."""
    return Gaussian(q_out.mean, q_precision.mean, check=False)
