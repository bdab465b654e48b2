"""Messages out of the addition node towards ``in1`` (backwards through out = in1 + in2, so in1 = out - in2).

Every message here integrates to one in ``in1`` (log-scale 0): as a function
of in1, ∫ δ(out - in1 - in2) m(out) m(in2) dout din2 is the density of the
difference out - in2 of two independent variables. Scalar (``Addition``) and
vector (``MvAddition``) nodes share these rules; the family of the incoming
messages picks the version.
"""
from fgraph.families import MultivariateNormal, PointMass, UnivariateNormal
from fgraph.families.mvnormal import MvNormalMeanCovariance
from fgraph.families.normal import NormalMeanVariance
from fgraph.registry import rule
from fgraph.nodes.addition import Addition


@rule(Addition, "in1")
def sum_product(m_out: UnivariateNormal, m_in2: UnivariateNormal) -> UnivariateNormal:
    """N(in1 | μ_out - μ_in2, v_out + v_in2)."""
    return NormalMeanVariance(m_out.mean - m_in2.mean, m_out.var + m_in2.var, check=False)


@rule(Addition, "in1")
def sum_product_multivariate(m_out: MultivariateNormal, m_in2: MultivariateNormal) -> MultivariateNormal:
    """N(in1 | μ_out - μ_in2, Σ_out + Σ_in2)."""
    return MvNormalMeanCovariance(m_out.mean - m_in2.mean, m_out.cov + m_in2.cov, check=False)


@rule(Addition, "in1")
def constant_in2(m_out: UnivariateNormal, q_in2: PointMass) -> UnivariateNormal:
    """m_out(in1 + c) = N(in1 | μ_out - c, v_out)."""
    return NormalMeanVariance(m_out.mean - q_in2.value, m_out.var, check=False)


@rule(Addition, "in1")
def constant_in2_multivariate(m_out: MultivariateNormal, q_in2: PointMass) -> MultivariateNormal:
    """N(in1 | μ_out - c, Σ_out)."""
    return MvNormalMeanCovariance(m_out.mean - q_in2.value, m_out.cov, check=False)


@rule(Addition, "in1")
def observed_out(q_out: PointMass, m_in2: UnivariateNormal) -> UnivariateNormal:
    """m_in2(y - in1) = N(in1 | y - μ_in2, v_in2) for an observed ``out = y``."""
    return NormalMeanVariance(q_out.value - m_in2.mean, m_in2.var, check=False)


@rule(Addition, "in1")
def observed_out_multivariate(q_out: PointMass, m_in2: MultivariateNormal) -> MultivariateNormal:
    """N(in1 | y - μ_in2, Σ_in2) for an observed ``out = y``."""
    return MvNormalMeanCovariance(q_out.value - m_in2.mean, m_in2.cov, check=False)


@rule(Addition, "in1")
def observed_out_constant_in2(q_out: PointMass, q_in2: PointMass) -> PointMass:
    """δ(in1 - (y - c)): with out observed and in2 clamped, in1 is determined (log-scale 0)."""
    return PointMass(q_out.value - q_in2.value, q_out.event_ndim)
