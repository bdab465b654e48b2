"""Messages out of MvNormalMeanCovariance towards ``mean`` (the factor is symmetric in out and mean)."""
from fgraph.families import Distribution, MultivariateNormal, PointMass
from fgraph.families.mvnormal import MvNormalMeanCovariance as Gaussian
from fgraph.registry import rule
from fgraph.nodes.mvnormal import MvNormalMeanCovariance


@rule(MvNormalMeanCovariance, "mean")
def sum_product(m_out: MultivariateNormal, q_cov: PointMass) -> MultivariateNormal:
    """∫ N(out | mean, Σ) m(out) dout = N(mean | μ_m, Σ_m + Σ); integrates to one in ``mean``."""
    return Gaussian(m_out.mean, m_out.cov + q_cov.value, check=False)


@rule(MvNormalMeanCovariance, "mean")
def mean_field(q_out: Distribution, q_cov: PointMass) -> MultivariateNormal:
    """exp E_q[log N(out | mean, Σ)] ∝ N(mean | E[out], Σ); exact (log-scale 0) for an observed ``out``."""
    return Gaussian(q_out.mean, q_cov.value, check=False)
