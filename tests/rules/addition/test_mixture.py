"""Addition with a mixture on one input: the mixture passes through component by component, weights unchanged."""
import numpy as np

from fgraph.families import Mixture, NormalMeanVariance, PointMass, UnivariateNormal
from nodes.addition import Addition
from tests.rules.tables import message

WEIGHTS = np.array([0.3, 0.7])


def point_masses(*values):
    return Mixture.create(np.log(WEIGHTS), [PointMass(v) for v in values])


def normals(*pairs):
    return Mixture.create(np.log(WEIGHTS), [NormalMeanVariance(m, v) for m, v in pairs])


def assert_mixture(result, family, weights, means, variances=None):
    assert isinstance(result, Mixture) and result.component_family is family
    np.testing.assert_allclose(result.log_scale, 0.0, atol=1e-12)
    np.testing.assert_allclose(result.weights, weights, rtol=1e-12)
    np.testing.assert_allclose([c.mean for c in result.components], means, rtol=1e-12)
    if variances is not None:
        np.testing.assert_allclose([c.var for c in result.components], variances, rtol=1e-12)


def test_observed_out_and_switched_constants():
    # y = 5 and in2 ∈ {1, 2}: in1 ∈ {4, 3} with the same weights
    assert_mixture(message(Addition, "in1", {"q_out": PointMass(5.0), "m_in2": point_masses(1.0, 2.0)}),
                   PointMass, WEIGHTS, [4.0, 3.0])
    assert_mixture(message(Addition, "in2", {"q_out": PointMass(5.0), "m_in1": point_masses(1.0, 2.0)}),
                   PointMass, WEIGHTS, [4.0, 3.0])


def test_observed_out_and_gaussian_mixture():
    # in1 = 5 − in2: N(5 − μ_k, v_k)
    assert_mixture(message(Addition, "in1", {"q_out": PointMass(5.0), "m_in2": normals((1.0, 2.0), (-1.0, 0.5))}),
                   UnivariateNormal, WEIGHTS, [4.0, 6.0], [2.0, 0.5])
    assert_mixture(message(Addition, "in2", {"q_out": PointMass(5.0), "m_in1": normals((1.0, 2.0), (-1.0, 0.5))}),
                   UnivariateNormal, WEIGHTS, [4.0, 6.0], [2.0, 0.5])


def test_mixture_on_out():
    # in1 = out − in2 with in2 ~ N(1, 3): N(μ_k − 1, v_k + 3); with in2 = 1 known: N(μ_k − 1, v_k)
    out = normals((1.0, 2.0), (-1.0, 0.5))
    assert_mixture(message(Addition, "in1", {"m_out": out, "m_in2": NormalMeanVariance(1.0, 3.0)}),
                   UnivariateNormal, WEIGHTS, [0.0, -2.0], [5.0, 3.5])
    assert_mixture(message(Addition, "in2", {"m_out": out, "q_in1": PointMass(1.0)}),
                   UnivariateNormal, WEIGHTS, [0.0, -2.0], [2.0, 0.5])


def test_forward_sum_with_a_mixture():
    # out = in1 + in2: N(μ_k + 1, v_k + 3), and a shift by a known in2 = 1
    in1 = normals((1.0, 2.0), (-1.0, 0.5))
    assert_mixture(message(Addition, "out", {"m_in1": in1, "m_in2": NormalMeanVariance(1.0, 3.0)}),
                   UnivariateNormal, WEIGHTS, [2.0, 0.0], [5.0, 3.5])
    assert_mixture(message(Addition, "out", {"m_in1": in1, "q_in2": PointMass(1.0)}),
                   UnivariateNormal, WEIGHTS, [2.0, 0.0], [2.0, 0.5])
    assert_mixture(message(Addition, "out", {"q_in1": PointMass(1.0), "m_in2": in1}),
                   UnivariateNormal, WEIGHTS, [2.0, 0.0], [2.0, 0.5])
