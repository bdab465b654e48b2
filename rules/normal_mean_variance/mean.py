"""Messages out of NormalMeanVariance towards ``mean`` (the factor is symmetric in out and mean)."""
from fgraph.families import Distribution, NormalMeanVariance as Normal, PointMass, UnivariateNormal
from fgraph.registry import rule
from nodes.normal import NormalMeanVariance


@rule(NormalMeanVariance, "mean")
def sum_product(m_out: UnivariateNormal, q_var: PointMass) -> UnivariateNormal:
    """∫ N(out | mean, v) m(out) dout = N(mean | μ_m, v_m + v)."""
    return Normal(m_out.mean, m_out.var + q_var.value, check=False)


@rule(NormalMeanVariance, "mean")
def mean_field(q_out: Distribution, q_var: PointMass) -> UnivariateNormal:
    """exp E_q[log N(out | mean, v)] ∝ N(mean | E[out], v); exact for an observed ``out``."""
    return Normal(q_out.mean, q_var.value, check=False)
