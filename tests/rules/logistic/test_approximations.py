"""The logistic node under its Gaussian likelihood approximations (operators "laplace", "variational", "moment",
"moment-original"): each label y is the pseudo-observation N(ψ; m, v) of the logit, (m, v) the logit-basis
Gaussian of Beta(α_ε + y, β_ε + 1 − y).

Tables by hand (the messages to β and x, the average energy), and the model as a whole against an independent
computation: Bayesian linear regression of the targets m on x̃ with noise variances v, whose posterior and log
evidence are closed forms, must be what one VMP sweep gives, free energy included.
"""
import numpy as np
import pytest
from scipy.stats import multivariate_normal

import fgraph as fg
from fgraph.errors import ModelError, RuleNotFoundError
from fgraph.families import Bernoulli, GaussianLikelihood, MultivariateNormal, MvNormalMeanCovariance, PointMass
from fgraph.families import basis_matching
from fgraph.nodes.logistic import APPROXIMATIONS, Logistic, LogisticNode
from fgraph.nodes.mvnormal import MvNormal
from tests.rules.tables import assert_message, energy, message


def pseudo(y, method, alpha=0.1, beta=None):
    mean, variance = basis_matching.logistic_pseudo_observations(np.asarray(y, dtype=float), alpha, beta, method)
    return np.asarray(mean), np.asarray(variance)


@pytest.mark.parametrize("method", APPROXIMATIONS)
def test_message_to_coefficients_is_the_pseudo_observation_of_the_logit(method):
    """A known x = [1, −3] (x̃ = [1, −3, 1]), y = 1: weighted mean (m/v) x̃, precision x̃x̃ᵀ / v; ξ is not read."""
    m, v = pseudo(1.0, method, alpha=0.3, beta=0.7)
    rows = np.array([1.0, -3.0, 1.0])
    for xi in (0.0, 2.0):
        inputs = {"q_out": PointMass(1.0), "q_input": PointMass(np.array([1.0, -3.0]), 1), "q_xi": PointMass(xi)}
        result = message(LogisticNode, "coefficients", inputs, operator=method, alpha_epsilon=0.3, beta_epsilon=0.7)
        assert_message(result, {"family": GaussianLikelihood, "weighted_mean": m / v * rows,
                                "precision": np.outer(rows, rows) / v})


@pytest.mark.parametrize("method", APPROXIMATIONS)
def test_message_to_a_latent_input(method):
    """β ~ N(μ, Σ) = [w; β₀], y = 0: precision E[wwᵀ]/v, weighted mean (m/v) E[w] − E[wβ₀]/v."""
    m, v = pseudo(0.0, method)
    mu, cov = np.array([0.5, -1.0, 0.3]), np.array([[1.0, 0.2, 0.1], [0.2, 2.0, -0.3], [0.1, -0.3, 0.5]])
    second = cov + np.outer(mu, mu)
    inputs = {"q_out": PointMass(0.0), "q_coefficients": MvNormalMeanCovariance(mu, cov), "q_xi": PointMass(0.0)}
    result = message(LogisticNode, "input", inputs, operator=method, alpha_epsilon=0.1, beta_epsilon=0.1)
    assert_message(result, {"family": MultivariateNormal, "weighted_mean": m / v * mu[:2] - second[:2, 2] / v,
                            "precision": second[:2, :2] / v})


@pytest.mark.parametrize("method", APPROXIMATIONS)
def test_average_energy_is_the_expected_negative_log_gaussian(method):
    """U = ½ log 2πv + (m² − 2m E[ψ] + E[ψ²]) / (2v), E[ψ] = μᵀx̃, E[ψ²] = x̃ᵀ(Σ + μμᵀ)x̃, per label."""
    y = np.array([1.0, 0.0])
    rows = np.array([[0.5, 1.0], [-2.0, 1.0]])  # x̃ of x = 0.5 and x = −2
    mu, cov = np.array([0.7, -0.2]), np.array([[0.4, 0.1], [0.1, 0.3]])
    inputs = {"q_out": PointMass(y), "q_coefficients": MvNormalMeanCovariance(mu, cov),
              "q_input": PointMass(rows[:, :1], 1), "q_xi": PointMass(np.zeros(2))}
    result = energy(LogisticNode, inputs, operator=method, alpha_epsilon=0.1, beta_epsilon=0.1)
    m, v = pseudo(y, method)
    mean_logit = rows @ mu
    mean_square = np.einsum("ni,ij,nj->n", rows, cov + np.outer(mu, mu), rows)
    np.testing.assert_allclose(result, 0.5 * np.log(2 * np.pi * v) + (m * m - 2 * m * mean_logit + mean_square) / (2 * v),
                               rtol=1e-12)


def regression(y, X, prior_var, method, alpha, beta=None):
    """Bayesian linear regression of the targets m on x̃ = [x, 1] with noise variances v: q(β) and log p(m)."""
    m, v = pseudo(y, method, alpha, beta)
    rows = np.hstack([X, np.ones((len(X), 1))])
    precision = np.eye(rows.shape[1]) / prior_var + rows.T @ (rows / v[:, None])
    cov = np.linalg.inv(precision)
    mean = cov @ (rows.T @ (m / v))
    evidence = multivariate_normal(np.zeros(len(y)), prior_var * rows @ rows.T + np.diag(v)).logpdf(m)
    return mean, cov, evidence


