"""The product node's messages towards ``a`` (out = a·b): μ(a) = ∫ m_out(a b) m_b(b) db.

Checked pointwise against adaptive quadrature, and through the mass of the
belief m_a · μ(a), which must be the evidence ∫∫ m_a(a) m_b(b) m_out(a b) da db
(for a point-mass m_out at w: the product density p_ab(w)).
"""
import numpy as np
import pytest
from scipy import integrate

from fgraph.families import Mixture, NormalMeanVariance, PointMass, UnivariateNormal, product
from fgraph.nodes.product import ProductNode
from tests.rules.product.test_out import PRODUCT, reference
from tests.rules.quadrature import log_message, normal_pdf
from tests.rules.tables import assert_message, message, normal, point_mass


def evidence(m_a, m_b, m_out) -> float:
    """log ∫∫ m_a(a) m_b(b) m_out(a b) da db by adaptive quadrature (a smooth integrand)."""
    def integrand(b, a):
        return normal_pdf(a, m_a.mean, m_a.var) * normal_pdf(b, m_b.mean, m_b.var) * normal_pdf(a * b, m_out.mean, m_out.var)

    half_a, half_b = 12 * np.sqrt(m_a.var), 12 * np.sqrt(m_b.var)
    value, _ = integrate.dblquad(integrand, m_a.mean - half_a, m_a.mean + half_a, m_b.mean - half_b, m_b.mean + half_b,
                                 epsabs=1e-13, epsrel=1e-10)
    return float(np.log(value))


@pytest.mark.parametrize("m_out, m_b", [
    (NormalMeanVariance(1.0, 0.5), NormalMeanVariance(0.7, 0.4)),
    (NormalMeanVariance(-0.3, 2.0), NormalMeanVariance(0.0, 1.0)),
], ids=["b-mostly-positive", "b-centred-at-0"])
def test_gaussian_out_pointwise_and_belief_mass(m_out, m_b):
    result = message(ProductNode, "a", {"m_out": m_out, "m_b": m_b})
    assert isinstance(result, Mixture) and result.component_family is UnivariateNormal
    points = np.array([-2.0, -0.7, 0.6, 1.5, 3.0])
    expected = log_message(PRODUCT, "a", {"out": m_out, "b": m_b}, points)
    np.testing.assert_allclose(result.log_scale + result.logpdf(points), expected, atol=1e-4)
    m_a = NormalMeanVariance(0.5, 1.0)
    np.testing.assert_allclose(product(m_a, result).log_scale, evidence(m_a, m_b, m_out), atol=1e-5)


@pytest.mark.parametrize("name", ["m_out", "q_out"])
@pytest.mark.parametrize("value", [0.3, -1.7, 1e-3])
def test_point_mass_out_gives_the_product_density(name, value):
    """m_a · Σ_j (w_j/|b_j|) δ(a − w/b_j) has mass Σ_j w_j m_a(w/b_j)/|b_j| ≈ p_ab(w)."""
    m_a, m_b = NormalMeanVariance(0.5, 1.0), NormalMeanVariance(0.0, 1.0)
    result = message(ProductNode, "a", {name: PointMass(value), "m_b": m_b})
    assert isinstance(result, Mixture) and result.component_family is PointMass
    expected = reference(m_a, m_b, np.array([value]))[0]
    np.testing.assert_allclose(product(m_a, result).log_scale, expected, atol=1e-4)


def test_mixture_out_is_the_weighted_sum_of_component_messages():
    m_b = NormalMeanVariance(0.7, 0.4)
    components = [NormalMeanVariance(1.0, 0.5), NormalMeanVariance(-2.0, 0.3)]
    weights = np.array([0.3, 0.7])
    m_out = Mixture.create(np.log(weights), components)
    result = message(ProductNode, "a", {"m_out": m_out, "m_b": m_b})
    points = np.array([-1.5, 0.4, 2.0])
    singles = [message(ProductNode, "a", {"m_out": c, "m_b": m_b}) for c in components]
    expected = np.log(sum(w * np.exp(s.log_scale + s.logpdf(points)) for w, s in zip(weights, singles)))
    np.testing.assert_allclose(result.log_scale + result.logpdf(points), expected, rtol=1e-12)


def test_known_b_is_exact():
    # m_out(2 a) = N(2a | 1, 4) = N(a | 0.5, 1) / 2
    assert_message(message(ProductNode, "a", {"m_out": NormalMeanVariance(1.0, 4.0), "q_b": PointMass(2.0)}),
                   normal(0.5, 1.0, -np.log(2.0)))
    # δ(3 − (−1.5) a) = δ(a + 2) / 1.5
    assert_message(message(ProductNode, "a", {"q_out": PointMass(3.0), "q_b": PointMass(-1.5)}),
                   point_mass(-2.0, -np.log(1.5)))
