"""Message of the logistic node to ``input`` x: table by hand and E_q[log f] by sigma points over β.

With β = [w; β₀]: weighted mean κE[w] − E[ω]E[wβ₀], precision E[ω]E[wwᵀ].
"""
import numpy as np
import pytest

from fgraph.families import GaussianLikelihood, MultivariateNormal, MvNormalMeanCovariance, PointMass
from fgraph.nodes.logistic import LogisticNode
from tests.rules.tables import assert_message, message

CASES = [
    # β ~ N([1, −2], [[.5, .1], [.1, .3]]): E[ββᵀ] = [[1.5, −1.9], [−1.9, 4.3]]; y = 1 (κ = ½), ξ = 0 (E[ω] = ¼)
    # weighted mean ½·1 − ¼·(−1.9) = 0.975, precision ¼·1.5 = 0.375
    pytest.param({"q_out": PointMass(1.0), "q_coefficients": MvNormalMeanCovariance([1.0, -2.0], [[0.5, 0.1], [0.1, 0.3]]),
                  "q_xi": PointMass(0.0)},
                 {"family": MultivariateNormal, "weighted_mean": [0.975], "precision": [[0.375]]}, id="proper"),
    # known β = [1, 2, −1]; y = 0 (κ = −½), ξ = 0: −½[1, 2] − ¼(−1)[1, 2] = [−¼, −½]; precision ¼ wwᵀ (rank one)
    pytest.param({"q_out": PointMass(0.0), "q_coefficients": PointMass(np.array([1.0, 2.0, -1.0]), 1),
                  "q_xi": PointMass(0.0)},
                 {"family": GaussianLikelihood, "weighted_mean": [-0.25, -0.5], "precision": [[0.25, 0.5], [0.5, 1.0]]},
                 id="known-coefficients-rank-one"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_input(inputs, expected):
    assert_message(message(LogisticNode, "input", inputs), expected)


def test_the_message_is_the_expected_augmented_log_factor():
    """log m(x₁) − log m(x₂) against E_{q(β)}[κψ − E[ω]ψ²/2] by the 2D sigma points of q(β) (exact for quadratics)."""
    mean = np.array([0.5, -1.0, 0.8])
    cov = np.array([[0.6, 0.2, -0.1], [0.2, 0.9, 0.3], [-0.1, 0.3, 0.4]])
    kappa, xi = 0.5, 0.9
    omega = np.tanh(xi / 2) / (2 * xi)
    result = message(LogisticNode, "input", {"q_out": PointMass(1.0), "q_coefficients": MvNormalMeanCovariance(mean, cov),
                                             "q_xi": PointMass(xi)})
    factor = np.linalg.cholesky(cov)
    points = np.concatenate([mean + np.sqrt(3) * factor.T, mean - np.sqrt(3) * factor.T])

    def expected_log_factor(x):
        psi = points[:, :2] @ x + points[:, 2]
        return np.mean(kappa * psi - 0.5 * omega * psi**2)

    def log_message(x):
        return result.weighted_mean @ x - 0.5 * x @ result.precision @ x

    first, second = np.array([1.0, 2.0]), np.array([-0.3, 0.4])
    assert log_message(first) - log_message(second) == pytest.approx(
        expected_log_factor(first) - expected_log_factor(second), rel=1e-13)


def test_a_batch_is_the_rule_element_by_element():
    rng = np.random.default_rng(5)
    labels, xi = rng.integers(0, 2, 4).astype(float), rng.uniform(0, 3, 4)
    q_beta = MvNormalMeanCovariance([0.2, -0.4, 1.0], np.diag([0.5, 0.7, 0.2]))
    batched = message(LogisticNode, "input", {"q_out": PointMass(labels), "q_coefficients": q_beta, "q_xi": PointMass(xi)})
    for n in range(4):
        single = message(LogisticNode, "input",
                         {"q_out": PointMass(labels[n]), "q_coefficients": q_beta, "q_xi": PointMass(xi[n])})
        np.testing.assert_allclose(batched.weighted_mean[n], single.weighted_mean, rtol=1e-14)
        np.testing.assert_allclose(batched.precision[n], single.precision, rtol=1e-14)


def test_without_an_intercept_every_coefficient_multiplies_the_input():
    # β ~ N([1, −2], ...): E[ββᵀ] = [[1.5, −1.9], [−1.9, 4.3]]; y = 1, ξ = 2: ½[1, −2], E[ω] E[ββᵀ]
    result = message(LogisticNode, "input",
                     {"q_out": PointMass(1.0), "q_coefficients": MvNormalMeanCovariance([1.0, -2.0], [[0.5, 0.1], [0.1, 0.3]]),
                      "q_xi": PointMass(2.0)}, intercept=False)
    assert_message(result, {"family": MultivariateNormal, "weighted_mean": [0.5, -1.0],
                            "precision": np.tanh(1.0) / 4.0 * np.array([[1.5, -1.9], [-1.9, 4.3]])})