def data(N=40, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, d))
    y = (rng.random(N) < 1.0 / (1.0 + np.exp(-(X @ np.array([1.5, -1.0]) + 0.3)))).astype(float)
    return X, y


@pytest.mark.parametrize("method", APPROXIMATIONS)
def test_logistic_regression_becomes_gaussian_regression(method):
    """One sweep is exact: q(β) and the free energy (= −log p(m) of the approximate model) of every sweep."""
    X, y = data()
    with fg.Model() as model:
        beta = MvNormal("beta", np.zeros(3), 4.0 * np.eye(3))
        Logistic("y", beta, X, observed=y, operator=method, alpha_epsilon=0.2, beta_epsilon=0.3)
    result = fg.infer(model, algorithm="vmp", iterations=3)
    mean, cov, evidence = regression(y, X, 4.0, method, 0.2, 0.3)
    q = result.marginal("beta")
    np.testing.assert_allclose(q.mean, mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(q.cov, cov, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(result.free_energy, -evidence, rtol=1e-11)


def test_the_operator_chosen_by_constraints_and_the_default_epsilon():
    """``constraints={"operator": ...}`` selects the approximation; α_ε = β_ε = 0.1 unless given."""
    X, y = data(N=25, seed=3)
    with fg.Model() as model:
        beta = MvNormal("beta", np.zeros(3), 9.0 * np.eye(3))
        Logistic("y", beta, X, observed=y)
    result = fg.infer(model, algorithm="vmp", iterations=2, constraints={"operator": {"y": "moment"}})
    mean, cov, evidence = regression(y, X, 9.0, "moment", 0.1)
    np.testing.assert_allclose(result.marginal("beta").mean, mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(result.free_energy[-1], -evidence, rtol=1e-11)
    # and without an operator the node is the Pólya-Gamma one: another posterior
    plain = fg.infer(model, algorithm="vmp", iterations=2)
    assert np.abs(plain.marginal("beta").mean - mean).max() > 1e-2


def test_approximations_differ_from_each_other():
    X, y = data(N=30, seed=5)
    means = {}
    for method in APPROXIMATIONS:
        means[method] = regression(y, X, 4.0, method, 0.1)[0]
    for first in APPROXIMATIONS:
        for second in APPROXIMATIONS:
            if first < second:
                assert np.abs(means[first] - means[second]).max() > 1e-3, (first, second)


def test_latent_labels_and_bad_settings_are_named_errors():
    X, y = data(N=10)
    with fg.Model():
        beta = MvNormal("beta", np.zeros(3), np.eye(3))
        with pytest.raises(ModelError, match="'y': operator 'moment' replaces observed labels.*pass observed="):
            Logistic("y", beta, X, operator="moment")  # labels not observed
    with fg.Model() as model:
        beta = MvNormal("beta", np.zeros(3), np.eye(3))
        Logistic("y", beta, X, observed=y, operator="probit")
    with pytest.raises(RuleNotFoundError, match="no operator 'probit'; operators: laplace, moment, moment-original, "
                                                "variational"):
        fg.infer(model, algorithm="vmp", iterations=2)
    for bad in (0.0, -1.0, float("nan"), "0.1"):
        with fg.Model():
            beta = MvNormal("beta", np.zeros(3), np.eye(3))
            with pytest.raises(ModelError, match="alpha_epsilon must be a positive number"):
                Logistic("y", beta, X, observed=y, operator="moment", alpha_epsilon=bad)
            with pytest.raises(ModelError, match="beta_epsilon must be a positive number"):
                Logistic("y", beta, X, observed=y, operator="moment", beta_epsilon=bad)


def test_a_latent_label_message_is_unchanged():
    """The message to a latent label is the Pólya-Gamma node's (the operators replace observed labels only)."""
    inputs = {"q_coefficients": MvNormalMeanCovariance([0.5, -1.0], np.eye(2)), "q_input": PointMass(np.array([2.0]), 1),
              "q_xi": PointMass(0.0)}
    result = message(LogisticNode, "out", inputs, operator="moment")
    assert isinstance(result, Bernoulli)
    np.testing.assert_allclose(result.p, 1.0 / (1.0 + np.exp(-(0.5 * 2.0 - 1.0))), rtol=1e-12)


def test_under_bp_the_node_stays_mean_field_and_its_free_energy_is_right():
    """A variational-only node: under ``algorithm="bp"`` its messages (no log-scales) are not read as sum-product
    ones; the free energy is −log p(m) of the approximate model, as under VMP."""
    X, y = data(N=12, seed=7)
    with fg.Model() as model:
        beta = MvNormal("beta", np.zeros(3), 4.0 * np.eye(3))
        Logistic("y", beta, X, observed=y, operator="moment")
    evidence = regression(y, X, 4.0, "moment", 0.1)[2]
    for algorithm in ("bp", "vmp"):
        result = fg.infer(model, algorithm=algorithm, iterations=2)
        np.testing.assert_allclose(result.free_energy[-1], -evidence, rtol=1e-11)
