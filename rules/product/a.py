"""Messages out of the product node towards ``a`` (out = a·b, both random).

The exact message μ(a) = ∫ m_out(a·b) m_b(b) db is not Gaussian (and for a
Gaussian m_b with density at 0 it is not even integrable in a: it decays
like 1/|a|). It is computed on the quadrature nodes c_j of m_b
(:func:`fgraph.nodes.product.quadrature`) as the mixture

    μ(a) ≈ Σ_j w_j m_out(a c_j) = Σ_j (w_j / |c_j|) N(a | μ_out / c_j, v_out / c_j²)

(point masses at w / c_j for a point-mass m_out), whose log-scale
log Σ_j w_j / |c_j| is the quadrature value of that divergent integral. The
belief m_a · μ(a) is proper and its scale converges to the evidence as
the grid is refined. With b a known value c the message m_out(a c) is exact.
"""
import numpy as np

from fgraph.families import Distribution, PointMass, UnivariateNormal
from fgraph.registry import rule
from fgraph.nodes.product import ProductNode, input_message_family, message_to_input


@rule(ProductNode, "a", output=input_message_family)
def sum_product(m_out: Distribution, m_b: UnivariateNormal, node) -> Distribution:
    """Mixture over the quadrature nodes of m_b (see the module docstring)."""
    return message_to_input(m_out, m_b, node)


@rule(ProductNode, "a", output=input_message_family)
def observed_out(q_out: PointMass, m_b: UnivariateNormal, node) -> Distribution:
    """For an observed out = y: Σ_j (w_j / |c_j|) δ(a − y / c_j)."""
    return message_to_input(q_out, m_b, node)


@rule(ProductNode, "a", output=input_message_family)
def constant_b(m_out: Distribution, q_b: PointMass, node) -> Distribution:
    """m_out(a c) for a known b = c: m_out mapped through 1/c, log-scale −log|c| (exact)."""
    return message_to_input(m_out, q_b, node)


@rule(ProductNode, "a")
def observed_out_constant_b(q_out: PointMass, q_b: PointMass) -> PointMass:
    """δ(y − a c) = δ(a − y / c) / |c|."""
    return PointMass(q_out.value / q_b.value, 0, log_scale=-np.log(np.abs(q_b.value)))
