"""Messages out of DiagonalNormal towards ``mean`` (the factor is symmetric in out and mean)."""
from fgraph.families import Distribution, MultivariateNormal, PointMass
from fgraph.families.gaussian_process import MvNormalDiagonal, widened
from fgraph.registry import rule
from fgraph.nodes.diagonal_normal import DiagonalNormalNode


@rule(DiagonalNormalNode, "mean")
def from_observed_out(q_out: PointMass, q_variances: PointMass) -> MvNormalDiagonal:
    """Π_n N(ỹ_n | mean_n, v_n) = N(mean | ỹ, diag v) as a function of ``mean``: it integrates to one (log-scale 0)."""
    return MvNormalDiagonal(q_out.value, q_variances.value, check=False)


@rule(DiagonalNormalNode, "mean")
def sum_product(m_out: MultivariateNormal, q_variances: PointMass) -> MultivariateNormal:
    """∫ N(out | mean, V) m(out) dout = N(mean | μ_m, Σ_m + V); integrates to one in ``mean``."""
    return widened(m_out, q_variances.value)


@rule(DiagonalNormalNode, "mean")
def mean_field(q_out: Distribution, q_variances: PointMass) -> MvNormalDiagonal:
    """exp E_q[log N(out | mean, V)] ∝ N(mean | E[out], V)."""
    return MvNormalDiagonal(q_out.mean, q_variances.value, check=False)
