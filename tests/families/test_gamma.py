"""Gamma and GammaShapeScale against scipy.stats, Monte Carlo and numerical integration."""
import numpy as np
import pytest
from scipy import integrate, stats

from fgraph.families import Gamma, GammaShapeScale, PointMass, product

# Monte Carlo checks allow 5 standard errors: a correct implementation fails
# with probability below 1e-6 per check, and the seeds are fixed anyway.
SAMPLE_COUNT = 200_000
STANDARD_ERRORS = 5.0


@pytest.mark.parametrize("shape, rate", [(0.5, 2.0), (1.0, 0.7), (3.5, 1.3)])
def test_matches_scipy(shape, rate):
    gamma = Gamma(shape, rate)
    reference = stats.gamma(a=shape, scale=1.0 / rate)
    x = np.array([0.05, 0.7, 2.0, 5.5])
    np.testing.assert_allclose(gamma.logpdf(x), reference.logpdf(x), rtol=1e-12)
    np.testing.assert_allclose(gamma.mean, reference.mean(), rtol=1e-12)
    np.testing.assert_allclose(gamma.var, reference.var(), rtol=1e-12)
    np.testing.assert_allclose(gamma.entropy(), reference.entropy(), rtol=1e-12)
    mean_log = reference.expect(np.log)
    np.testing.assert_allclose(gamma.mean_log, mean_log, rtol=1e-7)


def test_logpdf_outside_support():
    assert Gamma(2.0, 1.0).logpdf(-1.0) == -np.inf
    assert Gamma(2.0, 1.0).logpdf(0.0) == -np.inf
    assert Gamma(1.0, 3.0).logpdf(0.0) == pytest.approx(np.log(3.0))
    assert Gamma(0.5, 1.0).logpdf(0.0) == np.inf


def test_mode_and_mean_inverse():
    gamma = Gamma([0.5, 1.0, 3.0], 2.0)
    np.testing.assert_allclose(gamma.mode, [0.0, 0.0, 1.0])
    np.testing.assert_allclose(gamma.mean_inverse, [np.inf, np.inf, 2.0 / 2.0])
    reference = stats.gamma(a=3.0, scale=0.5).expect(lambda x: 1.0 / x)
    np.testing.assert_allclose(gamma.mean_inverse[2], reference, rtol=1e-8)


def test_shape_scale_is_the_same_family():
    shape_scale = GammaShapeScale(2.5, 4.0)
    shape_rate = Gamma(2.5, 0.25)
    assert shape_scale.family() is Gamma
    np.testing.assert_allclose(shape_scale.natural_parameters(), shape_rate.natural_parameters())
    np.testing.assert_allclose(shape_scale.mean, 10.0)
    np.testing.assert_allclose(shape_scale.scale, 4.0)
    np.testing.assert_allclose(shape_scale.logpdf(3.0), stats.gamma(a=2.5, scale=4.0).logpdf(3.0))
    assert type(product(shape_scale, shape_rate)) is Gamma


def test_sampling_moments():
    gamma = Gamma(2.5, 1.5)
    samples = gamma.sample(np.random.default_rng(0), SAMPLE_COUNT)
    assert samples.shape == (SAMPLE_COUNT,)
    mean_error = np.sqrt(gamma.var / SAMPLE_COUNT)
    assert abs(samples.mean() - gamma.mean) < STANDARD_ERRORS * mean_error
    squared_deviations = (samples - samples.mean()) ** 2
    var_error = squared_deviations.std() / np.sqrt(SAMPLE_COUNT)
    assert abs(squared_deviations.mean() - gamma.var) < STANDARD_ERRORS * var_error


def test_product_matches_numerical_integration():
    left = Gamma(2.5, 1.5, log_scale=0.3)
    right = GammaShapeScale(1.7, 0.8, log_scale=-0.2)
    result = product(left, right)
    normaliser, _ = integrate.quad(lambda x: np.exp(left.logpdf(x) + right.logpdf(x)), 0.0, np.inf, epsabs=0, epsrel=1e-12)
    np.testing.assert_allclose(result.log_scale, 0.3 - 0.2 + np.log(normaliser), rtol=1e-9)
    for x in (0.1, 1.0, 2.5):
        expected = left.logpdf(x) + right.logpdf(x) - np.log(normaliser)
        np.testing.assert_allclose(result.logpdf(x), expected, rtol=1e-9)


def test_product_with_point_mass():
    gamma = Gamma(2.0, 3.0)
    result = product(PointMass(0.5), gamma)
    assert isinstance(result, PointMass)
    np.testing.assert_allclose(result.log_scale, gamma.logpdf(0.5))


def test_batch_behaviour():
    gamma = Gamma([1.0, 2.0, 3.0], 2.0, log_scale=[0.1, 0.2, 0.3])
    assert gamma.batch_shape == (3,)
    assert gamma.event_shape == ()
    np.testing.assert_allclose(gamma.logpdf(1.5), stats.gamma(a=[1.0, 2.0, 3.0], scale=0.5).logpdf(1.5))
    single = gamma[1]
    assert single.batch_shape == ()
    np.testing.assert_allclose(single.mean, Gamma(2.0, 2.0).mean)
    np.testing.assert_allclose(single.log_scale, 0.2)
    broadcast = gamma.broadcast_to((2, 3))
    assert broadcast.batch_shape == (2, 3)
    np.testing.assert_allclose(broadcast.mean, np.broadcast_to(gamma.mean, (2, 3)))
    assert gamma.sample(np.random.default_rng(1), (4, 5)).shape == (4, 5, 3)
    # A scalar message broadcasts against the batch in a product.
    assert product(gamma, Gamma(1.5, 1.0)).batch_shape == (3,)
    assert gamma.entropy().shape == (3,)


def test_repr():
    assert repr(Gamma(2.0, 3.0)) == "Gamma(shape=2, rate=3)"
    assert repr(GammaShapeScale(2.0, 3.0)) == "GammaShapeScale(shape=2, scale=3)"
    assert "batch_shape=(3,)" in repr(Gamma([1.0, 2.0, 3.0], 1.0))
