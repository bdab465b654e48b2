"""Table test of SwitchingRegression towards ``switch``: log μ(k) = E[log N(y | X β_k, λ⁻¹ I)], worked by hand.

log μ(k) = (J/2) log(λ/2π) − (λ/2) Q_k, Q_k = yᵀy − 2 (Xᵀy)ᵀm_k + tr(XᵀX (S_k + m_km_kᵀ)); the first term is the
same for every k and drops out of the probabilities.
"""
import numpy as np
import pytest
from scipy import stats

from fgraph.families import MvNormalMeanCovariance, PointMass
from fgraph.families.categorical import Categorical
from fgraph.nodes.switching_regression import SwitchingRegressionNode as Node
from tests.rules.switching_regression.cases import COEFFICIENTS, LAMBDA, NODE
from tests.rules.tables import message


def softmax(logits):
    logits = np.asarray(logits, dtype=float)
    return np.exp(logits - np.logaddexp.reduce(logits, axis=-1, keepdims=True))


CASES = [
    # X = I, y = (1, 2): yᵀy = 5, Xᵀy = (1, 2).  k = 1: 5 − 2 + (1 + 1) = 5;  k = 2: 5 + 4 + (1 + 0.3) = 10.3
    pytest.param(np.eye(2), np.array([1.0, 2.0]), softmax([-5.0, -10.3]), id="identity-design"),
    # X = [[1, 1], [0, 2]], y = (1, −1): yᵀy = 2, Xᵀy = (1, −1), XᵀX = [[1, 1], [1, 5]].
    # k = 1: 2 − 2 + (m'Gm = 1) + tr(G)/2 = 3 → 4;  k = 2: 2 − 2 + 5 + (0.1 + 1.0) = 6.1
    pytest.param(np.array([[1.0, 1.0], [0.0, 2.0]]), np.array([1.0, -1.0]), softmax([-4.0, -6.1]), id="design"),
]


@pytest.mark.parametrize("X, y, probabilities", CASES)
def test_switch(X, y, probabilities):
    result = message(Node, "switch", {"q_out": PointMass(y, 1), "q_input": PointMass(X, 2),
                                      "q_coefficients": COEFFICIENTS}, **NODE)
    assert isinstance(result, Categorical)
    np.testing.assert_allclose(result.probabilities, probabilities, rtol=1e-12)


def test_the_logits_are_the_expected_log_likelihoods_by_monte_carlo():
    """E_q(β)[log N(y | X β_k, λ⁻¹ I)] by sampling q(β) and scipy's density, with the constant (J/2) log(λ/2π)."""
    from fgraph.nodes.switching_regression import expected_log_likelihoods

    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(4, 2)), rng.normal(size=4)
    node = Node("node", **NODE)
    exact = expected_log_likelihoods(PointMass(y, 1), PointMass(X, 2), COEFFICIENTS, node)[0, 0]  # (C, n, K)
    draws = COEFFICIENTS.sample(rng, 200_000)  # (S, K, p)
    for k in range(2):
        values = stats.multivariate_normal.logpdf(y - draws[:, k] @ X.T, np.zeros(4), np.eye(4) / LAMBDA)
        assert abs(values.mean() - exact[k]) < 5 * values.std() / np.sqrt(values.size), (k, values.mean(), exact[k])


def test_a_plate_equals_its_elements():
    """A plate of 5 data sets and coefficients of batch (K, 1) against each data set alone."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(5, 3, 2)), rng.normal(size=(5, 3))
    batched = MvNormalMeanCovariance(COEFFICIENTS.mean[:, None], COEFFICIENTS.cov[:, None])
    plate = message(Node, "switch", {"q_out": PointMass(y, 1), "q_input": PointMass(X, 2), "q_coefficients": batched},
                    batch_shape=(2, 5), plate_shape=(5,), noise_precision=LAMBDA)
    assert plate.batch_shape == (5,)
    for n in range(5):
        single = message(Node, "switch", {"q_out": PointMass(y[n], 1), "q_input": PointMass(X[n], 2),
                                          "q_coefficients": COEFFICIENTS}, **NODE)
        np.testing.assert_allclose(plate.probabilities[n], single.probabilities, rtol=1e-12)
