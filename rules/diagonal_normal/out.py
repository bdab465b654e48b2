"""Messages out of DiagonalNormal towards ``out``."""
from fgraph.families import Distribution, MultivariateNormal, PointMass
from fgraph.families.gaussian_process import MvNormalDiagonal, widened
from fgraph.registry import rule
from fgraph.nodes.diagonal_normal import DiagonalNormalNode


@rule(DiagonalNormalNode, "out")
def from_known_mean(q_mean: PointMass, q_variances: PointMass) -> MvNormalDiagonal:
    """N(out | m, diag v) for a clamped mean (a normalised density, log-scale 0)."""
    return MvNormalDiagonal(q_mean.value, q_variances.value, check=False)


@rule(DiagonalNormalNode, "out")
def sum_product(m_mean: MultivariateNormal, q_variances: PointMass) -> MultivariateNormal:
    """∫ N(out | mean, V) m(mean) dmean = N(out | μ_m, Σ_m + V): the predictive of noisy observations."""
    return widened(m_mean, q_variances.value)


@rule(DiagonalNormalNode, "out")
def mean_field(q_mean: Distribution, q_variances: PointMass) -> MvNormalDiagonal:
    """exp E_q[log N(out | mean, V)] ∝ N(out | E[mean], V)."""
    return MvNormalDiagonal(q_mean.mean, q_variances.value, check=False)
