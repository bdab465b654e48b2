"""The Mixture family ``Σ_k w_k p_k(x)``: moments, sampling, products with log-normalisers, batching.

Every expected value is computed directly with numpy/scipy from the weights
and the component parameters (never through another fgraph method), and the
products are checked against numerical integration of the *scaled* densities
``exp(log_scale) p(x)``:

    log_scale(a · b) = log ∫ e^{s_a} a(x) e^{s_b} b(x) dx,
    logpdf(a · b)(x) = log a(x) + log b(x) + s_a + s_b − log_scale(a · b).
"""
import math

import numpy as np
import pytest
from scipy import integrate
from scipy.special import logsumexp
from scipy.stats import beta as beta_distribution
from scipy.stats import multivariate_normal, norm

from fgraph.errors import ModelError
from fgraph.families import (
    Beta,
    Distribution,
    Mixture,
    MultivariateNormal,
    MvNormalMeanCovariance,
    NormalMeanPrecision,
    NormalMeanVariance,
    PointMass,
    UnivariateNormal,
    product,
)

# ---------------------------------------------------------------- fixtures
WEIGHTS = np.array([0.2, 0.5, 0.3])
MEANS = np.array([-1.5, 0.4, 2.5])
VARIANCES = np.array([0.6, 1.3, 0.25])
LOG_SCALE = 0.37


def univariate(log_scale=LOG_SCALE):
    components = [NormalMeanVariance(m, v) for m, v in zip(MEANS, VARIANCES)]
    return Mixture.create(np.log(WEIGHTS), components, log_scale)


MV_WEIGHTS = np.array([0.35, 0.65])
MV_MEANS = [np.array([1.0, -0.5]), np.array([-0.7, 2.0])]
MV_COVS = [np.array([[1.2, 0.3], [0.3, 0.5]]), np.array([[0.4, -0.1], [-0.1, 2.0]])]


def bivariate(log_scale=0.0):
    components = [MvNormalMeanCovariance(m, c) for m, c in zip(MV_MEANS, MV_COVS)]
    return Mixture.create(np.log(MV_WEIGHTS), components, log_scale)


def univariate_density(x):
    return sum(w * norm.pdf(x, m, math.sqrt(v)) for w, m, v in zip(WEIGHTS, MEANS, VARIANCES))


QUAD = dict(epsabs=0.0, epsrel=1e-13, limit=400)
LIMITS = (-40.0, 40.0)
POINTS = [-2.0, -0.3, 0.0, 1.1, 3.2]  # breakpoints near the component means help quad


def log_integral(function) -> float:
    value, _ = integrate.quad(function, *LIMITS, points=POINTS, **QUAD)
    return math.log(value)


# ---------------------------------------------------------------- moments
def test_univariate_logpdf_mean_var_second_moment():
    mixture = univariate()
    x = np.array([-3.0, -1.5, 0.0, 0.4, 1.7, 4.0])
    np.testing.assert_allclose(mixture.logpdf(x), np.log(univariate_density(x)), rtol=1e-12)
    mean = np.sum(WEIGHTS * MEANS)
    second = np.sum(WEIGHTS * (VARIANCES + MEANS**2))
    np.testing.assert_allclose(mixture.mean, mean, rtol=1e-13)
    np.testing.assert_allclose(mixture.second_moment, second, rtol=1e-13)
    np.testing.assert_allclose(mixture.var, second - mean**2, rtol=1e-13)
    np.testing.assert_allclose(mixture.weights, WEIGHTS, rtol=1e-13)
    np.testing.assert_allclose(mixture.log_scale, LOG_SCALE)


def test_unnormalised_log_weights_are_normalised():
    components = [NormalMeanVariance(m, v) for m, v in zip(MEANS, VARIANCES)]
    mixture = Mixture.create(np.log(WEIGHTS) + 7.3, components)
    np.testing.assert_allclose(mixture.weights, WEIGHTS, rtol=1e-13)
    np.testing.assert_allclose(mixture.log_scale, 0.0)


