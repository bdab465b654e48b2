"""Message of the stick-breaking logistic node to stick k's coefficients β_k: table by hand, the plate's sums.

K = 3 classes, sticks 0 and 1; b_k(j) = [k ≤ j], κ_k(j) = [k = j] − b_k(j)/2; under q(y) = Cat(p)
E[b_k] = Σ_{j≥k} p_j, E[κ_k] = p_k − E[b_k]/2. ω̄(ξ) = tanh(ξ/2)/(2ξ) (1/4 at 0). The message is
exp(E[κ_k] E[x̃]ᵀβ − ½ E[b_k] ω̄(ξ_k) βᵀE[x̃x̃ᵀ]β): weighted mean E[κ_k]E[x̃], precision E[b_k]ω̄_k E[x̃x̃ᵀ].
"""
import numpy as np
import pytest

from fgraph.families import Categorical, GaussianLikelihood, MultivariateNormal, MvNormalMeanCovariance, PointMass
from fgraph.families.gaussian_plate import GaussianLikelihoodOnDemand
from fgraph.nodes.stick_breaking_logistic import StickBreakingLogisticNode
from tests.rules.tables import assert_message, message

OMEGA_AT_2 = np.tanh(1.0) / 4.0  # ω̄ at ξ = 2
OMEGA_AT_1 = np.tanh(0.5) / 2.0  # ω̄ at ξ = 1
INTERFACES = ("out", "input", "xi", "coefficients1", "coefficients2")


def one_hot(j, classes=3):
    return PointMass(np.eye(classes)[j], 1)


def likelihood(weighted_mean, precision):
    return {"family": GaussianLikelihood, "weighted_mean": weighted_mean, "precision": precision}


def tilts(*values):
    return PointMass(np.array(values, dtype=float), 1)


CASES = [
    # class 0: b = [1, 0], κ = [½, 0]; x̃ = [2, 1], ξ = 0: stick 0 gets ½[2, 1] and ¼x̃x̃ᵀ
    pytest.param({"q_out": one_hot(0), "q_input": PointMass(np.array([2.0]), 1), "q_xi": tilts(0, 0)}, 0,
                 likelihood([1.0, 0.5], [[1.0, 0.5], [0.5, 0.25]]), id="class0-stick0"),
    # class 0 never reaches stick 1: b_1 = 0, κ_1 = 0, the message is flat
    pytest.param({"q_out": one_hot(0), "q_input": PointMass(np.array([2.0]), 1), "q_xi": tilts(0, 0)}, 1,
                 likelihood([0.0, 0.0], [[0.0, 0.0], [0.0, 0.0]]), id="class0-stick1-flat"),
    # the last class passes both sticks: κ = [−½, −½]; x̃ = [−1, 1], ξ = [2, 1]: stick 1 gets −½[−1, 1], ω̄(1)x̃x̃ᵀ
    pytest.param({"q_out": one_hot(2), "q_input": PointMass(np.array([-1.0]), 1), "q_xi": tilts(2, 1)}, 1,
                 likelihood([0.5, -0.5], OMEGA_AT_1 * np.array([[1.0, -1.0], [-1.0, 1.0]])), id="class2-stick1"),
    # q(y) = Cat(0.2, 0.5, 0.3): E[b] = [1, 0.8], E[κ] = [0.2 − 0.5, 0.5 − 0.4] = [−0.3, 0.1]; x̃ = [2, 1], ξ_1 = 2
    pytest.param({"q_out": Categorical([0.2, 0.5, 0.3]), "q_input": PointMass(np.array([2.0]), 1),
                  "q_xi": tilts(0, 2)}, 1,
                 likelihood([0.2, 0.1], 0.8 * OMEGA_AT_2 * np.array([[4.0, 2.0], [2.0, 1.0]])), id="latent-class-stick1"),
    pytest.param({"q_out": Categorical([0.2, 0.5, 0.3]), "q_input": PointMass(np.array([2.0]), 1),
                  "q_xi": tilts(0, 2)}, 0,
                 likelihood([-0.6, -0.3], 0.25 * np.array([[4.0, 2.0], [2.0, 1.0]])), id="latent-class-stick0"),
    # latent x ~ N(1, 0.5): E[x̃] = [1, 1], E[x̃x̃ᵀ] = [[1.5, 1], [1, 1]]; class 1 (κ_0 = −½), ξ = 0: proper
    pytest.param({"q_out": one_hot(1), "q_input": MvNormalMeanCovariance([1.0], [[0.5]]), "q_xi": tilts(0, 0)}, 0,
                 {"family": MultivariateNormal, "weighted_mean": [-0.5, -0.5],
                  "precision": [[0.375, 0.25], [0.25, 0.25]]}, id="latent-input-proper"),
]


@pytest.mark.parametrize("inputs, index, expected", CASES)
def test_coefficients(inputs, index, expected):
    result = message(StickBreakingLogisticNode, "coefficients", inputs, index=index, interfaces=INTERFACES)
    assert_message(result, expected)


def test_without_an_intercept_x_is_not_extended():
    # class 2: κ_0 = −½, x = [1, −3], ξ_0 = 2: −½x and ω̄(2) xxᵀ
    inputs = {"q_out": one_hot(2), "q_input": PointMass(np.array([1.0, -3.0]), 1), "q_xi": tilts(2, 0)}
    result = message(StickBreakingLogisticNode, "coefficients", inputs, index=0, interfaces=INTERFACES, intercept=False)
    assert_message(result, likelihood([-0.5, 1.5], OMEGA_AT_2 * np.array([[1.0, -3.0], [-3.0, 9.0]])))


def test_a_plate_of_known_inputs_carries_its_sums_and_forms_elements_only_if_asked():
    # classes [1, 2, 0] → stick 1: b_1 = [1, 1, 0], κ_1 = [½, −½, 0]; x = [1, −1, 0.5]; ξ_1 = [0, 2, 1]
    inputs = {"q_out": PointMass(np.eye(3)[[1, 2, 0]], 1), "q_input": PointMass(np.array([[1.0], [-1.0], [0.5]]), 1),
              "q_xi": PointMass(np.array([[5.0, 0.0], [5.0, 2.0], [5.0, 1.0]]), 1)}
    result = message(StickBreakingLogisticNode, "coefficients", inputs, index=1, interfaces=INTERFACES,
                     batch_shape=(3,))
    assert isinstance(result, GaussianLikelihoodOnDemand) and result.batch_shape == (3,)
    # Σ κ x̃ = ½[1, 1] − ½[−1, 1] + 0 = [1, 0];  Σ b ω̄ x̃x̃ᵀ = ¼[[1, 1], [1, 1]] + ω̄(2)[[1, −1], [−1, 1]] (+ 0 for class 0)
    precision = 0.25 * np.ones((2, 2)) + OMEGA_AT_2 * np.array([[1.0, -1.0], [-1.0, 1.0]])
    weighted_total, minus_half_precision_total = result.natural_parameter_totals()
    np.testing.assert_allclose(weighted_total, [1.0, 0.0], rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(minus_half_precision_total, -0.5 * precision, rtol=1e-14)
    assert not result.elements_formed()
    assert_message(result, likelihood([[0.5, 0.5], [0.5, -0.5], [0.0, 0.0]],
                                      [0.25 * np.ones((2, 2)), OMEGA_AT_2 * np.array([[1.0, -1.0], [-1.0, 1.0]]),
                                       np.zeros((2, 2))]))
    assert result.elements_formed()
