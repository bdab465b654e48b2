"""Messages out of the addition node towards ``out`` (out = in1 + in2).

Every message here integrates to one in ``out`` (log-scale 0): the sum of two
independent normal variables is normal, and a shifted normal stays normalised.
Scalar (``Addition``) and vector (``MvAddition``) nodes share these rules; the
family of the incoming messages picks the version.
"""
from fgraph.families import MultivariateNormal, PointMass, UnivariateNormal
from fgraph.families.mvnormal import MvNormalMeanCovariance
from fgraph.families.normal import NormalMeanVariance
from fgraph.registry import rule
from fgraph.nodes.addition import Addition


@rule(Addition, "out")
def sum_product(m_in1: UnivariateNormal, m_in2: UnivariateNormal) -> UnivariateNormal:
    """∫∫ δ(out - in1 - in2) m(in1) m(in2) din1 din2 = N(out | μ1 + μ2, v1 + v2)."""
    return NormalMeanVariance(m_in1.mean + m_in2.mean, m_in1.var + m_in2.var, check=False)


@rule(Addition, "out")
def sum_product_multivariate(m_in1: MultivariateNormal, m_in2: MultivariateNormal) -> MultivariateNormal:
    """N(out | μ1 + μ2, Σ1 + Σ2)."""
    return MvNormalMeanCovariance(m_in1.mean + m_in2.mean, m_in1.cov + m_in2.cov, check=False)


@rule(Addition, "out")
def constant_in2(m_in1: UnivariateNormal, q_in2: PointMass) -> UnivariateNormal:
    """∫ δ(out - in1 - c) m(in1) din1 = m(out - c) = N(out | μ1 + c, v1)."""
    return NormalMeanVariance(m_in1.mean + q_in2.value, m_in1.var, check=False)


@rule(Addition, "out")
def constant_in2_multivariate(m_in1: MultivariateNormal, q_in2: PointMass) -> MultivariateNormal:
    """N(out | μ1 + c, Σ1)."""
    return MvNormalMeanCovariance(m_in1.mean + q_in2.value, m_in1.cov, check=False)


@rule(Addition, "out")
def constant_in1(q_in1: PointMass, m_in2: UnivariateNormal) -> UnivariateNormal:
    """N(out | c + μ2, v2)."""
    return NormalMeanVariance(q_in1.value + m_in2.mean, m_in2.var, check=False)


@rule(Addition, "out")
def constant_in1_multivariate(q_in1: PointMass, m_in2: MultivariateNormal) -> MultivariateNormal:
    """N(out | c + μ2, Σ2)."""
    return MvNormalMeanCovariance(q_in1.value + m_in2.mean, m_in2.cov, check=False)


@rule(Addition, "out")
def known_inputs(q_in1: PointMass, q_in2: PointMass) -> PointMass:
    """δ(out - (a + b)): with both inputs observed or constant, the sum is known (log-scale 0); scalars and vectors."""
    return PointMass(q_in1.value + q_in2.value, q_in1.event_ndim)
