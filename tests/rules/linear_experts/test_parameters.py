"""Table test of LinearExperts towards ``parameters``: per expert the weighted statistics of eq. (28)."""
import numpy as np
import pytest

from fgraph.families import Categorical, MvNormalMeanCovariance, PointMass
from fgraph.families.matrix_normal_gamma import MatrixNormalGammaLikelihood
from fgraph.families.mixture import Mixture
from fgraph.nodes.linear_experts import LinearExpertsNode
from tests.rules.tables import message

LOG_2PI = np.log(2 * np.pi)
XT = np.array([2.0, 1.0])  # x = 2, x̃ = [2, 1]
OUTER = np.outer(XT, XT)


def expected(weights, means, squares):
    """(η per expert, κ per expert) for one point, h = 1, D = 2: (−½ w x̃x̃ᵀ, w E[y|k] x̃ᵀ, −½ w E[y²|k], ½ w),
    κ = ½ (D − w) log 2π."""
    weights, means, squares = (np.asarray(v, dtype=float) for v in (weights, means, squares))
    return ((-0.5 * weights[:, None, None] * OUTER, (weights * means)[:, None, None] * XT[None, None, :],
             (-0.5 * weights * squares)[:, None], (0.5 * weights)[:, None]), 0.5 * (2.0 - weights) * LOG_2PI)


CASES = [
    # known y = 1/2, q(z) = (1/4, 3/4)
    pytest.param({"q_out": PointMass(np.array([0.5]), 1), "q_switch": Categorical(np.array([0.25, 0.75])),
                  "q_input": PointMass(np.array([2.0]), 1)},
                 expected([0.25, 0.75], [0.5, 0.5], [0.25, 0.25]), id="known-out"),
    # q(y, z) = 0.4 N(1, 1/2) (z = 1) + 0.6 N(−1, 2) (z = 2): E[y | k] = (1, −1), E[y² | k] = (3/2, 3)
    pytest.param({"q_out_switch": Mixture.create(np.log([0.4, 0.6]), [
                     MvNormalMeanCovariance(np.ones(1), 0.5 * np.eye(1)),
                     MvNormalMeanCovariance(-np.ones(1), 2 * np.eye(1))]),
                  "q_input": PointMass(np.array([2.0]), 1)},
                 expected([0.4, 0.6], [1.0, -1.0], [1.5, 3.0]), id="joint-marginal"),
    # a known switch (one-hot) and known y = −1: all of the point goes to expert 2
    pytest.param({"q_out": PointMass(np.array([-1.0]), 1), "q_switch": PointMass(np.array([0.0, 1.0]), 1),
                  "q_input": PointMass(np.array([2.0]), 1)},
                 expected([0.0, 1.0], [-1.0, -1.0], [1.0, 1.0]), id="known-switch"),
]


@pytest.mark.parametrize("inputs, expected_message", CASES)
def test_parameters(inputs, expected_message):
    eta, coefficient = expected_message
    result = message(LinearExpertsNode, "parameters", inputs, batch_shape=(2,), plate_shape=())
    assert isinstance(result, MatrixNormalGammaLikelihood) and result.batch_shape == (2,)
    for actual, wanted in zip(result.natural_parameters(), eta):
        np.testing.assert_allclose(actual, wanted, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(result.log_scale, coefficient, rtol=1e-12)


def test_a_plate_sends_the_sums_of_its_points():
    """Over a plate of N points the message is one per expert, the sum of the single points' messages."""
    rng = np.random.default_rng(0)
    N, K, h, d = 5, 3, 2, 2
    x, y = rng.normal(size=(N, d)), rng.normal(size=(N, h))
    gamma = rng.dirichlet(np.ones(K), size=N)
    plate = message(LinearExpertsNode, "parameters", {"q_out": PointMass(y, 1), "q_switch": Categorical(gamma),
                                                      "q_input": PointMass(x, 1)}, batch_shape=(K, N), plate_shape=(N,))
    assert plate.batch_shape == (K, 1)
    singles = [message(LinearExpertsNode, "parameters",
                       {"q_out": PointMass(y[n], 1), "q_switch": Categorical(gamma[n]), "q_input": PointMass(x[n], 1)},
                       batch_shape=(K,), plate_shape=()) for n in range(N)]
    for j, actual in enumerate(plate.natural_parameters()):
        np.testing.assert_allclose(actual[:, 0], sum(s.natural_parameters()[j] for s in singles), rtol=1e-12)
    # coefficients add too, less (N − 1) base measures: κ = ½ h (D − Σ_n w_n) log 2π against ½ h (D − w_n) each
    np.testing.assert_allclose(plate.log_scale[:, 0], sum(s.log_scale for s in singles)
                               - (N - 1) * 0.5 * h * (d + 1) * LOG_2PI, rtol=1e-12)
