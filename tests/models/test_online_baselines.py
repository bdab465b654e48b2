"""The online baselines of ``fgraph run online-logistic``: ADF, SGD with momentum, one-hot Gaussian regression.

Oracles: ADF's update must be the mean and covariance of the tilted distribution N(β; μ, Σ)·σ(s x̃ᵀβ), computed
here by brute force on a 2-D grid in β (nothing one-dimensional, no reduction to the logit); a stream of ADF
updates must be the same projection repeated; SGD must be a hand-written loop of the same updates; the one-hot
regression must be Bayesian linear regression written out in numpy.
"""
import numpy as np
import pytest
from scipy.special import expit, log_expit, softmax

from fgraph.errors import DataError
from fgraph_experiments.online_baselines import (
    AssumedDensityFilter,
    OneHotGaussianRegression,
    SGDMomentum,
    tilted_logit_moments,
)


def tilted_moments_2d(mean, cov, row, label):
    """Mean and covariance of N(β; mean, cov)·σ(s rowᵀβ) / Z on a 2-D grid (trapezoid in both axes).

    The integrand is analytic and decays like a Gaussian, so the trapezoid rule on a grid of steps a tenth of the
    smaller of the axes' standard deviations and of the sigmoid's scale 1/|row| converges geometrically; the grid
    spans ±12 standard deviations per axis.
    """
    s = 2.0 * label - 1.0
    stds = np.sqrt(np.diag(cov))
    step = min(stds.min(), 1.0 / np.abs(row).max()) / 10.0
    axes = [m + step * np.arange(-np.ceil(12 * sd / step), np.ceil(12 * sd / step) + 1) for m, sd in zip(mean, stds)]
    b1, b2 = np.meshgrid(*axes, indexing="ij")
    points = np.stack([b1.ravel(), b2.ravel()], axis=1)
    centred = points - mean
    precision = np.linalg.inv(cov)
    log_density = -0.5 * np.einsum("ni,ij,nj->n", centred, precision, centred) + log_expit(s * points @ row)
    weights = np.exp(log_density - log_density.max())
    weights /= weights.sum()
    tilted_mean = weights @ points
    deviation = points - tilted_mean
    return tilted_mean, (deviation * weights[:, None]).T @ deviation


def _adf(mean, cov):
    """An ADF (no intercept, 2 coefficients) whose current posterior is N(mean, cov)."""
    adf = AssumedDensityFilter(prior_var=1.0, fit_intercept=False)
    adf._row(np.zeros(2))  # fixes the dimension, as the first update would
    adf.posterior_mean_, adf.posterior_cov_ = np.array(mean, float), np.array(cov, float)
    return adf


CASES = [  # (mean, cov, row, label): wide logit (trapezoid path), narrow logit (Gauss–Hermite), surprising labels
    ([0.0, 0.0], [[4.0, 0.0], [0.0, 4.0]], [1.0, -0.7], 1),
    ([0.5, -1.0], [[2.0, 1.2], [1.2, 3.0]], [0.8, 0.6], 0),
    ([0.3, 0.2], [[0.20, -0.05], [-0.05, 0.10]], [1.5, 0.5], 1),
    ([2.0, 1.0], [[0.3, 0.1], [0.1, 0.2]], [1.0, 1.0], 0),
    ([-3.0, 0.5], [[9.0, -2.0], [-2.0, 1.0]], [1.0, 0.3], 1),
]


@pytest.mark.parametrize("mean, cov, row, label", CASES)
def test_one_adf_update_is_the_tilted_mean_and_covariance(mean, cov, row, label):
    adf = _adf(mean, cov).update(np.array(row), label)
    expected_mean, expected_cov = tilted_moments_2d(np.array(mean), np.array(cov), np.array(row), label)
    np.testing.assert_allclose(adf.posterior_mean_, expected_mean, rtol=0, atol=1e-9)
    np.testing.assert_allclose(adf.posterior_cov_, expected_cov, rtol=0, atol=1e-9)
    assert np.all(np.linalg.eigvalsh(adf.posterior_cov_) > 0)


