"""InverseGamma and InverseGammaLikelihood against scipy.stats.invgamma, Monte Carlo and numerical integration."""
import math

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import gammaln

from fgraph.families import Gamma, InverseGamma, InverseGammaLikelihood, PointMass, product

# Monte Carlo checks allow 5 standard errors (see test_gamma.py).
SAMPLE_COUNT = 200_000
STANDARD_ERRORS = 5.0


@pytest.mark.parametrize("shape, scale", [(0.5, 2.0), (2.5, 0.7), (4.0, 3.0)])
def test_matches_scipy(shape, scale):
    distribution = InverseGamma(shape, scale)
    reference = stats.invgamma(a=shape, scale=scale)
    x = np.array([0.05, 0.7, 2.0, 5.5])
    np.testing.assert_allclose(distribution.logpdf(x), reference.logpdf(x), rtol=1e-12)
    np.testing.assert_allclose(distribution.entropy(), reference.entropy(), rtol=1e-12)
    np.testing.assert_allclose(distribution.mean_log, reference.expect(np.log), rtol=1e-8)
    np.testing.assert_allclose(distribution.mean_inverse, reference.expect(lambda v: 1.0 / v), rtol=1e-8)
    np.testing.assert_allclose(distribution.mode, scale / (shape + 1.0), rtol=1e-12)
    # the mode maximises the density
    assert reference.logpdf(distribution.mode) > reference.logpdf(distribution.mode * np.array([0.99, 1.01])).max()


def test_mean_and_variance_exist_only_for_large_enough_shapes():
    """The mean needs shape > 1, the variance and second moment shape > 2; below, they are infinite."""
    distribution = InverseGamma([0.5, 1.5, 2.5, 4.0], 3.0)
    np.testing.assert_array_equal(distribution.mean[:1], np.inf)
    np.testing.assert_array_equal(distribution.var[:2], np.inf)
    np.testing.assert_array_equal(distribution.second_moment[:2], np.inf)
    for i, shape in enumerate([0.5, 1.5, 2.5, 4.0]):
        reference = stats.invgamma(a=shape, scale=3.0)
        if shape > 1.0:
            np.testing.assert_allclose(distribution.mean[i], reference.mean(), rtol=1e-12)
        if shape > 2.0:
            np.testing.assert_allclose(distribution.var[i], reference.var(), rtol=1e-12)
            np.testing.assert_allclose(distribution.second_moment[i], reference.moment(2), rtol=1e-12)


def test_logpdf_outside_support():
    distribution = InverseGamma(2.0, 1.0)
    assert distribution.logpdf(-1.0) == -np.inf
    assert distribution.logpdf(0.0) == -np.inf


def test_is_the_law_of_the_inverse_of_a_gamma_variable():
    """1/τ for τ ~ Gamma(α, rate β): log densities differ by the Jacobian -2 log x."""
    shape, scale, x = 3.2, 1.7, np.array([0.2, 0.9, 3.0])
    np.testing.assert_allclose(InverseGamma(shape, scale).logpdf(x), Gamma(shape, scale).logpdf(1.0 / x) - 2.0 * np.log(x),
                               rtol=1e-12)


def test_sampling_moments():
    distribution = InverseGamma(6.0, 2.0)
    samples = distribution.sample(np.random.default_rng(0), SAMPLE_COUNT)
    assert samples.shape == (SAMPLE_COUNT,)
    assert abs(samples.mean() - distribution.mean) < STANDARD_ERRORS * np.sqrt(distribution.var / SAMPLE_COUNT)
    inverse = 1.0 / samples
    assert abs(inverse.mean() - distribution.mean_inverse) < STANDARD_ERRORS * inverse.std() / np.sqrt(SAMPLE_COUNT)
    logs = np.log(samples)
    assert abs(logs.mean() - distribution.mean_log) < STANDARD_ERRORS * logs.std() / np.sqrt(SAMPLE_COUNT)


