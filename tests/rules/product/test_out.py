"""The product node's messages towards ``out`` (out = a·b, both random).

The default rule is checked against the exact product-normal density by
adaptive quadrature (``tests.rules.quadrature``) and against its exact
moments; the moment-matching operator against Monte Carlo draws of a·b.
"""
import numpy as np
import pytest

from fgraph.families import Mixture, NormalMeanVariance, PointMass, UnivariateNormal
from fgraph.nodes.product import ProductNode, product_moments
from tests.rules.quadrature import DeltaFactor, log_message
from tests.rules.tables import assert_message, message, normal, point_mass

PRODUCT = DeltaFactor({
    "out": lambda v: (v["a"] * v["b"], 1.0),
    "a": lambda v: (v["out"] / v["b"], abs(v["b"])),
    "b": lambda v: (v["out"] / v["a"], abs(v["a"])),
})

# (μ_a, v_a, μ_b, v_b): the paper's mixed model, both means away from 0, both near 0, a wide a with a sharp b
INPUTS = [(0.5, 1.0, 0.0, 1.0), (2.0, 0.5, -1.0, 2.0), (0.1, 0.2, 0.3, 0.4), (-0.5, 4.0, 1.0, 0.01)]


def reference(m_a, m_b, points):
    """log p_ab at ``points`` by adaptive quadrature, over the input whose mean lies further from 0 in sd.

    The harness eliminates the last input against the delta and integrates
    over the other; integrating over an input with mass near 0 would meet the
    1/|x| spike of the conditional density there.
    """
    def distance(m):
        return abs(float(m.mean)) / np.sqrt(float(m.var))

    order = {"b": m_b, "a": m_a} if distance(m_b) > distance(m_a) else {"a": m_a, "b": m_b}
    return log_message(PRODUCT, "out", order, points)


@pytest.mark.parametrize("mean_a, var_a, mean_b, var_b", INPUTS)
def test_density_matches_numerical_integration(mean_a, var_a, mean_b, var_b):
    m_a, m_b = NormalMeanVariance(mean_a, var_a), NormalMeanVariance(mean_b, var_b)
    result = message(ProductNode, "out", {"m_a": m_a, "m_b": m_b})
    assert isinstance(result, Mixture) and result.component_family is UnivariateNormal
    mean, var = product_moments(mean_a, var_a, mean_b, var_b)
    # the bulk, the tails and points close to the logarithmic peak at 0
    points = np.concatenate([mean + np.sqrt(var) * np.array([-3.0, -1.0, 0.4, 1.0, 3.0]), [1e-3, -2e-2, 0.1]])
    np.testing.assert_allclose(result.log_scale + result.logpdf(points), reference(m_a, m_b, points), atol=1e-4)


@pytest.mark.parametrize("mean_a, var_a, mean_b, var_b", INPUTS)
def test_mixture_has_the_exact_moments_and_unit_mass(mean_a, var_a, mean_b, var_b):
    result = message(ProductNode, "out", {"m_a": NormalMeanVariance(mean_a, var_a), "m_b": NormalMeanVariance(mean_b, var_b)})
    mean, var = product_moments(mean_a, var_a, mean_b, var_b)
    np.testing.assert_allclose(result.log_scale, 0.0, atol=1e-12)
    np.testing.assert_allclose(result.weights.sum(axis=-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(result.mean, mean, atol=1e-10)
    np.testing.assert_allclose(result.var, var, rtol=1e-10)


def test_batched_inputs_give_one_density_per_element():
    m_a = NormalMeanVariance(np.array([0.5, 2.0]), np.array([1.0, 0.5]))
    m_b = NormalMeanVariance(np.array([0.0, -1.0]), np.array([1.0, 2.0]))
    result = message(ProductNode, "out", {"m_a": m_a, "m_b": m_b})
    assert result.batch_shape == (2,)
    for i, (mean_a, var_a, mean_b, var_b) in enumerate([(0.5, 1.0, 0.0, 1.0), (2.0, 0.5, -1.0, 2.0)]):
        single = message(ProductNode, "out", {"m_a": NormalMeanVariance(mean_a, var_a), "m_b": NormalMeanVariance(mean_b, var_b)})
        points = np.array([-1.0, 0.3, 2.0])
        np.testing.assert_allclose(result[i].logpdf(points), single.logpdf(points), rtol=1e-12)


def test_moment_matching_operator_against_monte_carlo():
    """N(μ_a μ_b, v_a v_b + μ_a² v_b + μ_b² v_a), log-scale 0; the moments of 10^6 draws of a·b agree."""
    node = ProductNode("node", (), operator="moment_matching")
    from fgraph import registry

    families = {"m_a": NormalMeanVariance, "m_b": NormalMeanVariance}
    bound = registry.resolve(registry.MESSAGE, ProductNode, "out", families, "test", "moment_matching")
    result = bound({"m_a": NormalMeanVariance(0.5, 1.0), "m_b": NormalMeanVariance(-1.5, 2.0)}, node)
    # mean 0.5 · (−1.5) = −0.75; variance 1·2 + 0.25·2 + 2.25·1 = 4.75
    assert_message(result, normal(-0.75, 4.75))
    rng = np.random.default_rng(0)
    draws = rng.normal(0.5, 1.0, 1_000_000) * rng.normal(-1.5, np.sqrt(2.0), 1_000_000)
    standard_error_mean = np.sqrt(4.75 / draws.size)
    assert abs(draws.mean() - result.mean) < 5 * standard_error_mean
    assert abs(draws.var() / result.var - 1.0) < 0.01


def test_known_input_gives_the_exact_gaussian():
    # out = 2 b with b ~ N(1, 3): N(2, 12)
    assert_message(message(ProductNode, "out", {"q_a": PointMass(2.0), "m_b": NormalMeanVariance(1.0, 3.0)}),
                   normal(2.0, 12.0))
    assert_message(message(ProductNode, "out", {"m_a": NormalMeanVariance(1.0, 3.0), "q_b": PointMass(-2.0)}),
                   normal(-2.0, 12.0))
    assert_message(message(ProductNode, "out", {"q_a": PointMass(2.0), "q_b": PointMass(-3.0)}), point_mass(-6.0))


def test_more_quadrature_points_converge():
    m_a, m_b = NormalMeanVariance(0.5, 1.0), NormalMeanVariance(0.0, 1.0)
    points = np.array([1e-4, 0.05, 0.7, 2.5])
    expected = reference(m_a, m_b, points)
    errors = [
        np.max(np.abs(message(ProductNode, "out", {"m_a": m_a, "m_b": m_b}, quadrature_points=k).logpdf(points) - expected))
        for k in (40, 100, 200)
    ]
    assert errors[0] > errors[1] > errors[2] and errors[2] < 1e-6
