"""Wishart against scipy.stats, Monte Carlo and the analytic product normaliser."""
import numpy as np
import pytest
from scipy import stats
from scipy.special import multigammaln

from fgraph.families import PointMass, Wishart, product

# Monte Carlo checks allow 5 standard errors: a correct implementation fails
# with probability below 1e-6 per check, and the seeds are fixed anyway.
SAMPLE_COUNT = 100_000
STANDARD_ERRORS = 5.0

SCALE = np.array([[1.0, 0.3, -0.2], [0.3, 0.8, 0.1], [-0.2, 0.1, 0.5]])


def log_normaliser(df, scale):
    """``log(2**(df d / 2) |S|**(df / 2) Gamma_d(df / 2))``, the textbook formula."""
    dim = scale.shape[-1]
    return 0.5 * df * dim * np.log(2.0) + 0.5 * df * np.linalg.slogdet(scale)[1] + multigammaln(0.5 * df, dim)


@pytest.mark.parametrize("df", [2.5, 4.0, 9.0])
def test_matches_scipy(df):
    wishart = Wishart(df, SCALE)
    reference = stats.wishart(df, SCALE)
    x = stats.wishart(6.0, SCALE).rvs(size=4, random_state=7)
    np.testing.assert_allclose(wishart.logpdf(x), reference.logpdf(np.moveaxis(x, 0, -1)), rtol=1e-10)
    np.testing.assert_allclose(wishart.mean, reference.mean(), rtol=1e-12)
    np.testing.assert_allclose(wishart.var, reference.var(), rtol=1e-12)
    np.testing.assert_allclose(wishart.entropy(), reference.entropy(), rtol=1e-10)
    if df >= 3 + 1:
        np.testing.assert_allclose(wishart.mode, reference.mode(), rtol=1e-12, atol=1e-15)
    else:
        np.testing.assert_array_equal(wishart.mode, 0.0)


def test_logpdf_of_non_positive_definite_matrices():
    wishart = Wishart(4.0, SCALE)
    assert wishart.logpdf(np.diag([1.0, -1.0, 1.0])) == -np.inf
    assert wishart.logpdf(np.diag([1.0, 0.0, 1.0])) == -np.inf


def test_mean_inverse_matches_inverse_wishart():
    wishart = Wishart([3.5, 6.0], SCALE)
    np.testing.assert_array_equal(wishart.mean_inverse[0], np.inf)
    reference = stats.invwishart(6.0, np.linalg.inv(SCALE)).mean()
    np.testing.assert_allclose(wishart.mean_inverse[1], reference, rtol=1e-10)


def test_mean_logdet_and_sampling_moments():
    wishart = Wishart(5.5, SCALE)
    samples = wishart.sample(np.random.default_rng(0), SAMPLE_COUNT)
    assert samples.shape == (SAMPLE_COUNT, 3, 3)
    np.testing.assert_allclose(samples, np.swapaxes(samples, -1, -2))
    mean_error = np.sqrt(wishart.var / SAMPLE_COUNT)
    assert np.all(np.abs(samples.mean(axis=0) - wishart.mean) < STANDARD_ERRORS * mean_error)
    squared_deviations = (samples - samples.mean(axis=0)) ** 2
    var_error = squared_deviations.std(axis=0) / np.sqrt(SAMPLE_COUNT)
    assert np.all(np.abs(squared_deviations.mean(axis=0) - wishart.var) < STANDARD_ERRORS * var_error)
    log_dets = np.linalg.slogdet(samples)[1]
    log_det_error = log_dets.std() / np.sqrt(SAMPLE_COUNT)
    assert abs(log_dets.mean() - wishart.mean_logdet) < STANDARD_ERRORS * log_det_error


def test_product_log_normaliser_matches_analytic_formula():
    scale_right = np.array([[0.5, 0.1, 0.0], [0.1, 1.5, 0.2], [0.0, 0.2, 0.9]])
    left = Wishart(4.0, SCALE, log_scale=0.3)
    right = Wishart(5.5, scale_right, log_scale=0.2)
    result = product(left, right)
    # |X|^((n1-d-1)/2 + (n2-d-1)/2) = |X|^((n-d-1)/2) and the exponents add in S^{-1}.
    df = 4.0 + 5.5 - 3 - 1
    scale = np.linalg.inv(np.linalg.inv(SCALE) + np.linalg.inv(scale_right))
    np.testing.assert_allclose(result.df, df, rtol=1e-12)
    np.testing.assert_allclose(result.scale, scale, rtol=1e-10)
    expected = log_normaliser(df, scale) - log_normaliser(4.0, SCALE) - log_normaliser(5.5, scale_right)
    np.testing.assert_allclose(result.log_scale, 0.5 + expected, rtol=1e-10)


def test_product_with_point_mass():
    wishart = Wishart(4.0, SCALE)
    result = product(PointMass(np.eye(3), event_ndim=2), wishart)
    np.testing.assert_allclose(result.log_scale, stats.wishart(4.0, SCALE).logpdf(np.eye(3)))


def test_batch_behaviour():
    wishart = Wishart([3.0, 4.0, 5.0], SCALE, log_scale=[0.0, 0.5, 1.0])
    assert wishart.batch_shape == (3,)
    assert wishart.event_shape == (3, 3)
    np.testing.assert_allclose(wishart.logpdf(np.eye(3)), [stats.wishart(df, SCALE).logpdf(np.eye(3)) for df in (3.0, 4.0, 5.0)])
    single = wishart[2]
    assert single.batch_shape == ()
    np.testing.assert_allclose(single.df, 5.0)
    np.testing.assert_allclose(single.scale, SCALE, rtol=1e-12)
    np.testing.assert_allclose(single.log_scale, 1.0)
    broadcast = Wishart(4.0, SCALE).broadcast_to((2, 3))
    assert broadcast.batch_shape == (2, 3)
    assert broadcast.mean.shape == (2, 3, 3, 3)
    assert wishart.sample(np.random.default_rng(1), 2).shape == (2, 3, 3, 3)
    assert wishart.mean_logdet.shape == (3,)
    assert product(wishart, Wishart(5.0, np.eye(3))).batch_shape == (3,)


def test_repr():
    assert repr(Wishart(4.0, SCALE)) == "Wishart(df=4, dim=3)"
