"""Messages out of the addition node towards ``in2`` (backwards through out = in1 + in2, so in2 = out - in1).

Every message here integrates to one in ``in2`` (log-scale 0): as a function
of in2, ∫ δ(out - in1 - in2) m(out) m(in1) dout din1 is the density of the
difference out - in1 of two independent variables. Scalar (``Addition``) and
vector (``MvAddition``) nodes share these rules; the family of the incoming
messages picks the version.
"""
from fgraph.families import MultivariateNormal, PointMass, UnivariateNormal
from fgraph.families.mvnormal import MvNormalMeanCovariance
from fgraph.families.normal import NormalMeanVariance
from fgraph.registry import rule
from fgraph.nodes.addition import Addition


@rule(Addition, "in2")
def sum_product(m_out: UnivariateNormal, m_in1: UnivariateNormal) -> UnivariateNormal:
    """N(in2 | μ_out - μ_in1, v_out + v_in1)."""
    return NormalMeanVariance(m_out.mean - m_in1.mean, m_out.var + m_in1.var, check=False)


@rule(Addition, "in2")
def sum_product_multivariate(m_out: MultivariateNormal, m_in1: MultivariateNormal) -> MultivariateNormal:
    """N(in2 | μ_out - μ_in1, Σ_out + Σ_in1)."""
    return MvNormalMeanCovariance(m_out.mean - m_in1.mean, m_out.cov + m_in1.cov, check=False)


@rule(Addition, "in2")
def constant_in1(m_out: UnivariateNormal, q_in1: PointMass) -> UnivariateNormal:
    """m_out(in2 + c) = N(in2 | μ_out - c, v_out)."""
    return NormalMeanVariance(m_out.mean - q_in1.value, m_out.var, check=False)


@rule(Addition, "in2")
def constant_in1_multivariate(m_out: MultivariateNormal, q_in1: PointMass) -> MultivariateNormal:
    """N(in2 | μ_out - c, Σ_out)."""
    return MvNormalMeanCovariance(m_out.mean - q_in1.value, m_out.cov, check=False)


@rule(Addition, "in2")
def observed_out(q_out: PointMass, m_in1: UnivariateNormal) -> UnivariateNormal:
    """m_in1(y - in2) = N(in2 | y - μ_in1, v_in1) for an observed ``out = y``."""
    return NormalMeanVariance(q_out.value - m_in1.mean, m_in1.var, check=False)


@rule(Addition, "in2")
def observed_out_multivariate(q_out: PointMass, m_in1: MultivariateNormal) -> MultivariateNormal:
    """N(in2 | y - μ_in1, Σ_in1) for an observed ``out = y``."""
    return MvNormalMeanCovariance(q_out.value - m_in1.mean, m_in1.cov, check=False)


@rule(Addition, "in2")
def observed_out_constant_in1(q_out: PointMass, q_in1: PointMass) -> PointMass:
    """δ(in2 - (y - c)): with out observed and in1 clamped, in2 is determined (log-scale 0)."""
    return PointMass(q_out.value - q_in1.value, q_out.event_ndim)
