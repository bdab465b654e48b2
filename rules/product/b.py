"""Messages out of the product node towards ``b`` (out = a·b, both random).

The exact message μ(b) = ∫ m_out(b·a) m_a(a) da is not Gaussian (and for a
Gaussian m_a with density at 0 it is not even integrable in b: it decays
like 1/|b|). It is computed on the quadrature nodes c_j of m_a
(:func:`fgraph.nodes.product.quadrature`) as the mixture

    μ(b) ≈ Σ_j w_j m_out(b c_j) = Σ_j (w_j / |c_j|) N(b | μ_out / c_j, v_out / c_j²)

(point masses at w / c_j for a point-mass m_out), whose log-scale
log Σ_j w_j / |c_j| is the quadrature value of that divergent integral. The
belief m_b · μ(b) is proper and its scale converges to the evidence as
the grid is refined. With a a known value c the message m_out(b c) is exact.
"""
import numpy as np

from fgraph.families import Distribution, PointMass, UnivariateNormal
from fgraph.registry import rule
from fgraph.nodes.product import ProductNode, input_message_family, message_to_input


@rule(ProductNode, "b", output=input_message_family)
def sum_product(m_out: Distribution, m_a: UnivariateNormal, node) -> Distribution:
    """Mixture over the quadrature nodes of m_a (see the module docstring)."""
    return message_to_input(m_out, m_a, node)


@rule(ProductNode, "b", output=input_message_family)
def observed_out(q_out: PointMass, m_a: UnivariateNormal, node) -> Distribution:
    """For an observed out = y: Σ_j (w_j / |c_j|) δ(b − y / c_j)."""
    return message_to_input(q_out, m_a, node)


@rule(ProductNode, "b", output=input_message_family)
def constant_a(m_out: Distribution, q_a: PointMass, node) -> Distribution:
    """m_out(b c) for a known a = c: m_out mapped through 1/c, log-scale −log|c| (exact)."""
    return message_to_input(m_out, q_a, node)


@rule(ProductNode, "b")
def observed_out_constant_a(q_out: PointMass, q_a: PointMass) -> PointMass:
    """δ(y − b c) = δ(b − y / c) / |c|."""
    return PointMass(q_out.value / q_a.value, 0, log_scale=-np.log(np.abs(q_a.value)))
