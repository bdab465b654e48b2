"""The product node's messages towards ``b``: the rules towards ``a`` with the roles of a and b swapped."""
import numpy as np

from fgraph.families import NormalMeanVariance, PointMass, product
from fgraph.nodes.product import ProductNode
from tests.rules.product.test_a import evidence
from tests.rules.product.test_out import reference
from tests.rules.tables import assert_message, message, normal, point_mass


def test_gaussian_out_belief_mass():
    m_out, m_a, m_b = NormalMeanVariance(-0.3, 2.0), NormalMeanVariance(0.5, 1.0), NormalMeanVariance(0.0, 1.0)
    result = message(ProductNode, "b", {"m_out": m_out, "m_a": m_a})
    np.testing.assert_allclose(product(m_b, result).log_scale, evidence(m_a, m_b, m_out), atol=1e-5)


def test_observed_out_gives_the_product_density():
    m_a, m_b = NormalMeanVariance(0.5, 1.0), NormalMeanVariance(0.0, 1.0)
    result = message(ProductNode, "b", {"q_out": PointMass(0.8), "m_a": m_a})
    np.testing.assert_allclose(product(m_b, result).log_scale, reference(m_a, m_b, np.array([0.8]))[0], atol=1e-4)


def test_symmetric_to_the_message_towards_a():
    m_out, other = NormalMeanVariance(1.0, 0.5), NormalMeanVariance(0.7, 0.4)
    to_b = message(ProductNode, "b", {"m_out": m_out, "m_a": other})
    to_a = message(ProductNode, "a", {"m_out": m_out, "m_b": other})
    points = np.array([-1.0, 0.5, 2.0])
    np.testing.assert_allclose(to_b.logpdf(points), to_a.logpdf(points), rtol=1e-14)
    np.testing.assert_allclose(to_b.log_scale, to_a.log_scale, rtol=1e-14)


def test_known_a_is_exact():
    assert_message(message(ProductNode, "b", {"m_out": NormalMeanVariance(1.0, 4.0), "q_a": PointMass(-2.0)}),
                   normal(-0.5, 1.0, -np.log(2.0)))
    # δ(3 − 4 b) = δ(b − 0.75) / 4: the point y / c and the Jacobian 1 / |c| of the delta
    assert_message(message(ProductNode, "b", {"q_out": PointMass(3.0), "q_a": PointMass(4.0)}),
                   point_mass(0.75, -np.log(4.0)))
    # δ(3 − (−1.5) b) = δ(b + 2) / 1.5
    assert_message(message(ProductNode, "b", {"q_out": PointMass(3.0), "q_a": PointMass(-1.5)}),
                   point_mass(-2.0, -np.log(1.5)))