def test_product_matches_numerical_integration():
    left = InverseGamma(2.5, 1.5, log_scale=0.3)
    right = InverseGamma(1.7, 0.8, log_scale=-0.2)
    result = product(left, right)
    assert type(result) is InverseGamma
    normaliser, _ = integrate.quad(lambda x: np.exp(left.logpdf(x) + right.logpdf(x)), 0.0, np.inf, epsabs=0, epsrel=1e-12)
    np.testing.assert_allclose(result.log_scale, 0.3 - 0.2 + np.log(normaliser), rtol=1e-9)
    # shapes add plus one, scales add
    np.testing.assert_allclose([result.shape, result.scale], [2.5 + 1.7 + 1.0, 1.5 + 0.8], rtol=1e-12)
    for x in (0.1, 1.0, 2.5):
        np.testing.assert_allclose(result.logpdf(x), left.logpdf(x) + right.logpdf(x) - np.log(normaliser), rtol=1e-9)


def test_product_with_point_mass():
    distribution = InverseGamma(2.0, 3.0)
    result = product(PointMass(0.5), distribution)
    assert isinstance(result, PointMass)
    np.testing.assert_allclose(result.log_scale, stats.invgamma(a=2.0, scale=3.0).logpdf(0.5), rtol=1e-12)


def test_batch_behaviour():
    distribution = InverseGamma([1.0, 2.0, 3.0], 2.0, log_scale=[0.1, 0.2, 0.3])
    assert distribution.batch_shape == (3,) and distribution.event_shape == ()
    np.testing.assert_allclose(distribution.logpdf(1.5), stats.invgamma(a=[1.0, 2.0, 3.0], scale=2.0).logpdf(1.5))
    single = distribution[1]
    assert single.batch_shape == () and type(single) is InverseGamma
    np.testing.assert_allclose(single.mean_inverse, 1.0)
    np.testing.assert_allclose(single.log_scale, 0.2)
    assert distribution.broadcast_to((2, 3)).batch_shape == (2, 3)
    assert distribution.sample(np.random.default_rng(1), (4, 5)).shape == (4, 5, 3)
    assert product(distribution, InverseGamma(1.5, 1.0)).batch_shape == (3,)


def test_repr():
    assert repr(InverseGamma(2.0, 3.0)) == "InverseGamma(shape=2, scale=3)"
    assert repr(InverseGammaLikelihood(-0.5, 3.0)) == "InverseGammaLikelihood(shape=-0.5, scale=3)"


# ------------------------------------------------------------------ likelihoods
def normal_pdf(y, mean, var):
    return math.exp(-0.5 * (y - mean) ** 2 / var) / math.sqrt(2.0 * math.pi * var)


def inverse_gamma_pdf(v, shape, scale):
    return math.exp(shape * math.log(scale) - math.lgamma(shape) - (shape + 1.0) * math.log(v) - scale / v)


def normal_variance_likelihood(y, mean):
    """N(y | mean, v) as a function of v: exp(-½ log 2π) v^(-1/2) exp(-((y - mean)²/2) / v)."""
    return InverseGammaLikelihood(-0.5, 0.5 * (y - mean) ** 2, log_scale=-0.5 * np.log(2.0 * np.pi))


def test_likelihood_evaluates_the_normal_density_in_its_variance():
    likelihood = normal_variance_likelihood(1.3, -0.4)
    v = np.array([0.1, 1.0, 4.0])
    np.testing.assert_allclose(likelihood.log_value(v), stats.norm(-0.4, np.sqrt(v)).logpdf(1.3), rtol=1e-12)
    assert likelihood.log_value(0.0) == -np.inf


def test_likelihood_times_prior_is_the_conjugate_posterior_with_the_evidence():
    """IG(α, β) prior and one observation: IG(α + ½, β + (y - m)²/2), scale = the Student-t evidence by quadrature."""
    prior = InverseGamma(2.0, 3.0, log_scale=0.25)
    likelihood = normal_variance_likelihood(1.3, -0.4)
    for result in (product(prior, likelihood), product(likelihood, prior)):
        assert type(result) is InverseGamma
        np.testing.assert_allclose([result.shape, result.scale], [2.5, 3.0 + 0.5 * 1.7**2], rtol=1e-12)
        evidence, _ = integrate.quad(lambda v: inverse_gamma_pdf(v, 2.0, 3.0) * normal_pdf(1.3, -0.4, v),
                                     0.0, np.inf, epsabs=0, epsrel=1e-12)
        np.testing.assert_allclose(result.log_scale, 0.25 + np.log(evidence), rtol=1e-10)


