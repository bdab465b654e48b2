"""Appendix B: the exact logistic model's bound on the approximate posterior q(β; α_ε), and α_ε chosen by it.

Oracles: the bound against a two-dimensional quadrature over β itself (not through the one-dimensional logit
integrals it uses) and the closed-form Gaussian KL written out here; the bound below log p(y) computed by
quadrature; the chosen α_ε at least as good as every α_ε of a grid; E[log σ(ψ)] against scipy's quad.
"""
import functools

import numpy as np
import pytest
from scipy import integrate
from scipy.special import log_expit

from fgraph.families.basis_matching import METHODS, expected_log_sigmoid
from fgraph.models.logistic import approximate_posterior, choose_epsilon, exact_bound

PRIOR_VAR = 4.0


def data(N=25, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(N)
    y = (rng.random(N) < 1 / (1 + np.exp(-(1.5 * x - 0.5)))).astype(float)
    return np.column_stack([x, np.ones(N)]), y


@pytest.mark.parametrize("mean, std", [(0.0, 0.0), (1.3, 0.2), (-2.0, 1.0), (0.5, 4.0), (3.0, 30.0), (-40.0, 2.0)])
def test_expected_log_sigmoid_against_quad(mean, std):
    if std == 0.0:
        expected = log_expit(mean)
    else:
        expected = integrate.quad(lambda t: log_expit(t) * np.exp(-0.5 * ((t - mean) / std) ** 2)
                                  / (std * np.sqrt(2 * np.pi)), mean - 40 * std, mean + 40 * std,
                                  points=[0.0], limit=400, epsabs=1e-13)[0]
    assert expected_log_sigmoid(mean, std) == pytest.approx(expected, rel=1e-10, abs=1e-11)


def brute_force_bound(mean, cov, rows, labels):
    """E_q[log p(y | β)] by a 2-D Gauss–Hermite product rule over β (80 × 80 nodes), minus the Gaussian KL."""
    z, w = np.polynomial.hermite_e.hermegauss(80)
    w = w / np.sqrt(2 * np.pi)
    root = np.linalg.cholesky(cov)
    grid = mean[:, None] + root @ np.stack(np.meshgrid(z, z, indexing="ij")).reshape(2, -1)  # (2, 6400)
    weights = np.outer(w, w).ravel()
    signs = 2 * labels - 1
    log_likelihood = log_expit(signs[:, None] * (rows @ grid)).sum(0)
    kl = 0.5 * (np.trace(cov) / PRIOR_VAR + mean @ mean / PRIOR_VAR - 2 + 2 * np.log(PRIOR_VAR)
                - np.log(np.linalg.det(cov)))
    return weights @ log_likelihood - kl


@functools.lru_cache(maxsize=None)
def evidence_of_data():
    """log p(y) = log ∫ N(β; 0, σ₀²I) Π σ(s x̃ᵀβ) dβ of :func:`data` on a fine grid (the rectangle rule of a smooth
    integrand decaying far inside the grid: converged far below the gaps tested)."""
    rows, labels = data()
    axis = np.linspace(-12, 12, 601)
    b0, b1 = np.meshgrid(axis, axis, indexing="ij")
    grid = np.stack([b0.ravel(), b1.ravel()])
    log_prior = -0.5 * (grid ** 2).sum(0) / PRIOR_VAR - np.log(2 * np.pi * PRIOR_VAR)
    log_joint = log_prior + log_expit((2 * labels - 1)[:, None] * (rows @ grid)).sum(0)
    top = log_joint.max()
    return top + np.log(np.exp(log_joint - top).sum() * (axis[1] - axis[0]) ** 2)


@pytest.mark.parametrize("method", METHODS)
def test_the_bound_is_the_expected_log_likelihood_minus_the_kl_and_below_the_evidence(method):
    rows, labels = data()
    evidence = evidence_of_data()
    for alpha in (0.03, 0.3, 3.0):
        mean, cov = approximate_posterior(rows, labels, PRIOR_VAR, method, alpha)
        bound = exact_bound(mean, cov, rows, labels, PRIOR_VAR)
        assert bound == pytest.approx(brute_force_bound(mean, cov, rows, labels), rel=1e-9)
        assert bound < evidence


@pytest.mark.parametrize("method", METHODS)
def test_the_chosen_epsilon_is_at_least_as_good_as_a_grid(method):
    rows, labels = data(N=40, seed=1)
    choice = choose_epsilon(rows, labels, PRIOR_VAR, method)
    grid = [exact_bound(*approximate_posterior(rows, labels, PRIOR_VAR, method, a), rows, labels, PRIOR_VAR)
            for a in np.geomspace(1e-3, 1e3, 61)]
    assert choice.bound >= max(grid) - 1e-6
    assert choice.beta_epsilon == choice.alpha_epsilon
    mean, cov = approximate_posterior(rows, labels, PRIOR_VAR, method, choice.alpha_epsilon)
    np.testing.assert_allclose(choice.mean, mean)
    separate = choose_epsilon(rows, labels, PRIOR_VAR, method, separate_beta=True)
    assert separate.bound >= choice.bound - 1e-9


def test_the_estimator_chooses_alpha_by_the_bound():
    pytest.importorskip("sklearn")
    from fgraph.models.logistic import BayesianLogisticRegression

    rows, labels = data(N=40, seed=2)
    X = rows[:, :1]
    estimator = BayesianLogisticRegression(prior_var=PRIOR_VAR, likelihood="variational", alpha_epsilon="elbo")
    estimator.fit(X, labels)
    choice = choose_epsilon(rows, labels, PRIOR_VAR, "variational")
    assert estimator.alpha_epsilon_ == pytest.approx(choice.alpha_epsilon, rel=1e-12)
    np.testing.assert_allclose(estimator.posterior_mean_, choice.mean, rtol=1e-9)
    with pytest.raises(ValueError, match="alpha_epsilon='elbo' chooses"):
        BayesianLogisticRegression(likelihood="moment", alpha_epsilon="elbo").partial_fit(X, labels, classes=[0, 1])
    with pytest.raises(ValueError, match="alpha_epsilon must be a positive number"):
        BayesianLogisticRegression(likelihood="moment", alpha_epsilon="best").fit(X, labels)


def softmax_data(N=45, seed=3):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((N, 2))
    logits = x @ np.array([[1.5, -1.0, 0.0], [0.0, 1.0, -1.0]])
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    y = np.array([rng.choice(3, p=row) for row in p])
    return np.column_stack([x, np.ones(N)]), y


def test_the_softmax_bound_against_independent_monte_carlo():
    """E_q[log softmax_y(ψ)] by 10⁶ plain Monte Carlo draws of β itself (not of the logits), the KLs written out."""
    from fgraph.models.logistic import approximate_softmax_posterior, exact_softmax_bound

    rows, labels = softmax_data()
    means, covs = approximate_softmax_posterior(rows, labels, 3, PRIOR_VAR, "variational", 0.2)
    rng = np.random.default_rng(11)
    total, squares, batches = 0.0, 0.0, 20
    for _ in range(batches):  # 20 batches of 50,000 draws of (β_0, β_1, β_2)
        betas = np.stack([rng.multivariate_normal(means[k], covs[k], size=50000) for k in range(3)], axis=1)
        logits = np.einsum("nd,skd->snk", rows, betas)
        top = logits.max(-1, keepdims=True)
        log_softmax = logits - top - np.log(np.exp(logits - top).sum(-1, keepdims=True))
        value = log_softmax[:, np.arange(len(rows)), labels].sum(1)
        total, squares = total + value.sum(), squares + (value ** 2).sum()
    count = batches * 50000
    mean = total / count
    standard_error = np.sqrt((squares / count - mean ** 2) / count)
    kl = sum(0.5 * (np.trace(c) / PRIOR_VAR + m @ m / PRIOR_VAR - 3 + 3 * np.log(PRIOR_VAR) - np.log(np.linalg.det(c)))
             for m, c in zip(means, covs))
    assert abs(exact_softmax_bound(means, covs, rows, labels, PRIOR_VAR) - (mean - kl)) < 5 * standard_error + 0.02


def test_the_softmax_choice_is_at_least_as_good_as_a_grid():
    from fgraph.models.logistic import approximate_softmax_posterior, choose_softmax_epsilon, exact_softmax_bound
    from fgraph.errors import ModelError

    rows, labels = softmax_data(N=60, seed=4)
    choice = choose_softmax_epsilon(rows, labels, 3, PRIOR_VAR, "moment")
    grid = [exact_softmax_bound(*approximate_softmax_posterior(rows, labels, 3, PRIOR_VAR, "moment", a), rows, labels,
                                PRIOR_VAR) for a in np.geomspace(1e-3, 1e3, 31)]
    assert choice.bound >= max(grid) - 1e-6 and choice.mean.shape == (3, 3)
    with pytest.raises(ModelError, match="unknown method 'probit'"):
        choose_softmax_epsilon(rows, labels, 3, PRIOR_VAR, "probit")


def test_the_multinomial_estimator_chooses_alpha_by_the_softmax_bound():
    pytest.importorskip("sklearn")
    from fgraph.models.logistic import MultinomialLogisticRegression, choose_softmax_epsilon

    rows, labels = softmax_data(N=50, seed=5)
    estimator = MultinomialLogisticRegression(prior_var=PRIOR_VAR, likelihood="moment", alpha_epsilon="elbo")
    estimator.fit(rows[:, :2], labels)
    choice = choose_softmax_epsilon(rows, labels, 3, PRIOR_VAR, "moment")
    assert estimator.alpha_epsilon_ == pytest.approx(choice.alpha_epsilon, rel=1e-12)
    np.testing.assert_allclose(estimator.posterior_means_, choice.mean, rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="alpha_epsilon='elbo' chooses"):
        MultinomialLogisticRegression(likelihood="moment", alpha_epsilon="elbo").partial_fit(rows[:, :2], labels,
                                                                                           classes=[0, 1, 2])