def test_the_cases_take_both_quadrature_paths():
    variances = [np.array(r) @ np.array(c) @ np.array(r) for _, c, r, _ in CASES]
    assert any(v <= 1 for v in variances) and any(v > 1 for v in variances)  # Gauss–Hermite and trapezoid


def test_first_update_from_the_prior_with_an_intercept():
    adf = AssumedDensityFilter(prior_var=3.0).update([0.8], 0)  # β = (w, b), x̃ = (0.8, 1)
    expected_mean, expected_cov = tilted_moments_2d(np.zeros(2), 3.0 * np.eye(2), np.array([0.8, 1.0]), 0)
    np.testing.assert_allclose(adf.posterior_mean_, expected_mean, atol=1e-9)
    np.testing.assert_allclose(adf.posterior_cov_, expected_cov, atol=1e-9)
    assert adf.n_samples_seen_ == 1


@pytest.mark.parametrize("m, v, s", [(0.4, 0.3, 1.0), (-1.0, 1.0, -1.0), (2.0, 1.0 + 1e-9, 1.0), (-30.0, 600.0, 1.0),
                                     (5.0, 40.0, -1.0), (0.0, 1e-6, 1.0)])
def test_tilted_logit_moments_match_a_fine_grid(m, v, s):
    std = np.sqrt(v)
    grid = np.linspace(m - 14 * std - 40, m + 14 * std + 40, 400_001)
    log_terms = -0.5 * (grid - m) ** 2 / v - 0.5 * np.log(2 * np.pi * v) + log_expit(s * grid)
    h = grid[1] - grid[0]
    weights = np.exp(log_terms) * h
    z = weights.sum()
    mean = weights @ grid / z
    var = weights @ (grid - mean) ** 2 / z
    log_z, tilted_mean, tilted_var = tilted_logit_moments(m, v, s)
    np.testing.assert_allclose([log_z, tilted_mean, tilted_var], [np.log(z), mean, var], rtol=1e-9, atol=1e-12)
    assert tilted_var < v


def sequential_by_quadrature(rows, labels, prior_var):
    mean, cov = np.zeros(2), prior_var * np.eye(2)
    for row, label in zip(rows, labels):
        mean, cov = tilted_moments_2d(mean, cov, row, label)
    return mean, cov


def test_adf_stream_is_the_projection_repeated_and_depends_on_the_order():
    rows = np.array([[1.0, 0.5], [0.3, -1.2], [-0.8, 0.4], [1.1, 1.0]])
    labels = [1, 0, 0, 1]
    adf = AssumedDensityFilter(prior_var=2.0, fit_intercept=False)
    for row, label in zip(rows, labels):
        adf.update(row, label)
    mean, cov = sequential_by_quadrature(rows, labels, 2.0)
    np.testing.assert_allclose(adf.posterior_mean_, mean, atol=1e-8)
    np.testing.assert_allclose(adf.posterior_cov_, cov, atol=1e-8)
    reverse = AssumedDensityFilter(prior_var=2.0, fit_intercept=False)
    for row, label in zip(rows[::-1], labels[::-1]):
        reverse.update(row, label)
    assert np.max(np.abs(reverse.posterior_mean_ - adf.posterior_mean_)) > 1e-3  # ADF is order dependent
    # and it is an approximation: the exact posterior (the same grid, all four likelihoods at once) differs
    stds = np.sqrt(2.0)
    axis = np.linspace(-12 * stds, 12 * stds, 1201)
    b1, b2 = np.meshgrid(axis, axis, indexing="ij")
    points = np.stack([b1.ravel(), b2.ravel()], axis=1)
    log_density = -0.5 * np.sum(points ** 2, axis=1) / 2.0
    for row, label in zip(rows, labels):
        log_density += log_expit((2 * label - 1) * points @ row)
    w = np.exp(log_density - log_density.max())
    exact_mean = w @ points / w.sum()
    assert np.max(np.abs(exact_mean - adf.posterior_mean_)) > 1e-3


def test_adf_predictions_and_log_evidence():
    adf = AssumedDensityFilter(prior_var=2.0, fit_intercept=False)
    proba = adf.update([1.0, 0.5], 1).predict_proba(np.array([[1.0, 0.5], [-1.0, -0.5]]))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert proba[0, 1] > 0.5 > proba[1, 1]
    np.testing.assert_allclose(adf.log_evidence_, np.log(0.5), atol=1e-12)  # E[σ(ψ)] = ½ for a centred ψ


