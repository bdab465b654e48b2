"""Message of the logistic node to ``coefficients`` β: table by hand, the plate's sums, E_q[log f] by sigma points.

E[ω] = tanh(ξ/2)/(2ξ) (1/4 at ξ = 0), κ = E[out] − ½, x̃ = [x; 1]; the message is
exp(κE[x̃]ᵀβ − ½E[ω]βᵀE[x̃x̃ᵀ]β): weighted mean κE[x̃], precision E[ω]E[x̃x̃ᵀ].
"""
import numpy as np
import pytest

from fgraph.families import (
    Bernoulli,
    GaussianLikelihood,
    MultivariateNormal,
    MvNormalMeanCovariance,
    PointMass,
)
from fgraph.families.gaussian_plate import GaussianLikelihoodOnDemand
from fgraph.nodes.logistic import LogisticNode
from tests.rules.tables import assert_message, message

OMEGA_AT_2 = np.tanh(1.0) / 4.0  # E[ω] at ξ = 2
OMEGA_AT_1 = np.tanh(0.5) / 2.0  # E[ω] at ξ = 1


def likelihood(weighted_mean, precision):
    return {"family": GaussianLikelihood, "weighted_mean": weighted_mean, "precision": precision}


CASES = [
    # y = 1 (κ = ½), x = 2 (x̃ = [2, 1]), ξ = 0 (E[ω] = ¼): ξ = ½[2, 1], W = ¼ [[4, 2], [2, 1]]
    pytest.param({"q_out": PointMass(1.0), "q_input": PointMass(np.array([2.0]), 1), "q_xi": PointMass(0.0)},
                 likelihood([1.0, 0.5], [[1.0, 0.5], [0.5, 0.25]]), id="observed-y1-xi0"),
    # y = 0 (κ = −½), x = [1, −3] (x̃ = [1, −3, 1]), ξ = 2
    pytest.param({"q_out": PointMass(0.0), "q_input": PointMass(np.array([1.0, -3.0]), 1), "q_xi": PointMass(2.0)},
                 likelihood([-0.5, 1.5, -0.5], OMEGA_AT_2 * np.array([[1.0, -3.0, 1.0], [-3.0, 9.0, -3.0],
                                                                     [1.0, -3.0, 1.0]])), id="observed-y0-xi2"),
    # a latent label, E[y] = 0.8: κ = 0.3
    pytest.param({"q_out": Bernoulli(0.8), "q_input": PointMass(np.array([2.0]), 1), "q_xi": PointMass(0.0)},
                 likelihood([0.6, 0.3], [[1.0, 0.5], [0.5, 0.25]]), id="latent-label"),
    # latent x ~ N(1, 0.5): E[x̃] = [1, 1], E[x̃x̃ᵀ] = [[1.5, 1], [1, 1]]; y = 1, ξ = 0: proper (det = 1/32)
    pytest.param({"q_out": PointMass(1.0), "q_input": MvNormalMeanCovariance([1.0], [[0.5]]), "q_xi": PointMass(0.0)},
                 {"family": MultivariateNormal, "weighted_mean": [0.5, 0.5], "precision": [[0.375, 0.25], [0.25, 0.25]]},
                 id="latent-input-proper"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_coefficients(inputs, expected):
    assert_message(message(LogisticNode, "coefficients", inputs), expected)


def test_a_plate_of_known_inputs_carries_its_sums_and_forms_elements_only_if_asked():
    # x = [1, −1, 0.5], y = [1, 0, 1] (κ = [½, −½, ½]), ξ = [0, 2, 1]
    inputs = {"q_out": PointMass(np.array([1.0, 0.0, 1.0])), "q_input": PointMass(np.array([[1.0], [-1.0], [0.5]]), 1),
              "q_xi": PointMass(np.array([0.0, 2.0, 1.0]))}
    result = message(LogisticNode, "coefficients", inputs)
    assert isinstance(result, GaussianLikelihoodOnDemand) and result.batch_shape == (3,)
    # Σ κ x̃ = ½[1, 1] − ½[−1, 1] + ½[0.5, 1] = [1.25, 0.5]
    # Σ E[ω] x̃x̃ᵀ = ¼[[1, 1], [1, 1]] + ω(2)[[1, −1], [−1, 1]] + ω(1)[[0.25, 0.5], [0.5, 1]]
    precision = (0.25 * np.array([[1.0, 1.0], [1.0, 1.0]]) + OMEGA_AT_2 * np.array([[1.0, -1.0], [-1.0, 1.0]])
                 + OMEGA_AT_1 * np.array([[0.25, 0.5], [0.5, 1.0]]))
    weighted_total, minus_half_precision_total = result.natural_parameter_totals()
    np.testing.assert_allclose(weighted_total, [1.25, 0.5], rtol=1e-14)
    np.testing.assert_allclose(minus_half_precision_total, -0.5 * precision, rtol=1e-14)
    assert not result.elements_formed()
    # asked for, the elements are the three rank-one messages, and they add up to the totals
    assert_message(result, likelihood([[0.5, 0.5], [0.5, -0.5], [0.25, 0.5]],
                                      [0.25 * np.ones((2, 2)), OMEGA_AT_2 * np.array([[1.0, -1.0], [-1.0, 1.0]]),
                                       OMEGA_AT_1 * np.array([[0.25, 0.5], [0.5, 1.0]])]))
    assert result.elements_formed()
    np.testing.assert_allclose(result.precision.sum(axis=0), precision, rtol=1e-14)


def test_a_batch_is_the_rule_element_by_element():
    rng = np.random.default_rng(4)
    labels, rows, xi = rng.integers(0, 2, 5).astype(float), rng.normal(size=(5, 2)), rng.uniform(0, 3, 5)
    batched = message(LogisticNode, "coefficients",
                      {"q_out": PointMass(labels), "q_input": PointMass(rows, 1), "q_xi": PointMass(xi)})
    for n in range(5):
        single = message(LogisticNode, "coefficients",
                         {"q_out": PointMass(labels[n]), "q_input": PointMass(rows[n], 1), "q_xi": PointMass(xi[n])})
        np.testing.assert_allclose(batched.weighted_mean[n], single.weighted_mean, rtol=1e-14)
        np.testing.assert_allclose(batched.precision[n], single.precision, rtol=1e-14)


def test_the_message_is_the_expected_augmented_log_factor_under_a_latent_input():
    """log m(β₁) − log m(β₂) = E_q[κψ − E[ω]ψ²/2 | β₁] − (… | β₂), the expectation over x by sigma points.

    For a quadratic in x the 2d points μ ± sqrt(d) L e_i (LLᵀ = Σ, equal weights) give the
    Gaussian expectation exactly: an evaluation independent of the rule's moment algebra.
    """
    mean, cov = np.array([0.3, -1.2]), np.array([[0.8, 0.3], [0.3, 0.5]])
    kappa, xi = -0.5, 1.7
    omega = np.tanh(xi / 2) / (2 * xi)
    result = message(LogisticNode, "coefficients", {"q_out": PointMass(0.0), "q_input": MvNormalMeanCovariance(mean, cov),
                                                    "q_xi": PointMass(xi)})
    factor = np.linalg.cholesky(cov)
    points = np.concatenate([mean + np.sqrt(2) * factor.T, mean - np.sqrt(2) * factor.T])  # rows: μ ± sqrt(d) L e_i

    def expected_log_factor(beta):
        psi = points @ beta[:2] + beta[2]
        return np.mean(kappa * psi - 0.5 * omega * psi**2)

    def log_message(beta):
        return result.weighted_mean @ beta - 0.5 * beta @ result.precision @ beta

    first, second = np.array([0.4, -1.0, 2.0]), np.array([-1.5, 0.2, 0.7])
    assert log_message(first) - log_message(second) == pytest.approx(
        expected_log_factor(first) - expected_log_factor(second), rel=1e-13)


def test_without_an_intercept_the_input_is_used_as_it_is():
    # x = [2, 1], y = 1, ξ = 0: the same numbers as x = 2 with the 1 appended
    result = message(LogisticNode, "coefficients", {"q_out": PointMass(1.0), "q_input": PointMass(np.array([2.0, 1.0]), 1),
                                                    "q_xi": PointMass(0.0)}, intercept=False)
    assert_message(result, likelihood([1.0, 0.5], [[1.0, 0.5], [0.5, 0.25]]))
    # latent x ~ N([1, 0], diag(0.5, 2)), y = 0 (κ = −½), ξ = 0: −½[1, 0], ¼[[1.5, 0], [0, 2]]
    result = message(LogisticNode, "coefficients",
                     {"q_out": PointMass(0.0), "q_input": MvNormalMeanCovariance([1.0, 0.0], np.diag([0.5, 2.0])),
                      "q_xi": PointMass(0.0)}, intercept=False)
    assert_message(result, {"family": MultivariateNormal, "weighted_mean": [-0.5, 0.0],
                            "precision": [[0.375, 0.0], [0.0, 0.5]]})
