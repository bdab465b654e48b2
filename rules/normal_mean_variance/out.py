"""Messages out of NormalMeanVariance towards ``out``."""
from fgraph.families import Distribution, NormalMeanVariance as Normal, PointMass, UnivariateNormal
from fgraph.registry import rule
from nodes.normal import NormalMeanVariance


@rule(NormalMeanVariance, "out")
def sum_product(m_mean: UnivariateNormal, q_var: PointMass) -> UnivariateNormal:
    """∫ N(out | mean, v) m(mean) dmean = N(out | μ_m, v_m + v); integrates to one in ``out``."""
    return Normal(m_mean.mean, m_mean.var + q_var.value, check=False)


@rule(NormalMeanVariance, "out")
def mean_field(q_mean: Distribution, q_var: PointMass) -> UnivariateNormal:
    """exp E_q[log N(out | mean, v)] ∝ N(out | E[mean], v)."""
    return Normal(q_mean.mean, q_var.value, check=False)