def test_component_scales_are_ignored():
    """Components are normalised: their own log-scales do not change the weights or the density."""
    components = [NormalMeanVariance(m, v, log_scale=s) for m, v, s in zip(MEANS, VARIANCES, [3.0, -2.0, 0.5])]
    mixture = Mixture.create(np.log(WEIGHTS), components)
    np.testing.assert_allclose(mixture.logpdf(0.3), np.log(univariate_density(0.3)), rtol=1e-12)
    assert all(np.all(c.log_scale == 0.0) for c in mixture.components)


def test_bivariate_logpdf_mean_cov_second_moment_var():
    mixture = bivariate()
    x = np.array([[0.0, 0.0], [1.0, -0.5], [-0.7, 2.0], [2.5, 1.5]])
    density = sum(w * multivariate_normal(m, c).pdf(x) for w, m, c in zip(MV_WEIGHTS, MV_MEANS, MV_COVS))
    np.testing.assert_allclose(mixture.logpdf(x), np.log(density), rtol=1e-12)
    mean = sum(w * m for w, m in zip(MV_WEIGHTS, MV_MEANS))
    second = sum(w * (c + np.outer(m, m)) for w, m, c in zip(MV_WEIGHTS, MV_MEANS, MV_COVS))
    np.testing.assert_allclose(mixture.mean, mean, rtol=1e-13)
    np.testing.assert_allclose(mixture.second_moment, second, rtol=1e-12)
    np.testing.assert_allclose(mixture.cov, second - np.outer(mean, mean), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(mixture.var, np.diag(second - np.outer(mean, mean)), rtol=1e-12)
    assert mixture.event_shape == (2,) and mixture.event_ndim == 1 and mixture.batch_shape == ()


def test_moments_of_families_without_a_second_moment():
    """Beta components (no ``second_moment`` attribute): E[x²] from each component's mean and variance."""
    mixture = Mixture.create(np.log([0.3, 0.7]), [Beta(2.0, 3.0), Beta(5.0, 1.0)])
    means = np.array([beta_distribution(2, 3).mean(), beta_distribution(5, 1).mean()])
    variances = np.array([beta_distribution(2, 3).var(), beta_distribution(5, 1).var()])
    mean = 0.3 * means[0] + 0.7 * means[1]
    second = np.sum(np.array([0.3, 0.7]) * (variances + means**2))
    np.testing.assert_allclose(mixture.mean, mean, rtol=1e-13)
    np.testing.assert_allclose(mixture.second_moment, second, rtol=1e-13)
    np.testing.assert_allclose(mixture.var, second - mean**2, rtol=1e-12)
    x = 0.6
    np.testing.assert_allclose(mixture.logpdf(x), np.log(0.3 * beta_distribution(2, 3).pdf(x) + 0.7 * beta_distribution(5, 1).pdf(x)),
                               rtol=1e-12)


def test_moments_of_point_mass_components():
    """A mixture of constants (a switch between numbers): a discrete distribution."""
    mixture = Mixture.create(np.log([0.25, 0.75]), [PointMass(-1.0), PointMass(2.0)])
    assert type(mixture) is Mixture.of(PointMass)
    np.testing.assert_allclose(mixture.mean, 0.25 * -1.0 + 0.75 * 2.0)
    np.testing.assert_allclose(mixture.var, 0.25 * 1.0 + 0.75 * 4.0 - 1.25**2)


def test_mode_is_the_component_mode_of_highest_density():
    # well separated components: the global mode is the mean of the component with the highest peak
    components = [NormalMeanVariance(-5.0, 1.0), NormalMeanVariance(5.0, 0.2)]
    mixture = Mixture.create(np.log([0.6, 0.4]), components)
    # peaks: 0.6 / sqrt(2π) ≈ 0.239 and 0.4 / sqrt(0.4π) ≈ 0.357
    np.testing.assert_allclose(mixture.mode, 5.0)


# --------------------------------------------------------------- sampling
@pytest.mark.parametrize("make", [univariate, bivariate], ids=["univariate", "bivariate"])
def test_sample_moments_within_standard_errors(make):
    mixture = make()
    n = 200_000
    draws = mixture.sample(np.random.default_rng(1234), n)
    assert draws.shape == (n,) + mixture.event_shape
    mean, var = np.asarray(mixture.mean), np.asarray(mixture.var)
    # standard error of the sample mean sqrt(var / n); of the sample variance sqrt((μ4 − var²) / n)
    fourth = np.mean((draws - mean) ** 4, axis=0)
    np.testing.assert_array_less(np.abs(draws.mean(axis=0) - mean), 5.0 * np.sqrt(var / n))
    np.testing.assert_array_less(np.abs(draws.var(axis=0) - var), 5.0 * np.sqrt((fourth - var**2) / n))


def test_sample_component_frequencies():
    """Far-apart components: the fraction of draws near each mean estimates its weight."""
    components = [NormalMeanVariance(m, 0.01) for m in (-10.0, 0.0, 10.0)]
    mixture = Mixture.create(np.log(WEIGHTS), components)
    n = 100_000
    draws = mixture.sample(np.random.default_rng(7), n)
    frequencies = np.array([np.mean(np.abs(draws - m) < 1.0) for m in (-10.0, 0.0, 10.0)])
    np.testing.assert_allclose(frequencies.sum(), 1.0)
    np.testing.assert_array_less(np.abs(frequencies - WEIGHTS), 5.0 * np.sqrt(WEIGHTS * (1 - WEIGHTS) / n))


# --------------------------------------------------------------- products
OTHER = NormalMeanVariance(0.8, 1.7, log_scale=-0.45)


def _assert_product_matches_integral(result, scaled_density, points=(-2.0, 0.0, 0.5, 1.3, 3.0)):
    """``result`` is the normalised product with the log of the integral of ``scaled_density`` as log-scale."""
    log_z = log_integral(scaled_density)
    np.testing.assert_allclose(result.log_scale, log_z, rtol=0, atol=1e-9)
    for x in points:
        np.testing.assert_allclose(result.logpdf(x), math.log(scaled_density(x)) - log_z, rtol=0, atol=1e-9)


def test_mixture_times_normal():
    mixture = univariate()

    def scaled(x):
        return math.exp(LOG_SCALE + OTHER.log_scale) * univariate_density(x) * norm.pdf(x, 0.8, math.sqrt(1.7))

    result = product(mixture, OTHER)
    assert isinstance(result, Mixture.of(UnivariateNormal))
    _assert_product_matches_integral(result, scaled)
    # closed form: weights w_k N(m_k | 0.8, v_k + 1.7), components N((m_k/v_k + 0.8/1.7)/(1/v_k + 1/1.7), ...)
    log_z = np.log(WEIGHTS) + norm.logpdf(MEANS, 0.8, np.sqrt(VARIANCES + 1.7))
    np.testing.assert_allclose(result.weights, np.exp(log_z - logsumexp(log_z)), rtol=1e-12)
    precision = 1 / VARIANCES + 1 / 1.7
    np.testing.assert_allclose([c.mean for c in result.components], (MEANS / VARIANCES + 0.8 / 1.7) / precision, rtol=1e-12)
    np.testing.assert_allclose([c.var for c in result.components], 1 / precision, rtol=1e-12)


def test_normal_times_mixture_equals_mixture_times_normal():
    mixture = univariate()
    left, right = product(OTHER, mixture), product(mixture, OTHER)
    np.testing.assert_allclose(left.log_scale, right.log_scale, rtol=0, atol=1e-12)
    np.testing.assert_allclose(left.logpdf(np.linspace(-3, 3, 7)), right.logpdf(np.linspace(-3, 3, 7)), rtol=1e-12)
    # the operator form is the same product
    np.testing.assert_allclose((OTHER * mixture).log_scale, right.log_scale, rtol=0, atol=1e-12)


def test_mixture_times_mixture():
    first = univariate()
    second = Mixture.create(
        np.log([0.6, 0.4]), [NormalMeanPrecision(1.0, 2.0), NormalMeanVariance(-0.5, 3.0)], log_scale=-1.2
    )

    def scaled(x):
        other = 0.6 * norm.pdf(x, 1.0, math.sqrt(0.5)) + 0.4 * norm.pdf(x, -0.5, math.sqrt(3.0))
        return math.exp(LOG_SCALE - 1.2) * univariate_density(x) * other

    result = product(first, second)
    assert isinstance(result, Mixture.of(UnivariateNormal))
    assert len(result.components) == 6
    _assert_product_matches_integral(result, scaled)
    np.testing.assert_allclose(product(second, first).log_scale, result.log_scale, rtol=0, atol=1e-12)


def test_mixture_times_point_mass():
    mixture = univariate()
    point = PointMass(0.9, log_scale=0.25)
    result = product(mixture, point)
    assert isinstance(result, PointMass)
    np.testing.assert_allclose(result.value, 0.9)
    # ∫ e^{s} m(x) e^{s_p} δ(x − 0.9) dx = e^{s + s_p} m(0.9)
    np.testing.assert_allclose(result.log_scale, LOG_SCALE + 0.25 + math.log(univariate_density(0.9)), rtol=0, atol=1e-12)
    np.testing.assert_allclose(product(point, mixture).log_scale, result.log_scale, rtol=0, atol=1e-12)


def test_bivariate_mixture_times_bivariate_normal():
    """Closed form ∫ N(x | m_k, S_k) N(x | m, S) dx = N(m_k | m, S_k + S)."""
    mixture = bivariate(log_scale=0.3)
    mean, cov = np.array([0.2, 0.9]), np.array([[0.8, 0.2], [0.2, 1.1]])
    other = MvNormalMeanCovariance(mean, cov, log_scale=-0.1)
    result = product(mixture, other)
    assert isinstance(result, Mixture.of(MultivariateNormal))
    log_z = np.log(MV_WEIGHTS) + np.array([multivariate_normal(mean, cov + c).logpdf(m) for m, c in zip(MV_MEANS, MV_COVS)])
    np.testing.assert_allclose(result.log_scale, 0.3 - 0.1 + logsumexp(log_z), rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.weights, np.exp(log_z - logsumexp(log_z)), rtol=1e-12)
    x = np.array([0.4, 0.1])
    density = sum(w * multivariate_normal(m, c).pdf(x) for w, m, c in zip(MV_WEIGHTS, MV_MEANS, MV_COVS))
    expected = math.log(density) + multivariate_normal(mean, cov).logpdf(x) - logsumexp(log_z)
    np.testing.assert_allclose(result.logpdf(x), expected, rtol=0, atol=1e-12)


# --------------------------------------------------------------- batching
def batched():
    """Batch (3,): weights per element, components with batch (3,) and () mixed."""
    log_weights = np.log([[0.3, 0.7], [0.5, 0.5], [0.9, 0.1]])
    components = [NormalMeanVariance([0.0, 1.0, 2.0], 1.0), NormalMeanVariance(3.0, [1.0, 2.0, 3.0])]
    return Mixture.create(log_weights, components, log_scale=[0.1, 0.2, 0.3])


def test_batch_shape_moments_and_logpdf():
    mixture = batched()
    assert mixture.batch_shape == (3,)
    w = np.array([[0.3, 0.7], [0.5, 0.5], [0.9, 0.1]])
    means = np.array([[0.0, 3.0], [1.0, 3.0], [2.0, 3.0]])
    variances = np.array([[1.0, 1.0], [1.0, 2.0], [1.0, 3.0]])
    np.testing.assert_allclose(mixture.mean, np.sum(w * means, axis=1), rtol=1e-13)
    second = np.sum(w * (variances + means**2), axis=1)
    np.testing.assert_allclose(mixture.var, second - np.sum(w * means, axis=1) ** 2, rtol=1e-12)
    x = np.array([0.5, -1.0, 2.5])
    density = np.sum(w * norm.pdf(x[:, None], means, np.sqrt(variances)), axis=1)
    np.testing.assert_allclose(mixture.logpdf(x), np.log(density), rtol=1e-12)
    np.testing.assert_allclose(mixture.log_scale, [0.1, 0.2, 0.3])


def test_batch_index_selects_one_element():
    mixture = batched()
    element = mixture[1]
    assert isinstance(element, Mixture.of(UnivariateNormal)) and element.batch_shape == ()
    np.testing.assert_allclose(element.weights, [0.5, 0.5], rtol=1e-13)
    np.testing.assert_allclose(element.mean, 0.5 * 1.0 + 0.5 * 3.0, rtol=1e-13)
    np.testing.assert_allclose(element.log_scale, 0.2)
    sliced = mixture[1:]
    assert sliced.batch_shape == (2,)
    np.testing.assert_allclose(sliced.mean, mixture.mean[1:], rtol=1e-13)


def test_broadcast_to_and_index():
    mixture = univariate()
    wide = mixture.broadcast_to((2, 4))
    assert wide.batch_shape == (2, 4)
    np.testing.assert_allclose(wide.mean, np.full((2, 4), mixture.mean))
    np.testing.assert_allclose(wide.log_scale, np.full((2, 4), LOG_SCALE))
    np.testing.assert_allclose(wide[1, 3].logpdf(0.2), mixture.logpdf(0.2), rtol=1e-13)
    np.testing.assert_allclose(wide[1, 3].log_scale, LOG_SCALE)
    # a batched mixture broadcasts along new leading axes
    deep = batched().broadcast_to((2, 3))
    np.testing.assert_allclose(deep[1].mean, batched().mean, rtol=1e-13)
    np.testing.assert_allclose(deep[0, 2].log_scale, 0.3)


def test_batched_product_with_batched_normal():
    mixture = batched()
    other = NormalMeanVariance([0.0, 1.0, -1.0], [2.0, 0.5, 1.0], log_scale=[0.0, -0.2, 0.4])
    result = product(mixture, other)
    assert result.batch_shape == (3,)
    for b in range(3):
        single = product(mixture[b], other[b])
        np.testing.assert_allclose(result.log_scale[b], single.log_scale, rtol=0, atol=1e-12)
        np.testing.assert_allclose(result[b].mean, single.mean, rtol=1e-12)


# ------------------------------------------------------------ zero weights
def test_zero_weight_components():
    components = [NormalMeanVariance(m, v) for m, v in zip(MEANS, VARIANCES)]
    mixture = Mixture.create(np.array([-np.inf, 0.0, math.log(2.0)]), components, log_scale=0.1)
    w = np.array([0.0, 1 / 3, 2 / 3])
    np.testing.assert_allclose(mixture.weights, w, rtol=1e-13)
    np.testing.assert_allclose(mixture.mean, np.sum(w * MEANS), rtol=1e-13)
    np.testing.assert_allclose(mixture.var, np.sum(w * (VARIANCES + MEANS**2)) - np.sum(w * MEANS) ** 2, rtol=1e-13)
    x = np.array([-1.5, 0.3])
    density = np.sum(w * norm.pdf(x[:, None], MEANS, np.sqrt(VARIANCES)), axis=1)
    np.testing.assert_allclose(mixture.logpdf(x), np.log(density), rtol=1e-12)
    # the product keeps the dead component dead and finite everywhere else
    result = product(mixture, OTHER)
    assert result.log_weights[0] == -np.inf
    assert np.all(np.isfinite(result.log_weights[1:])) and np.isfinite(result.log_scale)
    log_z = np.log(w[1:]) + norm.logpdf(MEANS[1:], 0.8, np.sqrt(VARIANCES[1:] + 1.7))
    np.testing.assert_allclose(result.log_scale, 0.1 - 0.45 + logsumexp(log_z), rtol=0, atol=1e-12)
    # sampling never picks it: the draws stay away from its mean (−1.5, variance 0.6)
    components = [NormalMeanVariance(-50.0, 0.01), NormalMeanVariance(0.0, 1.0), NormalMeanVariance(50.0, 0.01)]
    draws = Mixture.create(np.array([-np.inf, 0.0, 0.0]), components).sample(np.random.default_rng(3), 20_000)
    assert np.all(draws > -20.0)
    assert np.isfinite(mixture.logpdf(-1.5))  # the dead component's mean still has finite density


def test_zero_weight_in_a_batch_element():
    log_weights = np.array([[0.0, -np.inf], [math.log(0.4), math.log(0.6)]])
    components = [NormalMeanVariance(1.0, 1.0), NormalMeanVariance(-1.0, 2.0)]
    mixture = Mixture.create(log_weights, components)
    np.testing.assert_allclose(mixture.mean, [1.0, 0.4 - 0.6], rtol=1e-13)
    np.testing.assert_allclose(mixture.logpdf(0.0), [norm.logpdf(0.0, 1.0, 1.0),
                                                     np.log(0.4 * norm.pdf(0.0, 1, 1) + 0.6 * norm.pdf(0.0, -1, np.sqrt(2)))])


# ------------------------------------------------------------ classes
def test_mixture_of_is_cached_per_family():
    cls = Mixture.of(UnivariateNormal)
    assert Mixture.of(UnivariateNormal) is cls
    # every parameterisation of the univariate normal belongs to the same family
    assert Mixture.of(NormalMeanVariance) is cls and Mixture.of(NormalMeanPrecision) is cls
    # a mixture of mixtures is a mixture of the components' family
    assert Mixture.of(cls) is cls
    assert cls.component_family is UnivariateNormal and issubclass(cls, Mixture)
    assert Mixture.of(MvNormalMeanCovariance) is Mixture.of(MultivariateNormal) is not cls


def test_create_picks_the_class_of_its_components():
    assert type(univariate()) is Mixture.of(UnivariateNormal)
    assert type(bivariate()) is Mixture.of(MultivariateNormal)
    mixed = Mixture.create(np.zeros(2), [NormalMeanVariance(0.0, 1.0), NormalMeanPrecision(1.0, 2.0)])
    assert type(mixed) is Mixture.of(UnivariateNormal)
    different = Mixture.create(np.zeros(2), [NormalMeanVariance(0.0, 1.0), PointMass(1.0)])
    assert type(different) is Mixture.of(Distribution)


def test_invalid_weights_raise():
    components = [NormalMeanVariance(0.0, 1.0), NormalMeanVariance(1.0, 1.0)]
    with pytest.raises(ValueError, match="length K = 2"):
        Mixture.create(np.zeros(3), components)
    with pytest.raises(ValueError, match="NaN"):
        Mixture.create(np.array([0.0, np.nan]), components)


def test_entropy_raises_with_a_helpful_message():
    with pytest.raises(NotImplementedError, match="no closed form") as error:
        univariate().entropy()
    assert "switch" in str(error.value)


def test_variance_of_tight_components_far_from_zero_keeps_its_digits():
    """E[x²] − E[x]² would lose every digit here (E[x²] ≈ 1e12, var ≈ 1e-6); the total-variance form does not."""
    separation = (1e6 + 1e-3) - 1e6  # exact in floating point (Sterbenz), about 1e-3
    mixture = Mixture(np.log([0.5, 0.5]), [NormalMeanVariance(1e6, 1e-6), NormalMeanVariance(1e6 + 1e-3, 1e-6)])
    np.testing.assert_allclose(mixture.var, 1e-6 + 0.25 * separation**2, rtol=1e-9)
    vectors = Mixture(np.log([0.5, 0.5]), [MvNormalMeanCovariance(np.full(2, 1e6), 1e-6 * np.eye(2)),
                                           MvNormalMeanCovariance(np.full(2, 1e6 + 1e-3), 1e-6 * np.eye(2))])
    np.testing.assert_allclose(vectors.cov, 1e-6 * np.eye(2) + 0.25 * separation**2 * np.ones((2, 2)), rtol=1e-9)


@pytest.mark.parametrize("log_weights", [[-0.3, 1.2, -np.inf], [[-0.3, 1.2, 0.1], [2.0, -np.inf, 0.5]]],
                         ids=["one", "batched"])
def test_a_given_log_normaliser_gives_the_mixture_computed_without_it(log_weights):
    """``log_norm=`` (the rules have it already) stands for the log-sum-exp the constructor would compute."""
    log_weights = np.asarray(log_weights)
    components = [NormalMeanVariance(-1.0, 0.5), NormalMeanVariance(0.5, 2.0), NormalMeanVariance(3.0, 1.0)]
    log_norm = np.log(np.sum(np.exp(log_weights), axis=-1))
    given = Mixture.create(log_weights, components, 0.4, log_norm)
    computed = Mixture.create(log_weights, components, 0.4)
    np.testing.assert_allclose(given.log_weights, computed.log_weights, rtol=1e-15, atol=0)
    np.testing.assert_allclose(given.weights.sum(axis=-1), 1.0, rtol=1e-15)
    assert given.batch_shape == computed.batch_shape


def test_a_given_log_normaliser_that_is_nan_raises():
    components = [NormalMeanVariance(-1.0, 0.5), NormalMeanVariance(0.5, 2.0)]
    with pytest.raises(ModelError, match="NaN"):
        Mixture.create([0.0, 0.0], components, None, np.nan)
