"""Message of the logistic node to ``xi``: the point mass at c = sqrt(E[ψ²]), E[ψ²] = tr(E[ββᵀ] E[x̃x̃ᵀ])."""
import numpy as np
import pytest

from fgraph.families import Bernoulli, MvNormalMeanCovariance, PointMass
from fgraph.nodes.logistic import LogisticNode
from tests.rules.tables import assert_message, message, point_mass

BETA = MvNormalMeanCovariance([1.0, -2.0], [[0.5, 0.1], [0.1, 0.3]])  # E[ββᵀ] = [[1.5, −1.9], [−1.9, 4.3]]

CASES = [
    # x̃ = [3, 1]: 9·1.5 + 2·3·(−1.9) + 4.3 = 6.4
    pytest.param({"q_out": PointMass(1.0), "q_coefficients": BETA, "q_input": PointMass(np.array([3.0]), 1)},
                 point_mass(np.sqrt(6.4)), id="known-input"),
    # x ~ N(0.5, 0.2): E[x̃x̃ᵀ] = [[0.45, 0.5], [0.5, 1]]: 1.5·0.45 + 2·0.5·(−1.9) + 4.3 = 3.075
    # (a plug-in mean would give 0.25·1.5 − 1.9 + 4.3 = 2.775); the label does not enter
    pytest.param({"q_out": Bernoulli(0.3), "q_coefficients": BETA, "q_input": MvNormalMeanCovariance([0.5], [[0.2]])},
                 point_mass(np.sqrt(3.075)), id="latent-input-full-second-moment"),
    # known β = [2, −1]: ψ = 2x − 1 at x = [0, 0.5, 1]
    pytest.param({"q_out": PointMass(np.array([0.0, 1.0, 1.0])), "q_coefficients": PointMass(np.array([2.0, -1.0]), 1),
                  "q_input": PointMass(np.array([[0.0], [0.5], [1.0]]), 1)},
                 point_mass([1.0, 0.0, 1.0]), id="known-everything"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_xi(inputs, expected):
    assert_message(message(LogisticNode, "xi", inputs), expected)


def test_the_second_moment_of_the_logit_against_monte_carlo():
    rng = np.random.default_rng(8)
    beta = MvNormalMeanCovariance([0.5, -1.0, 0.3], [[0.4, 0.1, 0.0], [0.1, 0.3, 0.05], [0.0, 0.05, 0.2]])
    x = MvNormalMeanCovariance([1.0, -0.5], [[0.6, -0.2], [-0.2, 0.5]])
    c = message(LogisticNode, "xi", {"q_out": PointMass(1.0), "q_coefficients": beta, "q_input": x}).value
    b, v = beta.sample(rng, 400_000), x.sample(rng, 400_000)  # independent draws: the mean-field q
    squares = (np.sum(b[:, :2] * v, axis=1) + b[:, 2]) ** 2
    assert abs(squares.mean() - c**2) < 5.0 * squares.std() / np.sqrt(squares.size)


def test_without_an_intercept():
    # x = [1, 1]: 1.5 − 2·1.9 + 4.3 = 2
    result = message(LogisticNode, "xi", {"q_out": PointMass(1.0), "q_coefficients": BETA,
                                          "q_input": PointMass(np.array([1.0, 1.0]), 1)}, intercept=False)
    assert_message(result, point_mass(np.sqrt(2.0)))
    # latent x ~ N([1, 0], diag(0.5, 2)): E[xxᵀ] = [[1.5, 0], [0, 2]]: 1.5·1.5 + 4.3·2 = 10.85
    result = message(LogisticNode, "xi", {"q_out": PointMass(1.0), "q_coefficients": BETA,
                                          "q_input": MvNormalMeanCovariance([1.0, 0.0], np.diag([0.5, 2.0]))},
                     intercept=False)
    assert_message(result, point_mass(np.sqrt(10.85)))
