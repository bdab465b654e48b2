"""Messages out of MvNormalMeanCovariance towards ``out``."""
from fgraph.families import Distribution, MultivariateNormal, PointMass
from fgraph.families.mvnormal import MvNormalMeanCovariance as Gaussian
from fgraph.registry import rule
from fgraph.nodes.mvnormal import MvNormalMeanCovariance


@rule(MvNormalMeanCovariance, "out")
def sum_product(m_mean: MultivariateNormal, q_cov: PointMass) -> MultivariateNormal:
    """∫ N(out | mean, Σ) m(mean) dmean = N(out | μ_m, Σ_m + Σ); integrates to one in ``out``."""
    return Gaussian(m_mean.mean, m_mean.cov + q_cov.value, check=False)


@rule(MvNormalMeanCovariance, "out")
def mean_field(q_mean: Distribution, q_cov: PointMass) -> MultivariateNormal:
    """exp E_q[log N(out | mean, Σ)] ∝ N(out | E[mean], Σ); exact (log-scale 0) for a clamped ``mean``."""
    return Gaussian(q_mean.mean, q_cov.value, check=False)