def test_products_of_likelihoods_become_proper_from_three_observations():
    ys = [0.5, -1.0, 2.0]
    two = product(normal_variance_likelihood(ys[0], 0.0), normal_variance_likelihood(ys[1], 0.0))
    assert type(two) is InverseGammaLikelihood  # α = 0: still not integrable
    np.testing.assert_allclose([two.shape, two.scale, two.log_scale], [0.0, 0.5 * (0.25 + 1.0), -np.log(2.0 * np.pi)])
    three = product(two, normal_variance_likelihood(ys[2], 0.0))
    assert type(three) is InverseGamma
    squares = 0.5 * sum(y**2 for y in ys)
    np.testing.assert_allclose([three.shape, three.scale], [0.5, squares], rtol=1e-12)
    integral, _ = integrate.quad(lambda v: np.prod([normal_pdf(y, 0.0, v) for y in ys]), 0.0, np.inf,
                                 epsabs=0, epsrel=1e-12, limit=200)
    np.testing.assert_allclose(three.log_scale, np.log(integral), rtol=1e-9)


def test_likelihood_powers_and_plate_style_products_agree():
    likelihood = normal_variance_likelihood(1.0, 0.0)
    powered = likelihood.power(4.0)
    assert type(powered) is InverseGamma  # α = 4 (1/2 + 1) - 1 = 1
    repeated = product(product(likelihood, likelihood), product(likelihood, likelihood))
    np.testing.assert_allclose([powered.shape, powered.scale, powered.log_scale],
                               [repeated.shape, repeated.scale, repeated.log_scale], rtol=1e-12)
    half = likelihood.power(0.5)
    assert type(half) is InverseGammaLikelihood
    np.testing.assert_allclose([half.shape, half.scale, half.log_scale], [-0.75, 0.25, -0.25 * np.log(2.0 * np.pi)])


def test_power_of_a_proper_member_matches_the_generic_rule():
    """(exp(s) p(x))^ω renormalised: natural parameters × ω, log-scale ω s + A(ω η) - ω A(η)."""
    distribution = InverseGamma(3.0, 2.0, log_scale=0.4)
    powered = distribution.power(0.6)
    shape, scale = 0.6 * 4.0 - 1.0, 0.6 * 2.0

    def log_partition(a, b):
        return gammaln(a) - a * np.log(b)

    np.testing.assert_allclose([powered.shape, powered.scale], [shape, scale], rtol=1e-12)
    np.testing.assert_allclose(powered.log_scale, 0.6 * 0.4 + log_partition(shape, scale) - 0.6 * log_partition(3.0, 2.0),
                               rtol=1e-12)


@pytest.mark.parametrize("moment", ["mean", "var", "mode", "mean_log", "mean_inverse", "second_moment"])
def test_likelihood_has_no_moments(moment):
    with pytest.raises(ValueError, match="InverseGammaLikelihood .* has no .*multiply it with a proper prior"):
        getattr(normal_variance_likelihood(1.0, 0.0), moment)


def test_likelihood_has_no_entropy_density_or_samples():
    likelihood = normal_variance_likelihood(1.0, 0.0)
    with pytest.raises(ValueError, match="no entropy"):
        likelihood.entropy()
    with pytest.raises(ValueError, match="use log_value"):
        likelihood.logpdf(1.0)
    with pytest.raises(ValueError, match="no samples"):
        likelihood.sample(np.random.default_rng(0))


def test_from_natural_and_from_coefficient_choose_the_class():
    assert type(InverseGamma.from_natural((-3.0, -2.0))) is InverseGamma
    assert type(InverseGamma.from_natural((-0.5, -2.0))) is InverseGammaLikelihood
    assert type(InverseGamma.from_coefficient((-3.0, 0.0), 0.0)) is InverseGammaLikelihood  # scale 0
    # a batch with one improper element stays a likelihood as a whole
    assert type(InverseGamma.from_coefficient((np.array([-3.0, -0.5]), -1.0), 0.0)) is InverseGammaLikelihood
    proper = InverseGamma.from_coefficient((-3.0, -2.0), 0.5)
    np.testing.assert_allclose(proper.log_scale, 0.5 + gammaln(2.0) - 2.0 * np.log(2.0), rtol=1e-12)
    assert np.isnan(InverseGamma.log_partition_of((-0.5, -2.0)))