def sgd_by_hand(X, y, n_classes, rate, decay, momentum=0.9):
    logits = 1 if n_classes == 2 else n_classes
    W, V = np.zeros((logits, X.shape[1] + 1)), np.zeros((logits, X.shape[1] + 1))
    for x, label in zip(X, y):
        row = np.append(x, 1.0)
        if n_classes == 2:
            g = np.outer([expit(W[0] @ row) - label], row)
        else:
            p = softmax(W @ row)
            g = np.outer(p - np.eye(n_classes)[label], row)
        V = momentum * V + g + decay * W
        W = W - rate * V
    return W


@pytest.mark.parametrize("n_classes", [2, 4])
def test_sgd_momentum_is_the_hand_written_loop(n_classes):
    rng = np.random.default_rng(3)
    X, y = rng.standard_normal((3, 5)), rng.integers(0, n_classes, 3)
    model = SGDMomentum(n_classes, learning_rate=0.3, weight_decay=0.05)
    for x, label in zip(X, y):
        model.update(x, label)
    W = sgd_by_hand(X, y, n_classes, 0.3, 0.05)
    np.testing.assert_allclose(model.coef_, W, rtol=1e-13, atol=1e-15)
    assert np.any(W != 0)
    test = rng.standard_normal((4, 5))
    rows = np.column_stack([test, np.ones(4)])
    expected = (np.column_stack([1 - expit(rows @ W[0]), expit(rows @ W[0])]) if n_classes == 2 else
                softmax(rows @ W.T, axis=1))
    np.testing.assert_allclose(model.predict_proba(test), expected, rtol=1e-12)


def test_one_hot_gaussian_regression_is_bayesian_linear_regression():
    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((30, 3)), rng.integers(0, 3, 30)
    model = OneHotGaussianRegression(3, noise_var=0.2, prior_var=4.0)
    for x, label in zip(X, y):
        model.update(x, label)
    rows = np.column_stack([X, np.ones(30)])
    cov = np.linalg.inv(np.eye(4) / 4.0 + rows.T @ rows / 0.2)
    means = (cov @ rows.T @ np.eye(3)[y] / 0.2).T
    np.testing.assert_allclose(model.posterior_cov_, cov, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.posterior_means_, means, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.predict_proba(X[:5]).sum(axis=1), 1.0)


@pytest.mark.parametrize("bad", [2, -1, 0.5, "1", None, [0, 1]])
def test_adf_refuses_labels_outside_zero_one(bad):
    with pytest.raises(DataError, match="labels must be 0 or 1|one label"):
        AssumedDensityFilter().update([0.1, 0.2], bad)


def test_bad_inputs_are_clear_errors():
    with pytest.raises(DataError, match=r"integers 0\.\.2"):
        SGDMomentum(3).update([0.1], 3)
    with pytest.raises(DataError, match=r"integers 0\.\.1"):
        SGDMomentum(2).update([0.1], 1.5)
    adf = AssumedDensityFilter().update([0.1, 0.2], True)
    with pytest.raises(DataError, match="has 3 features, the model 2"):
        adf.update([0.1, 0.2, 0.3], 0)
    with pytest.raises(DataError, match="1-D"):
        adf.update([[0.1, 0.2]], 0)
    with pytest.raises(DataError, match="finite"):
        adf.update([np.nan, 0.2], 0)
    with pytest.raises(DataError, match=r"shape \(n, 2\)"):
        adf.predict_proba(np.zeros((3, 3)))
    with pytest.raises(DataError, match="before predict_proba"):
        SGDMomentum(2).predict_proba(np.zeros((1, 2)))
    for make in (lambda: AssumedDensityFilter(prior_var=0), lambda: SGDMomentum(1),
                 lambda: SGDMomentum(2, learning_rate=-1), lambda: SGDMomentum(2, momentum=1.0),
                 lambda: OneHotGaussianRegression(2, noise_var=0)):
        with pytest.raises(ValueError):
            make()
