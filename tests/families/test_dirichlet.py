"""Dirichlet against scipy.stats, Monte Carlo and the analytic product normaliser."""
import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln

from fgraph.families import Dirichlet, PointMass, product

# Monte Carlo checks allow 5 standard errors: a correct implementation fails
# with probability below 1e-6 per check, and the seeds are fixed anyway.
SAMPLE_COUNT = 200_000
STANDARD_ERRORS = 5.0


def log_beta(alpha):
    return np.sum(gammaln(alpha)) - gammaln(np.sum(alpha))


@pytest.mark.parametrize("alpha", [[0.5, 0.8, 2.0], [1.0, 1.0, 1.0], [3.0, 4.5, 2.0, 6.0]])
def test_matches_scipy(alpha):
    dirichlet = Dirichlet(alpha)
    reference = stats.dirichlet(alpha)
    x = np.random.default_rng(3).dirichlet(alpha, 5)
    np.testing.assert_allclose(dirichlet.logpdf(x), [reference.logpdf(point) for point in x], rtol=1e-10)
    np.testing.assert_allclose(dirichlet.mean, reference.mean(), rtol=1e-12)
    np.testing.assert_allclose(dirichlet.var, reference.var(), rtol=1e-12)
    np.testing.assert_allclose(dirichlet.cov, reference.cov(), rtol=1e-12)
    np.testing.assert_allclose(dirichlet.entropy(), reference.entropy(), rtol=1e-10, atol=1e-12)


def test_mean_log_by_monte_carlo():
    dirichlet = Dirichlet([0.7, 2.0, 3.5])
    log_samples = np.log(dirichlet.sample(np.random.default_rng(2), SAMPLE_COUNT))
    standard_error = log_samples.std(axis=0) / np.sqrt(SAMPLE_COUNT)
    assert np.all(np.abs(log_samples.mean(axis=0) - dirichlet.mean_log) < STANDARD_ERRORS * standard_error)


def test_logpdf_off_the_simplex():
    dirichlet = Dirichlet([2.0, 2.0, 2.0])
    np.testing.assert_array_equal(dirichlet.logpdf([[0.5, 0.6, 0.1], [-0.1, 0.6, 0.5]]), [-np.inf, -np.inf])


def test_mode():
    dirichlet = Dirichlet([[2.0, 3.0, 5.0], [0.5, 3.0, 5.0], [0.5, 0.9, 0.7], [1.0, 1.0, 1.0]])
    expected = [
        [1.0 / 7.0, 2.0 / 7.0, 4.0 / 7.0],  # interior
        [0.0, 2.0 / 6.0, 4.0 / 6.0],  # alpha <= 1 components at zero
        [0.0, 1.0, 0.0],  # vertex of the largest concentration
        [1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0],  # flat: the mean
    ]
    np.testing.assert_allclose(dirichlet.mode, expected)


def test_sampling_moments():
    dirichlet = Dirichlet([1.5, 0.6, 4.0])
    samples = dirichlet.sample(np.random.default_rng(0), SAMPLE_COUNT)
    assert samples.shape == (SAMPLE_COUNT, 3)
    np.testing.assert_allclose(samples.sum(axis=-1), 1.0, rtol=1e-12)
    mean_error = np.sqrt(dirichlet.var / SAMPLE_COUNT)
    assert np.all(np.abs(samples.mean(axis=0) - dirichlet.mean) < STANDARD_ERRORS * mean_error)
    squared_deviations = (samples - samples.mean(axis=0)) ** 2
    var_error = squared_deviations.std(axis=0) / np.sqrt(SAMPLE_COUNT)
    assert np.all(np.abs(squared_deviations.mean(axis=0) - dirichlet.var) < STANDARD_ERRORS * var_error)


def test_sampling_small_concentrations_stays_on_the_simplex():
    # Direct gamma draws underflow to zero in every component here; the log-space draw does not.
    samples = Dirichlet([0.01, 0.02, 0.01]).sample(np.random.default_rng(4), 10_000)
    assert np.all(np.isfinite(samples))
    np.testing.assert_allclose(samples.sum(axis=-1), 1.0, rtol=1e-12)


def test_product_log_normaliser_matches_analytic_formula():
    alpha_left, alpha_right = np.array([1.5, 2.0, 0.8]), np.array([3.0, 0.7, 1.2])
    left = Dirichlet(alpha_left, log_scale=0.4)
    right = Dirichlet(alpha_right, log_scale=-0.1)
    result = product(left, right)
    alpha = alpha_left + alpha_right - 1.0
    np.testing.assert_allclose(result.alpha, alpha, rtol=1e-12)
    # The integral of the product of the densities is B(alpha) / (B(alpha_left) B(alpha_right)).
    log_normaliser = log_beta(alpha) - log_beta(alpha_left) - log_beta(alpha_right)
    np.testing.assert_allclose(result.log_scale, 0.3 + log_normaliser, rtol=1e-12)
    x = np.array([0.2, 0.3, 0.5])
    np.testing.assert_allclose(result.logpdf(x), left.logpdf(x) + right.logpdf(x) - log_normaliser, rtol=1e-12)


def test_product_with_point_mass():
    dirichlet = Dirichlet([2.0, 3.0])
    result = product(PointMass([0.4, 0.6], event_ndim=1), dirichlet)
    np.testing.assert_allclose(result.log_scale, stats.dirichlet([2.0, 3.0]).logpdf([0.4, 0.6]))


def test_batch_behaviour():
    alpha = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    dirichlet = Dirichlet(alpha)
    assert dirichlet.batch_shape == (3,)
    assert dirichlet.event_shape == (2,)
    np.testing.assert_allclose(dirichlet.logpdf([0.3, 0.7]), [stats.dirichlet(a).logpdf([0.3, 0.7]) for a in alpha])
    np.testing.assert_allclose(dirichlet[1].alpha, [3.0, 4.0])
    np.testing.assert_allclose(dirichlet[[0, 2]].alpha, alpha[[0, 2]])
    assert dirichlet.sample(np.random.default_rng(1), 4).shape == (4, 3, 2)
    assert dirichlet.broadcast_to((2, 3)).batch_shape == (2, 3)
    assert dirichlet.mean_log.shape == (3, 2)
    assert product(dirichlet, Dirichlet([2.0, 2.0])).batch_shape == (3,)


def test_repr():
    assert repr(Dirichlet([1.0, 2.0])) == "Dirichlet(alpha=[1., 2.])"
