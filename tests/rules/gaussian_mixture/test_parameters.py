"""Table test of GaussianMixture towards ``parameters``: per component the weighted statistics, and the plate's sums."""
import numpy as np
import pytest

from fgraph.families import Categorical, MvNormalMeanCovariance, PointMass
from fgraph.families.normal_wishart import NormalWishart, NormalWishartLikelihood
from fgraph.nodes.gaussian_mixture import GaussianMixtureNode
from tests.rules.gaussian_mixture.cases import LOG_2PI, NODE
from tests.rules.tables import message


def expected(weights, first, second):
    """(η per component, κ per component) for one point, d = 2: (−½ w E[xxᵀ], w E[x], −½ w, ½ w), κ = (1 − w) log 2π."""
    weights = np.asarray(weights, dtype=float)
    return ((-0.5 * weights[:, None, None] * second, weights[:, None] * first, -0.5 * weights, 0.5 * weights),
            (1.0 - weights) * LOG_2PI)


X = np.array([1.0, -2.0])
CASES = [
    # known x = (1, −2), q(z) = (1/4, 3/4): E[xxᵀ] = [[1, −2], [−2, 4]]
    pytest.param({"q_out": PointMass(X, 1), "q_switch": Categorical(np.array([0.25, 0.75]))},
                 expected([0.25, 0.75], X, np.outer(X, X)), id="observed-out"),
    # q(x) = N((1, −2), [[1, 0.5], [0.5, 2]]): E[xxᵀ] = Σ + x̄x̄ᵀ = [[2, −1.5], [−1.5, 6]]
    pytest.param({"q_out": MvNormalMeanCovariance(X, np.array([[1.0, 0.5], [0.5, 2.0]])),
                  "q_switch": Categorical(np.array([0.5, 0.5]))},
                 expected([0.5, 0.5], X, np.array([[2.0, -1.5], [-1.5, 6.0]])), id="latent-out"),
    # a known switch (one-hot): all of the point goes to component 2, component 1 gets zeros (κ = log 2π)
    pytest.param({"q_out": PointMass(X, 1), "q_switch": PointMass(np.array([0.0, 1.0]), 1)},
                 expected([0.0, 1.0], X, np.outer(X, X)), id="known-switch"),
]


@pytest.mark.parametrize("inputs, expected_message", CASES)
def test_parameters(inputs, expected_message):
    eta, coefficient = expected_message
    result = message(GaussianMixtureNode, "parameters", inputs, **NODE)
    assert isinstance(result, NormalWishartLikelihood) and result.batch_shape == (2,)
    for actual, wanted in zip(result.natural_parameters(), eta):
        np.testing.assert_allclose(actual, wanted, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(result.log_scale, coefficient, rtol=1e-12)


def test_a_known_point_and_switch_give_the_factor_itself():
    """exp(κ) h(μ, Λ) exp⟨η, T(μ, Λ)⟩ = N(x | μ, Λ⁻¹) at any (μ, Λ): the message is exact for known x and z."""
    from scipy import stats

    result = message(GaussianMixtureNode, "parameters",
                     {"q_out": PointMass(X, 1), "q_switch": PointMass(np.array([0.0, 1.0]), 1)}, **NODE)
    rng = np.random.default_rng(1)
    for mean, precision in zip(*NormalWishart(np.zeros(2), 1.0, np.eye(2), 3.0).sample(rng, 4)):
        statistics = (precision, precision @ mean, mean @ precision @ mean, np.linalg.slogdet(precision)[1])
        log_value = (result.log_scale[1] + NormalWishart.log_base_measure_of(result.natural_parameters())
                     + sum(np.sum(e[1] * t) for e, t in zip(result.natural_parameters(), statistics)))
        np.testing.assert_allclose(log_value, stats.multivariate_normal.logpdf(X, mean, np.linalg.inv(precision)),
                                   rtol=1e-12)


def test_a_plate_sends_the_sums_of_its_points():
    """Over a plate of N points the message is one per component, the product of the single points' messages:
    natural parameters add, coefficients add less (N − 1) base measures (−log 2π each in d = 2)."""
    rng = np.random.default_rng(0)
    N, K = 6, 2
    x, gamma = rng.normal(size=(N, 2)), rng.dirichlet(np.ones(K), size=N)
    plate = message(GaussianMixtureNode, "parameters", {"q_out": PointMass(x, 1), "q_switch": Categorical(gamma)},
                    batch_shape=(K, N), plate_shape=(N,))
    assert plate.batch_shape == (K, 1)
    singles = [message(GaussianMixtureNode, "parameters",
                       {"q_out": PointMass(x[n], 1), "q_switch": Categorical(gamma[n])}, **NODE) for n in range(N)]
    for j, actual in enumerate(plate.natural_parameters()):
        np.testing.assert_allclose(actual[:, 0], sum(s.natural_parameters()[j] for s in singles), rtol=1e-12)
    np.testing.assert_allclose(plate.log_scale[:, 0], sum(s.log_scale for s in singles) - (N - 1) * LOG_2PI,
                               rtol=1e-12)


def test_copies_keep_their_own_sums():
    """In a model with copies (node batch (R, K, N), switch (R, 1, N)) the sums run over N once per copy."""
    rng = np.random.default_rng(2)
    R, N, K = 3, 5, 2
    x, gamma = rng.normal(size=(N, 2)), rng.dirichlet(np.ones(K), size=(R, 1, N))
    node = GaussianMixtureNode("node", (R, K, N), plate_shape=(N,))
    node.copy_ndim = 1
    from fgraph import registry

    bound = registry.resolve(registry.MESSAGE, GaussianMixtureNode, "parameters",
                             {"q_out": PointMass, "q_switch": Categorical}, "table test")
    copies = bound({"q_out": PointMass(x, 1), "q_switch": Categorical(gamma)}, node, None)
    assert copies.batch_shape == (R, K, 1)
    for r in range(R):
        alone = message(GaussianMixtureNode, "parameters",
                        {"q_out": PointMass(x, 1), "q_switch": Categorical(gamma[r, 0])},
                        batch_shape=(K, N), plate_shape=(N,))
        for actual, wanted in zip(copies.natural_parameters(), alone.natural_parameters()):
            np.testing.assert_allclose(actual[r], wanted, rtol=1e-12)
