"""Message of the logistic node to ``out``: Bernoulli(σ(E[ψ])), E[ψ] = E[β]ᵀE[x̃]."""
import numpy as np
import pytest

from fgraph.families import Bernoulli, MvNormalMeanCovariance, PointMass
from fgraph.nodes.logistic import LogisticNode
from tests.rules.tables import assert_message, message

BETA = MvNormalMeanCovariance([1.0, -2.0], [[0.5, 0.1], [0.1, 0.3]])

CASES = [
    # E[ψ] = 1·3 − 2 = 1
    pytest.param({"q_coefficients": BETA, "q_input": PointMass(np.array([3.0]), 1), "q_xi": PointMass(0.0)},
                 {"family": Bernoulli, "p": 1.0 / (1.0 + np.exp(-1.0))}, id="known-input"),
    # latent x with mean 0.5: E[ψ] = 0.5 − 2 = −1.5 (the variances do not enter); ξ does not enter
    pytest.param({"q_coefficients": BETA, "q_input": MvNormalMeanCovariance([0.5], [[2.0]]), "q_xi": PointMass(3.0)},
                 {"family": Bernoulli, "p": 1.0 / (1.0 + np.exp(1.5))}, id="latent-input"),
    # a plate: E[ψ] = [−2, 0, 40]; σ(40) = 1 − 4.2e-18 rounds to 1
    pytest.param({"q_coefficients": BETA, "q_input": PointMass(np.array([[0.0], [2.0], [42.0]]), 1),
                  "q_xi": PointMass(0.0)},
                 {"family": Bernoulli, "p": [1.0 / (1.0 + np.exp(2.0)), 0.5, 1.0]}, id="plate"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_out(inputs, expected):
    assert_message(message(LogisticNode, "out", inputs), expected)


def test_the_message_is_the_expected_log_factor_up_to_a_constant():
    """log m(1) − log m(0) = E_q[log f(1, ·)] − E_q[log f(0, ·)] = E[ψ], since log σ(ψ) − log σ(−ψ) = ψ exactly."""
    result = message(LogisticNode, "out", {"q_coefficients": BETA, "q_input": PointMass(np.array([0.7]), 1),
                                           "q_xi": PointMass(1.0)})
    assert np.log(result.p) - np.log1p(-result.p) == pytest.approx(0.7 - 2.0, rel=1e-14)


def test_without_an_intercept():
    # x = [3, 2]: E[ψ] = 3 − 4 = −1
    result = message(LogisticNode, "out", {"q_coefficients": BETA, "q_input": PointMass(np.array([3.0, 2.0]), 1),
                                           "q_xi": PointMass(0.0)}, intercept=False)
    assert_message(result, {"family": Bernoulli, "p": 1.0 / (1.0 + np.exp(1.0))})
