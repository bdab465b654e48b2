"""Messages out of the product node towards ``out`` (out = a·b, both random).

The default rule integrates numerically over one input: conditionally on
a = x the output is N(out | x μ_b, x² v_b), so

    μ_out(out) = ∫ N(x | μ_a, v_a) N(out | x μ_b, x² v_b) dx ≈ Σ_i w_i N(out | x_i μ_b, x_i² v_b),

a normalised mixture of Gaussians (log-scale 0) on the nodes of
:func:`fgraph.nodes.product.quadrature`, which converges to the exact
product-normal density (logarithmic peak at 0 included) as the grid is
refined. Per batch element it integrates over the input whose mean lies
more standard deviations away from 0, so that fewer nodes fall near the
singular point x = 0. The ``"moment_matching"`` operator returns instead the
Gaussian with the exact first two moments.
"""
import numpy as np

from fgraph.families import Mixture, NormalMeanVariance, PointMass, UnivariateNormal
from fgraph.registry import rule
from fgraph.nodes.product import ProductNode, product_moments, quadrature


@rule(ProductNode, "out", output=lambda families: Mixture.of(UnivariateNormal))
def sum_product(m_a: UnivariateNormal, m_b: UnivariateNormal, node) -> Mixture:
    """Σ_i w_i N(out | x_i μ_o, x_i² v_o): quadrature over one input x, the other (μ_o, v_o) kept Gaussian."""
    mean_a, var_a, mean_b, var_b = np.broadcast_arrays(m_a.mean, m_a.var, m_b.mean, m_b.var)
    over_a = np.abs(mean_a) / np.sqrt(var_a) >= np.abs(mean_b) / np.sqrt(var_b)
    mean_x, var_x = np.where(over_a, mean_a, mean_b), np.where(over_a, var_a, var_b)
    mean_other, var_other = np.where(over_a, mean_b, mean_a), np.where(over_a, var_b, var_a)
    nodes, log_weights = quadrature(mean_x, var_x, node.quadrature_points)
    components = [
        NormalMeanVariance(nodes[..., i] * mean_other, nodes[..., i] ** 2 * var_other, check=False)
        for i in range(nodes.shape[-1])
    ]
    return Mixture.create(log_weights, components, np.zeros(mean_x.shape))


@rule(ProductNode, "out", operator="moment_matching")
def moment_matching(m_a: UnivariateNormal, m_b: UnivariateNormal) -> UnivariateNormal:
    """N(out | μ_a μ_b, v_a v_b + μ_a² v_b + μ_b² v_a): the Gaussian with the exact mean and variance of a·b."""
    mean, var = product_moments(m_a.mean, m_a.var, m_b.mean, m_b.var)
    return NormalMeanVariance(mean, var, check=False)


@rule(ProductNode, "out")
def constant_a(q_a: PointMass, m_b: UnivariateNormal) -> UnivariateNormal:
    """∫ δ(out − α b) m_b(b) db = N(out | α μ_b, α² v_b) for a known a = α ≠ 0 (exact, log-scale 0)."""
    return NormalMeanVariance(q_a.value * m_b.mean, q_a.value**2 * m_b.var, check=False)


@rule(ProductNode, "out")
def constant_b(m_a: UnivariateNormal, q_b: PointMass) -> UnivariateNormal:
    """N(out | β μ_a, β² v_a) for a known b = β ≠ 0 (exact, log-scale 0)."""
    return NormalMeanVariance(q_b.value * m_a.mean, q_b.value**2 * m_a.var, check=False)


@rule(ProductNode, "out")
def constants(q_a: PointMass, q_b: PointMass) -> PointMass:
    """δ(out − α β)."""
    return PointMass(q_a.value * q_b.value, 0)
