"""Table test of SwitchingRegression towards ``coefficients``: per component the Gaussian function of β_k with
precision λ Σ_n w_nk X_nᵀX_n, weighted mean λ Σ_n w_nk X_nᵀy_n and coefficient
κ_k = Σ_n w_nk ((J/2) log(λ/2π) − (λ/2) y_nᵀy_n) + (p/2) log 2π, worked by hand; for a known switch it is the
factor itself."""
import numpy as np
import pytest
from scipy import stats

from fgraph.families import Categorical, GaussianLikelihood, PointMass
from fgraph.nodes.switching_regression import SwitchingRegressionNode as Node
from tests.rules.switching_regression.cases import LAMBDA, LOG_2PI, NODE
from tests.rules.tables import assert_message, message

CASES = [
    # X = I, y = (1, 2), z = component 1, λ = 2: k = 1: W = 2I, ξ = 2 (1, 2), κ = log(2/2π) − 5 + log 2π = log 2 − 5;
    # k = 2 has no weight: W = 0, ξ = 0, κ = (p/2) log 2π (the function 1)
    pytest.param({"q_out": PointMass(np.array([1.0, 2.0]), 1), "q_switch": PointMass(np.array([1.0, 0.0]), 1),
                  "q_input": PointMass(np.eye(2), 2)},
                 {"family": GaussianLikelihood, "precision": np.array([2.0 * np.eye(2), np.zeros((2, 2))]),
                  "weighted_mean": np.array([[2.0, 4.0], [0.0, 0.0]]), "log_scale": [np.log(2.0) - 5.0, LOG_2PI]},
                 id="known-switch"),
    # X = [[1, 1], [0, 2]], y = (1, −1), w = (1/4, 3/4): XᵀX = [[1, 1], [1, 5]], Xᵀy = (1, −1), yᵀy = 2;
    # W_k = 2 w_k XᵀX, ξ_k = 2 w_k (1, −1), κ_k = w_k (log(2/2π) − 2) + log 2π
    pytest.param({"q_out": PointMass(np.array([1.0, -1.0]), 1), "q_switch": Categorical(np.array([0.25, 0.75])),
                  "q_input": PointMass(np.array([[1.0, 1.0], [0.0, 2.0]]), 2)},
                 {"family": GaussianLikelihood,
                  "precision": np.array([0.5, 1.5])[:, None, None] * np.array([[1.0, 1.0], [1.0, 5.0]]),
                  "weighted_mean": np.array([[0.5, -0.5], [1.5, -1.5]]),
                  "log_scale": np.array([0.25, 0.75]) * (np.log(2.0 / (2 * np.pi)) - 2.0) + LOG_2PI},
                 id="soft-switch"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_coefficients(inputs, expected):
    assert_message(message(Node, "coefficients", inputs, **NODE), expected)


def test_with_a_known_switch_the_message_is_the_factor_over_the_plate():
    """Known labels: log f(β) of the message equals Σ_n log N(y_n | X_n β_k, λ⁻¹ I) over the data sets of label k, at
    random β (scipy's density)."""
    rng = np.random.default_rng(1)
    N, J, p, K = 6, 4, 3, 2
    X, y = rng.normal(size=(N, J, p)), rng.normal(size=(N, J))
    labels = np.array([0, 1, 1, 0, 1, 1])
    result = message(Node, "coefficients", {"q_out": PointMass(y, 1), "q_switch": PointMass(np.eye(K)[labels], 1),
                                            "q_input": PointMass(X, 2)},
                     batch_shape=(K, N), plate_shape=(N,), noise_precision=LAMBDA)
    assert result.batch_shape == (K, 1)
    for _ in range(3):
        beta = rng.normal(size=p)
        for k in range(K):
            expected = sum(stats.multivariate_normal.logpdf(y[n], X[n] @ beta, np.eye(J) / LAMBDA)
                           for n in range(N) if labels[n] == k)
            np.testing.assert_allclose(result.log_value(beta)[k, 0], expected, rtol=1e-12)


def test_a_plate_is_the_sum_of_its_elements():
    """Soft weights over a plate: the natural parameters and coefficients are the sums of the elements'."""
    rng = np.random.default_rng(2)
    N, J, p = 5, 3, 2
    X, y = rng.normal(size=(N, J, p)), rng.normal(size=(N, J))
    weights = rng.dirichlet(np.ones(2), size=N)
    plate = message(Node, "coefficients", {"q_out": PointMass(y, 1), "q_switch": Categorical(weights),
                                           "q_input": PointMass(X, 2)},
                    batch_shape=(2, N), plate_shape=(N,), noise_precision=LAMBDA)
    singles = [message(Node, "coefficients", {"q_out": PointMass(y[n], 1), "q_switch": Categorical(weights[n]),
                                              "q_input": PointMass(X[n], 2)}, **NODE) for n in range(N)]
    np.testing.assert_allclose(plate.precision[:, 0], sum(s.precision for s in singles), rtol=1e-12)
    np.testing.assert_allclose(plate.weighted_mean[:, 0], sum(s.weighted_mean for s in singles), rtol=1e-12)
    np.testing.assert_allclose(plate.log_scale[:, 0], sum(s.log_scale for s in singles) - (N - 1) * LOG_2PI,
                               rtol=1e-12)
