"""Message of the stick-breaking logistic node to ``out``, the class (one-hot, K = 3).

log m(j) = Σ_k [κ_k(j) E[ψ_k] − b_k(j) g_k], g_k = log 2 + log cosh(ξ_k/2) + ω̄(ξ_k)(E[ψ_k²] − ξ_k²)/2.
With known logits and ξ_k = |ψ_k| the bound is exact, log σ(ψ) = ψ/2 − log 2 − log cosh(ψ/2), so the
message is the stick-breaking distribution itself, checked against scipy's expit.
"""
import numpy as np
import pytest
from scipy.special import expit, softmax

from fgraph.families import Categorical, MvNormalMeanCovariance, PointMass
from fgraph.nodes.stick_breaking_logistic import StickBreakingLogisticNode
from tests.rules.tables import assert_message, message

INTERFACES = ("out", "input", "xi", "coefficients1", "coefficients2")
X = PointMass(np.array([2.0]), 1)  # x̃ = [2, 1]
# ψ_0 = [1, −1]·[2, 1] = 1, ψ_1 = [0.5, 0.5]·[2, 1] = 1.5
KNOWN = (PointMass(np.array([1.0, -1.0]), 1), PointMass(np.array([0.5, 0.5]), 1))
LOG2 = np.log(2.0)


def categorical(p):
    return {"family": Categorical, "probabilities": p}


def tilts(*values):
    return PointMass(np.array(values, dtype=float), 1)


def g(xi, omega, second):
    return LOG2 + np.log(np.cosh(xi / 2)) + omega * (second - xi**2) / 2


CASES = [
    # exact tilts: [σ(1), σ(−1)σ(1.5), σ(−1)σ(−1.5)]
    pytest.param({"q_input": X, "q_xi": tilts(1.0, 1.5), "q_coefficients": KNOWN},
                 categorical([expit(1.0), expit(-1.0) * expit(1.5), expit(-1.0) * expit(-1.5)]), id="exact-tilts"),
    # ξ = 0 (ω̄ = ¼): g_k = log 2 + ψ_k²/8, g_0 = log 2 + 1/8, g_1 = log 2 + 2.25/8
    pytest.param({"q_input": X, "q_xi": tilts(0.0, 0.0), "q_coefficients": KNOWN},
                 categorical(softmax([0.5 - (LOG2 + 0.125),
                                      -0.5 - (LOG2 + 0.125) + 0.75 - (LOG2 + 0.28125),
                                      -0.5 - (LOG2 + 0.125) - 0.75 - (LOG2 + 0.28125)])), id="tilts-at-zero"),
    # β_0 ~ N([1, −2], [[0.5, 0.1], [0.1, 0.3]]): E[ψ_0] = 0, E[ψ_0²] = 6 − 7.6 + 4.3 = 2.7; ξ_0 = 1 (ω̄ = tanh(½)/2);
    # β_1 known: ψ_1 = 1.5, ξ_1 = 1.5 (exact)
    pytest.param({"q_input": X, "q_xi": tilts(1.0, 1.5),
                  "q_coefficients": (MvNormalMeanCovariance([1.0, -2.0], [[0.5, 0.1], [0.1, 0.3]]), KNOWN[1])},
                 categorical(softmax([-g(1.0, np.tanh(0.5) / 2, 2.7),
                                      -g(1.0, np.tanh(0.5) / 2, 2.7) + 0.75 - g(1.5, np.tanh(0.75) / 3, 2.25),
                                      -g(1.0, np.tanh(0.5) / 2, 2.7) - 0.75 - g(1.5, np.tanh(0.75) / 3, 2.25)])),
                 id="gaussian-stick"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_out(inputs, expected):
    assert_message(message(StickBreakingLogisticNode, "out", inputs, interfaces=INTERFACES), expected)


def test_two_classes_give_the_logistic_probability_of_class_zero():
    inputs = {"q_input": X, "q_xi": PointMass(np.array([0.7]), 1), "q_coefficients": (KNOWN[0],)}
    result = message(StickBreakingLogisticNode, "out", inputs, interfaces=("out", "input", "xi", "coefficients1"))
    # the ξ terms are common to both classes (b_0 = 1 for both): p = (σ(E[ψ]), σ(−E[ψ]))
    np.testing.assert_allclose(result.probabilities, [expit(1.0), expit(-1.0)], rtol=1e-14)


def test_a_batch_is_the_rule_element_by_element():
    rng = np.random.default_rng(6)
    rows, xi = rng.normal(size=(4, 1)), rng.uniform(0, 3, size=(4, 2))
    batched = message(StickBreakingLogisticNode, "out",
                      {"q_input": PointMass(rows, 1), "q_xi": PointMass(xi, 1), "q_coefficients": KNOWN},
                      interfaces=INTERFACES, batch_shape=(4,))
    for n in range(4):
        single = message(StickBreakingLogisticNode, "out",
                         {"q_input": PointMass(rows[n], 1), "q_xi": PointMass(xi[n], 1), "q_coefficients": KNOWN},
                         interfaces=INTERFACES)
        np.testing.assert_allclose(batched.probabilities[n], single.probabilities, rtol=1e-13)
