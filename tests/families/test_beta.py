"""Beta against scipy.stats, Monte Carlo and numerical integration."""
import numpy as np
import pytest
from scipy import integrate, stats

from fgraph.families import Beta, product

# Monte Carlo checks allow 5 standard errors: a correct implementation fails
# with probability below 1e-6 per check, and the seeds are fixed anyway.
SAMPLE_COUNT = 200_000
STANDARD_ERRORS = 5.0


@pytest.mark.parametrize("a, b", [(0.5, 0.7), (1.0, 3.0), (2.5, 4.0)])
def test_matches_scipy(a, b):
    beta = Beta(a, b)
    reference = stats.beta(a, b)
    x = np.array([0.05, 0.3, 0.5, 0.95])
    np.testing.assert_allclose(beta.logpdf(x), reference.logpdf(x), rtol=1e-12)
    np.testing.assert_allclose(beta.mean, reference.mean(), rtol=1e-12)
    np.testing.assert_allclose(beta.var, reference.var(), rtol=1e-12)
    np.testing.assert_allclose(beta.entropy(), reference.entropy(), rtol=1e-10)
    np.testing.assert_allclose(beta.mean_log, reference.expect(np.log), rtol=1e-7)
    np.testing.assert_allclose(beta.mean_log1m, reference.expect(lambda x: np.log1p(-x)), rtol=1e-7)


def test_logpdf_outside_support():
    beta = Beta(2.0, 3.0)
    assert beta.logpdf(-0.1) == -np.inf
    assert beta.logpdf(1.1) == -np.inf
    assert beta.logpdf(0.0) == -np.inf
    assert Beta(1.0, 1.0).logpdf(0.0) == 0.0


def test_mode():
    beta = Beta([3.0, 0.5, 2.0, 1.0, 0.3, 0.8], [2.0, 2.0, 0.5, 1.0, 0.8, 0.3])
    # Interior mode; then a <= 1 < b (mode 0); b <= 1 < a (mode 1); flat (mean);
    # both below one, diverging fastest at 0 (a < b) or at 1 (a > b).
    np.testing.assert_allclose(beta.mode, [2.0 / 3.0, 0.0, 1.0, 0.5, 0.0, 1.0])


def test_sampling_moments():
    beta = Beta(2.5, 1.5)
    samples = beta.sample(np.random.default_rng(0), SAMPLE_COUNT)
    assert samples.shape == (SAMPLE_COUNT,)
    mean_error = np.sqrt(beta.var / SAMPLE_COUNT)
    assert abs(samples.mean() - beta.mean) < STANDARD_ERRORS * mean_error
    squared_deviations = (samples - samples.mean()) ** 2
    var_error = squared_deviations.std() / np.sqrt(SAMPLE_COUNT)
    assert abs(squared_deviations.mean() - beta.var) < STANDARD_ERRORS * var_error


def test_product_matches_numerical_integration():
    left = Beta(2.5, 1.5, log_scale=-0.4)
    right = Beta(1.2, 3.0, log_scale=1.1)
    result = product(left, right)
    normaliser, _ = integrate.quad(lambda x: np.exp(left.logpdf(x) + right.logpdf(x)), 0.0, 1.0, epsabs=0, epsrel=1e-12)
    np.testing.assert_allclose(result.log_scale, -0.4 + 1.1 + np.log(normaliser), rtol=1e-9)
    np.testing.assert_allclose([result.a, result.b], [2.7, 3.5], rtol=1e-12)
    for x in (0.1, 0.5, 0.9):
        expected = left.logpdf(x) + right.logpdf(x) - np.log(normaliser)
        np.testing.assert_allclose(result.logpdf(x), expected, rtol=1e-9)


def test_batch_behaviour():
    beta = Beta([1.0, 2.0, 3.0], [[2.0], [4.0]])
    assert beta.batch_shape == (2, 3)
    np.testing.assert_allclose(beta.mean, stats.beta([1.0, 2.0, 3.0], [[2.0], [4.0]]).mean())
    row = beta[1]
    assert row.batch_shape == (3,)
    np.testing.assert_allclose(row.b, 4.0)
    np.testing.assert_allclose(beta[0, 2].a, 3.0)
    np.testing.assert_allclose(beta.logpdf(0.25), stats.beta([1.0, 2.0, 3.0], [[2.0], [4.0]]).logpdf(0.25))
    assert beta.sample(np.random.default_rng(1), 5).shape == (5, 2, 3)
    assert Beta(2.0, 3.0).broadcast_to((3,)).batch_shape == (3,)
    assert product(beta, Beta(2.0, 2.0)).batch_shape == (2, 3)


def test_repr():
    assert repr(Beta(2.0, 3.0)) == "Beta(a=2, b=3)"
