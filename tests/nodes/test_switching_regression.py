"""SwitchingRegression node: the average energy against Monte Carlo and at point masses, DSL validation."""
import numpy as np
import pytest
from scipy import stats

import fgraph as fg
from fgraph.errors import ModelError
from fgraph.families import Categorical, MvNormalMeanCovariance, PointMass
from fgraph.nodes import Categorical as CategoricalNode
from fgraph.nodes import Gamma, IsotropicNormal, SwitchingRegression, Wishart
from fgraph.nodes.switching_regression import SwitchingRegressionNode
from tests.rules.tables import energy

K, N, J, p, LAMBDA = 2, 3, 4, 2, 1.7
RNG = np.random.default_rng(5)
X, Y = RNG.normal(size=(N, J, p)), RNG.normal(size=(N, J))
COEFFICIENTS = MvNormalMeanCovariance(np.array([[[0.5, -1.0]], [[1.5, 0.2]]]),
                                      np.array([[[[0.3, 0.1], [0.1, 0.2]]], [[[0.1, 0.0], [0.0, 0.4]]]]))


def test_energy_against_monte_carlo():
    """−E[z_nk] E[log N(y_n | X_n β_k, λ⁻¹ I)] per (k, n), the node's batch."""
    weights = RNG.dirichlet(np.ones(K), size=N)
    value = energy(SwitchingRegressionNode, {"q_out": PointMass(Y, 1), "q_switch": Categorical(weights),
                                             "q_input": PointMass(X, 2), "q_coefficients": COEFFICIENTS},
                   batch_shape=(K, N), plate_shape=(N,), noise_precision=LAMBDA)
    assert value.shape == (K, N)
    draws = COEFFICIENTS.sample(np.random.default_rng(1), 100_000)[:, :, 0]  # (S, K, p)
    for k in range(K):
        for n in range(N):
            values = stats.multivariate_normal.logpdf(Y[n] - draws[:, k] @ X[n].T, np.zeros(J), np.eye(J) / LAMBDA)
            error = values.std() / np.sqrt(values.size)
            assert abs(value[k, n] + weights[n, k] * values.mean()) < 5 * weights[n, k] * error + 1e-12


def test_energy_at_point_masses_is_minus_the_log_factor():
    """A one-hot switch and (nearly) point coefficients: U is −log N(y | X β_k, λ⁻¹ I) of the chosen k, 0 elsewhere."""
    sharp = MvNormalMeanCovariance(np.array([[0.4, -0.3], [2.0, 1.0]]), np.broadcast_to(1e-14 * np.eye(p), (K, p, p)))
    value = energy(SwitchingRegressionNode, {"q_out": PointMass(Y[0], 1), "q_switch": PointMass(np.array([0., 1.]), 1),
                                             "q_input": PointMass(X[0], 2), "q_coefficients": sharp},
                   batch_shape=(K,), plate_shape=(), noise_precision=LAMBDA)
    expected = -stats.multivariate_normal.logpdf(Y[0], X[0] @ np.array([2.0, 1.0]), np.eye(J) / LAMBDA)
    np.testing.assert_allclose(value, [0.0, expected], rtol=1e-9, atol=1e-12)


def build(observed=Y, input=X, noise_precision=LAMBDA, beta_batch=(K, 1), power=1.0):
    with fg.Model() as model:
        z = CategoricalNode("z", p=np.full(K, 1 / K), batch_shape=(N,))
        tau = Gamma("tau", 1.0, 1.0, batch_shape=beta_batch)
        beta = IsotropicNormal("beta", np.zeros(p), tau, batch_shape=beta_batch)
        SwitchingRegression("y", z, input, beta, observed=observed, noise_precision=noise_precision, power=power)
    return model


