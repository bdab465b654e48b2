"""Message of the stick-breaking logistic node to its ``input`` x: the logistic input message summed over sticks.

With β_k = [v_k; β₀_k], w_k = E[b_k] ω̄(ξ_k): weighted mean Σ_k (E[κ_k]E[v_k] − w_k E[v_kβ₀_k]),
precision Σ_k w_k E[v_kv_kᵀ]. K = 3, d = 1:
β_0 ~ N([1, −2], [[0.5, 0.1], [0.1, 0.3]]): E[β_0β_0ᵀ] = [[1.5, −1.9], [−1.9, 4.3]];
β_1 ~ N([0.5, 1], diag(0.2, 0.1)):          E[β_1β_1ᵀ] = [[0.45, 0.5], [0.5, 1.1]].
"""
import numpy as np
import pytest

from fgraph.families import Categorical, GaussianLikelihood, MultivariateNormal, MvNormalMeanCovariance, PointMass
from fgraph.nodes.stick_breaking_logistic import StickBreakingLogisticNode
from tests.rules.tables import assert_message, message

OMEGA_AT_2 = np.tanh(1.0) / 4.0
INTERFACES = ("out", "input", "xi", "coefficients1", "coefficients2")
STICKS = (MvNormalMeanCovariance([1.0, -2.0], [[0.5, 0.1], [0.1, 0.3]]),
          MvNormalMeanCovariance([0.5, 1.0], [[0.2, 0.0], [0.0, 0.1]]))


def proper(weighted_mean, precision):
    return {"family": MultivariateNormal, "weighted_mean": weighted_mean, "precision": precision}


def tilts(*values):
    return PointMass(np.array(values, dtype=float), 1)


CASES = [
    # class 1: b = [1, 1], κ = [−½, ½], ξ = [0, 2] (w = [¼, ω̄(2)]):
    # −½·1 − ¼(−1.9) + ½·0.5 − ω̄(2)·0.5;  ¼·1.5 + ω̄(2)·0.45
    pytest.param({"q_out": PointMass(np.eye(3)[1], 1), "q_xi": tilts(0, 2), "q_coefficients": STICKS},
                 proper([-0.5 + 0.475 + 0.25 - 0.5 * OMEGA_AT_2], [[0.375 + 0.45 * OMEGA_AT_2]]), id="class1"),
    # class 0 reaches stick 0 only: ½·1 − ¼(−1.9);  ¼·1.5
    pytest.param({"q_out": PointMass(np.eye(3)[0], 1), "q_xi": tilts(0, 2), "q_coefficients": STICKS},
                 proper([0.975], [[0.375]]), id="class0"),
    # q(y) = Cat(0.2, 0.5, 0.3): E[b] = [1, 0.8], E[κ] = [−0.3, 0.1], ξ = 0 (w = [¼, 0.2]):
    # −0.3·1 + 0.475 + 0.1·0.5 − 0.2·0.5 = 0.125;  0.375 + 0.2·0.45 = 0.465
    pytest.param({"q_out": Categorical([0.2, 0.5, 0.3]), "q_xi": tilts(0, 0), "q_coefficients": STICKS},
                 proper([0.125], [[0.465]]), id="latent-class"),
    # known coefficients [2, 1] and [0, 3], class 2 (κ = [−½, −½]), ξ = 0: −½·2 − ¼·2 − ½·0 − ¼·0 = −1.5;  ¼·4 + ¼·0 = 1
    pytest.param({"q_out": PointMass(np.eye(3)[2], 1), "q_xi": tilts(0, 0),
                  "q_coefficients": (PointMass(np.array([2.0, 1.0]), 1), PointMass(np.array([0.0, 3.0]), 1))},
                 proper([-1.5], [[1.0]]), id="known-coefficients"),
    # the same in d = 2 (v_0 = [2, 0], v_1 = [0, 0]): rank one, not normalisable: a GaussianLikelihood
    pytest.param({"q_out": PointMass(np.eye(3)[2], 1), "q_xi": tilts(0, 0),
                  "q_coefficients": (PointMass(np.array([2.0, 0.0, 1.0]), 1), PointMass(np.array([0.0, 0.0, 3.0]), 1))},
                 {"family": GaussianLikelihood, "weighted_mean": [-1.5, 0.0], "precision": [[1.0, 0.0], [0.0, 0.0]]},
                 id="known-coefficients-rank-one"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_input(inputs, expected):
    assert_message(message(StickBreakingLogisticNode, "input", inputs, interfaces=INTERFACES), expected)


def test_without_an_intercept_the_coefficients_are_v_alone():
    # d = 2, β_k = v_k; class 2 (κ = [−½, −½]), ξ = 0: −½(μ_0 + μ_1), ¼(E[v_0v_0ᵀ] + E[v_1v_1ᵀ])
    inputs = {"q_out": PointMass(np.eye(3)[2], 1), "q_xi": tilts(0, 0), "q_coefficients": STICKS}
    result = message(StickBreakingLogisticNode, "input", inputs, interfaces=INTERFACES, intercept=False)
    assert_message(result, proper([-0.75, 0.5], 0.25 * np.array([[1.95, -1.4], [-1.4, 5.4]])))


def test_a_batch_is_the_rule_element_by_element():
    rng = np.random.default_rng(5)
    probabilities = rng.dirichlet(np.ones(3), size=4)
    xi = rng.uniform(0, 3, size=(4, 2))
    batched = message(StickBreakingLogisticNode, "input",
                      {"q_out": Categorical(probabilities), "q_xi": PointMass(xi, 1), "q_coefficients": STICKS},
                      interfaces=INTERFACES, batch_shape=(4,))
    for n in range(4):
        single = message(StickBreakingLogisticNode, "input",
                         {"q_out": Categorical(probabilities[n]), "q_xi": PointMass(xi[n], 1), "q_coefficients": STICKS},
                         interfaces=INTERFACES)
        np.testing.assert_allclose(batched.weighted_mean[n], single.weighted_mean, rtol=1e-13)
        np.testing.assert_allclose(batched.precision[n], single.precision, rtol=1e-13)
