"""Matrix-normal–gamma prior node: DSL validation and the average energy against Monte Carlo."""
import numpy as np
import pytest
from scipy import stats

import fgraph as fg
from fgraph.errors import ModelError
from fgraph.families import PointMass
from fgraph.families.matrix_normal_gamma import MatrixNormalGamma as MatrixNormalGammaFamily
from fgraph.nodes import MatrixNormalGamma
from fgraph.nodes.matrix_normal_gamma import MatrixNormalGammaNode
from tests.rules.tables import energy

MEAN = np.array([[1.0, -2.0, 0.0], [0.5, 0.0, 1.0]])
COVARIANCE = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 0.7]])
SHAPE, RATE = np.array([2.0, 3.0]), np.array([1.0, 0.5])


def prior_inputs(mean=MEAN, covariance=COVARIANCE, shape=SHAPE, rate=RATE):
    return {"q_mean": PointMass(mean, 2), "q_column_covariance": PointMass(covariance, 2),
            "q_shape": PointMass(shape, 1), "q_rate": PointMass(rate, 1)}


def test_shapes_and_scalar_parameters():
    with fg.Model():
        theta = MatrixNormalGamma("theta", np.zeros((4, 1, 2, 3)), 10.0, 2.0, 1.0)
    assert theta.batch_shape == (4, 1) and theta.event_shape == (2, 3)
    with fg.Model() as model:
        MatrixNormalGamma("theta", MEAN, 10.0, 2.0, 1.0)
    result = fg.infer(model)
    q = result.marginal("theta")
    np.testing.assert_allclose(q.column_covariance, 10.0 * np.eye(3))
    np.testing.assert_allclose(q.shape, [2.0, 2.0])
    np.testing.assert_allclose(q.rate, [1.0, 1.0])


@pytest.mark.parametrize("arguments, message", [
    ((np.zeros(3), 1.0, 1.0, 1.0), r"\(\.\.\., h, p\)"),
    ((MEAN, -1.0, 1.0, 1.0), "column_covariance must be positive"),
    ((MEAN, np.eye(2), 1.0, 1.0), r"must end in \(3, 3\)"),
    ((MEAN, np.diag([1.0, -1.0, 1.0]), 1.0, 1.0), "positive definite"),
    ((MEAN, 1.0, np.ones(3), 1.0), "h = 2"),
    ((MEAN, 1.0, 1.0, -1.0), "rate"),
], ids=["vector-mean", "negative-v0", "covariance-size", "indefinite", "shape-length", "negative-rate"])
def test_invalid_parameters_are_reported(arguments, message):
    with fg.Model():
        with pytest.raises(ModelError, match=message):
            MatrixNormalGamma("theta", *arguments)


def test_average_energy_against_monte_carlo():
    """U = −E_q[log p(A, λ)] with q another member: Monte Carlo over q of scipy's log densities."""
    q = MatrixNormalGammaFamily(MEAN + 0.4, 0.5 * COVARIANCE, np.array([4.0, 2.5]), np.array([2.0, 1.0]))
    count = 200_000
    matrix, precisions = q.sample(np.random.default_rng(0), count)
    log_prior = 0.0
    for i in range(2):
        log_prior = log_prior + stats.gamma.logpdf(precisions[:, i], SHAPE[i], scale=1.0 / RATE[i])
        # N(a | m, V/λ) = λ^{p/2} N(m + √λ (a − m) | m, V)
        point = MEAN[i] + np.sqrt(precisions[:, i])[:, None] * (matrix[:, i] - MEAN[i])
        log_prior = log_prior + stats.multivariate_normal.logpdf(point, MEAN[i], COVARIANCE) + 1.5 * np.log(
            precisions[:, i])
    value = energy(MatrixNormalGammaNode, {"q_out": q, **prior_inputs()})
    error = log_prior.std() / np.sqrt(count)
    assert abs(value - (-log_prior.mean())) < 5 * error
    # with q the prior itself, the energy is the prior's entropy
    prior = MatrixNormalGammaFamily(MEAN, COVARIANCE, SHAPE, RATE)
    np.testing.assert_allclose(energy(MatrixNormalGammaNode, {"q_out": prior, **prior_inputs()}), prior.entropy(),
                               rtol=1e-12)