def test_constructor_errors():
    build()  # the valid model
    with pytest.raises(ModelError, match="must be observed"):
        build(observed=None)
    with pytest.raises(ModelError, match="p = 2 columns"):
        build(input=X[..., :1])
    with pytest.raises(ModelError, match="one design row each"):
        build(observed=Y[:, :-1])
    with pytest.raises(ModelError, match=r"need batch shape \(2, 1\)"):
        build(beta_batch=(K,))
    with pytest.raises(ModelError, match="noise precision"):
        build(noise_precision=0.0)
    with pytest.raises(ModelError, match="power"):
        build(power=2.0)
    with fg.Model():
        z = CategoricalNode("z", p=np.full(K, 1 / K), batch_shape=(N,))
        beta = IsotropicNormal("beta", np.zeros(p), 1.0, batch_shape=(K, 1))
        other = IsotropicNormal("other", np.zeros((N, J, p)), 1.0)
        with pytest.raises(ModelError, match="input must be known"):
            SwitchingRegression("y", z, other, beta, observed=Y)
        with pytest.raises(ModelError, match="event shape"):
            SwitchingRegression("y2", z, X, Wishart("W", 3.0, np.eye(p)), observed=Y)


# ------------------------------------------------------------------------------------- from the statistics
def test_the_statistics_give_the_raw_arrays_messages_and_energy():
    """Given X_nᵀX_n, (X_nᵀy_n, y_nᵀy_n) packed and J, the energy and both messages are those of the raw arrays."""
    from tests.rules.tables import message

    from fgraph.nodes.switching_regression import RegressionStatistics

    statistics = RegressionStatistics.from_data(X, Y)
    weights = Categorical(RNG.dirichlet(np.ones(K), size=N))
    raw = {"q_out": PointMass(Y, 1), "q_input": PointMass(X, 2)}
    compact = {"q_out": PointMass(statistics.packed(), 1), "q_input": PointMass(statistics.gram, 2)}
    shapes = dict(batch_shape=(K, N), plate_shape=(N,), noise_precision=LAMBDA)
    inputs = {"q_switch": weights, "q_coefficients": COEFFICIENTS}
    np.testing.assert_allclose(energy(SwitchingRegressionNode, dict(compact, **inputs), responses=J, **shapes),
                               energy(SwitchingRegressionNode, dict(raw, **inputs), **shapes), rtol=1e-12)
    for interface, other in (("switch", {"q_coefficients": COEFFICIENTS}), ("coefficients", {"q_switch": weights})):
        a = message(SwitchingRegressionNode, interface, dict(raw, **other), **shapes)
        b = message(SwitchingRegressionNode, interface, dict(compact, **other), responses=J, **shapes)
        np.testing.assert_allclose(b.log_scale, a.log_scale, rtol=1e-12, atol=1e-12, err_msg=interface)
        for x, y in zip(a.natural_parameters(), b.natural_parameters()):
            np.testing.assert_allclose(y, x, rtol=1e-12, atol=1e-12, err_msg=interface)


def test_statistics_constructor_errors():
    from fgraph.nodes.switching_regression import RegressionStatistics

    statistics = RegressionStatistics.from_data(X, Y)
    with fg.Model():
        z = CategoricalNode("z", p=np.full(K, 1 / K), batch_shape=(N,))
        beta = IsotropicNormal("beta", np.zeros(p), 1.0, batch_shape=(K, 1))
        SwitchingRegression("y", z, coefficients=beta, statistics=statistics)  # the valid node
        with pytest.raises(ModelError, match="not both"):
            SwitchingRegression("y2", z, X, beta, observed=Y, statistics=statistics)
        with pytest.raises(ModelError, match="must be a RegressionStatistics"):
            SwitchingRegression("y3", z, coefficients=beta, statistics=(X, Y))
        with pytest.raises(ModelError, match="p = 2"):
            SwitchingRegression("y4", z, coefficients=beta, statistics=RegressionStatistics(
                statistics.gram[..., :1, :1], statistics.cross[..., :1], statistics.square, J))
        with pytest.raises(ModelError, match="J must be an integer"):
            SwitchingRegression("y5", z, coefficients=beta, statistics=RegressionStatistics(
                statistics.gram, statistics.cross, statistics.square, 0))
        with pytest.raises(ModelError, match="NaN"):
            SwitchingRegression("y6", z, coefficients=beta, statistics=RegressionStatistics(
                statistics.gram, statistics.cross * np.nan, statistics.square, J))
