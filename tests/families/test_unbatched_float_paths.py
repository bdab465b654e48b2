"""Powers and products of one gamma or one normal run on Python floats; they equal the array path.

The array path (a batch of one, or ``ExponentialFamily.power`` called
directly) is the reference, and the log-scales are also checked against
numerical integration: ``log ∫ (e^s p(x))^w dx`` and ``log ∫ e^{s₁} p₁ e^{s₂} p₂ dx``.
"""
import numpy as np
import pytest
from scipy import integrate
from scipy.stats import gamma as gamma_density
from scipy.stats import norm

from fgraph.families import Mixture, NormalMeanPrecision, NormalMeanVariance, NormalWeightedMeanPrecision
from fgraph.families.base import ExponentialFamily
from fgraph.families.categorical import Categorical
from fgraph.families.gamma import Gamma, GammaShapeScale
from fgraph.families.product import product

GAMMAS = [(1.5, 0.7, 0.0), (3.0, 2.0, -1.3), (0.6, 4.0, 2.5)]  # shape, rate, log-scale
NORMALS = [(0.3, 2.0, 0.0), (-4.0, 0.01, 1.1), (10.0, 50.0, -0.4)]  # mean, variance, log-scale
EXPONENTS = [0.4, 2.5, 1e6]


@pytest.mark.parametrize("shape, rate, log_scale", GAMMAS)
@pytest.mark.parametrize("exponent", EXPONENTS)
def test_gamma_power_equals_the_array_path(shape, rate, log_scale, exponent):
    message = Gamma(shape, rate, log_scale=log_scale)
    fast = message.power(np.float64(exponent))
    reference = ExponentialFamily.power(message, exponent)
    assert fast.batch_shape == ()
    for got, expected in [(fast.shape, reference.shape), (fast.rate, reference.rate), (fast.log_scale, reference.log_scale)]:
        assert float(got) == pytest.approx(float(expected), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("shape, rate, log_scale", GAMMAS)
@pytest.mark.parametrize("exponent", [0.4, 1.5])  # (shape - 1) w > -1: the integral is finite
def test_gamma_power_log_scale_is_the_integral(shape, rate, log_scale, exponent):
    powered = Gamma(shape, rate, log_scale=log_scale).power(exponent)
    integrand = lambda x: (np.exp(log_scale) * gamma_density.pdf(x, shape, scale=1 / rate)) ** exponent  # noqa: E731
    value = sum(integrate.quad(integrand, lo, hi, limit=200)[0] for lo, hi in [(0, 1), (1, np.inf)])
    assert float(powered.log_scale) == pytest.approx(np.log(value), abs=1e-7)


@pytest.mark.parametrize("mean, var, log_scale", NORMALS)
@pytest.mark.parametrize("exponent", EXPONENTS)
def test_normal_power_equals_the_array_path(mean, var, log_scale, exponent):
    message = NormalMeanVariance(mean, var, log_scale=log_scale)
    fast = message.power(np.float64(exponent))
    reference = ExponentialFamily.power(message, exponent)
    assert float(fast.mean) == pytest.approx(float(reference.mean), rel=1e-14)
    assert float(fast.precision) == pytest.approx(float(reference.precision), rel=1e-14)
    # the array path subtracts two terms of size w ξ²/λ; the float path has them cancelled exactly
    assert float(fast.log_scale) == pytest.approx(float(reference.log_scale), rel=1e-12,
                                                  abs=1e-15 * exponent * mean**2 / var)


@pytest.mark.parametrize("mean, var, log_scale", NORMALS)
@pytest.mark.parametrize("exponent", [0.4, 2.5])
def test_normal_power_log_scale_is_the_integral(mean, var, log_scale, exponent):
    powered = NormalMeanVariance(mean, var, log_scale=log_scale).power(exponent)
    sd = np.sqrt(var)
    integrand = lambda x: (np.exp(log_scale) * norm.pdf(x, mean, sd)) ** exponent  # noqa: E731
    value = integrate.quad(integrand, mean - 40 * sd, mean + 40 * sd, points=[mean], limit=200)[0]
    assert float(powered.log_scale) == pytest.approx(np.log(value), abs=1e-8)


@pytest.mark.parametrize("first, second", [(GAMMAS[0], GAMMAS[1]), (GAMMAS[1], GAMMAS[2]), (GAMMAS[2], GAMMAS[0])])
def test_gamma_product_equals_the_batched_path_and_the_integral(first, second):
    a, b = Gamma(*first[:2], log_scale=first[2]), Gamma(*second[:2], log_scale=second[2])
    fast = product(a, b)
    batched = product(a.broadcast_to((1,)), b.broadcast_to((1,)))  # the generic array path
    assert fast.batch_shape == () and batched.batch_shape == (1,)
    for got, expected in [(fast.shape, batched.shape[0]), (fast.rate, batched.rate[0]),
                          (fast.log_scale, batched.log_scale[0])]:
        assert float(got) == pytest.approx(float(expected), rel=1e-13, abs=1e-13)
    integrand = lambda x: gamma_density.pdf(x, first[0], scale=1 / first[1]) * gamma_density.pdf(  # noqa: E731
        x, second[0], scale=1 / second[1])
    value = sum(integrate.quad(integrand, lo, hi, limit=200)[0] for lo, hi in [(0, 1), (1, np.inf)])
    assert float(fast.log_scale) == pytest.approx(first[2] + second[2] + np.log(value), abs=1e-8)


def test_a_power_without_an_integral_is_infinite():
    """Gamma(0.6, 4)^2.5 ∝ x^(-1) e^(-10x) near 0: its integral diverges, on either path."""
    assert float(Gamma(0.6, 4.0).power(2.5).log_scale) == np.inf
    assert float(ExponentialFamily.power(Gamma(0.6, 4.0), 2.5).log_scale) == np.inf


def test_a_gamma_subclass_and_an_improper_product_take_the_array_path():
    scale_form = GammaShapeScale(2.0, 0.5)  # rate 2
    assert float(product(scale_form, Gamma(3.0, 1.0)).rate) == pytest.approx(3.0)
    improper = product(Gamma(0.3, 1.0, check=False), Gamma(0.4, 1.0, check=False))  # shape 0.3 + 0.4 - 1 < 0
    assert float(improper.shape) == pytest.approx(-0.3)


@pytest.mark.parametrize("first, second", [(NORMALS[0], NORMALS[1]), (NORMALS[1], NORMALS[2])])
def test_normal_product_equals_the_batched_path(first, second):
    a, b = NormalMeanVariance(*first[:2], log_scale=first[2]), NormalMeanPrecision(second[0], 1 / second[1],
                                                                                  log_scale=second[2])
    fast, batched = product(a, b), product(a.broadcast_to((1,)), b.broadcast_to((1,)))
    assert float(fast.mean) == pytest.approx(float(batched.mean[0]), rel=1e-14)
    assert float(fast.var) == pytest.approx(float(batched.var[0]), rel=1e-14)
    assert float(fast.log_scale) == pytest.approx(float(batched.log_scale[0]), rel=1e-14)
    expected = first[2] + second[2] + norm.logpdf(first[0], second[0], np.sqrt(first[1] + second[1]))
    assert float(fast.log_scale) == pytest.approx(expected, rel=1e-13)


@pytest.mark.parametrize("make_b", [
    lambda mean, var, s: NormalMeanPrecision(mean, 1 / var, log_scale=s),
    lambda mean, var, s: NormalWeightedMeanPrecision(mean / var, 1 / var, log_scale=s),
    lambda mean, var, s: NormalMeanVariance(mean, var, log_scale=s),
], ids=["mean-precision", "weighted-mean-precision", "mean-variance"])
def test_normal_product_in_every_parameterisation(make_b):
    a, b = NormalWeightedMeanPrecision(1.2, 0.5, log_scale=0.3), make_b(-0.7, 3.0, -0.2)
    fast, batched = product(a, b), product(a.broadcast_to((1,)), b.broadcast_to((1,)))
    assert float(fast.mean) == pytest.approx(float(batched.mean[0]), rel=1e-14)
    assert float(fast.precision) == pytest.approx(0.5 + 1 / 3.0, rel=1e-15)
    assert float(fast.log_scale) == pytest.approx(0.1 + norm.logpdf(2.4, -0.7, np.sqrt(2.0 + 3.0)), rel=1e-14)


def test_mixture_moments_on_floats_equal_the_batched_path():
    components = [NormalMeanVariance(-1.0, 0.5), NormalMeanPrecision(2.0, 4.0), NormalWeightedMeanPrecision(3.0, 1.5)]
    one = Mixture.create(np.log([0.2, 0.5, 0.3]), components)
    batched = Mixture.create(np.log([[0.2, 0.5, 0.3]]), [c.broadcast_to((1,)) for c in components])
    means = np.array([-1.0, 2.0, 2.0])
    variances = np.array([0.5, 0.25, 1 / 1.5])
    weights = np.array([0.2, 0.5, 0.3])
    expected_mean = weights @ means
    assert float(one.mean) == pytest.approx(expected_mean, rel=1e-15)
    assert float(one.mean) == pytest.approx(float(batched.mean[0]), rel=1e-15)
    assert float(one.var) == pytest.approx(weights @ (variances + (means - expected_mean) ** 2), rel=1e-15)
    assert float(one.var) == pytest.approx(float(batched.var[0]), rel=1e-15)
    assert float(one.second_moment) == pytest.approx(weights @ (variances + means**2), rel=1e-15)


def pairwise(messages):
    """The reference fold: one ``product`` per message, each an object the next product reads."""
    result = messages[0]
    for message in messages[1:]:
        result = product(result, message)
    return result


PARAMETERISATIONS = [
    lambda mean, var, log_scale: NormalMeanVariance(mean, var, log_scale=log_scale),
    lambda mean, var, log_scale: NormalMeanPrecision(mean, 1.0 / var, log_scale=log_scale),
    lambda mean, var, log_scale: NormalWeightedMeanPrecision(mean / var, 1.0 / var, log_scale=log_scale),
]


@pytest.mark.parametrize("count", [3, 4])
@pytest.mark.parametrize("first", range(3))
def test_product_of_several_normals_equals_the_pairwise_fold(count, first):
    """Three or more unbatched normals fold on floats: the same numbers, to the last bit, as product by product."""
    from fgraph.families.product import product_all

    rng = np.random.default_rng(7 + count + 10 * first)
    messages = [PARAMETERISATIONS[(first + k) % 3](rng.normal(0, 3), rng.uniform(0.05, 5.0), rng.normal(0, 2))
                for k in range(count)]
    fast, reference = product_all(messages), pairwise(messages)
    assert type(fast) is NormalWeightedMeanPrecision and fast.batch_shape == ()
    assert float(fast.weighted_mean) == float(reference.weighted_mean)
    assert float(fast.precision) == float(reference.precision)
    assert float(fast.log_scale) == float(reference.log_scale)
    # and against the closed form of ∫ Π_k e^{s_k} N(x | m_k, v_k) dx (precisions and weighted means add)
    means = np.array([float(m.mean) for m in messages])
    variances = np.array([float(m.var) for m in messages])
    scales = np.array([float(m.log_scale) for m in messages])
    precision = np.sum(1 / variances)
    weighted_mean = np.sum(means / variances)
    log_integral = (scales.sum() - 0.5 * count * np.log(2 * np.pi) - 0.5 * np.log(variances).sum()
                    - 0.5 * np.sum(means**2 / variances) + 0.5 * weighted_mean**2 / precision
                    + 0.5 * np.log(2 * np.pi / precision))
    assert float(fast.precision) == pytest.approx(precision, rel=1e-13)
    assert float(fast.weighted_mean) == pytest.approx(weighted_mean, rel=1e-12, abs=1e-12)
    assert float(fast.log_scale) == pytest.approx(log_integral, rel=1e-12, abs=1e-12)


def test_product_of_several_normals_leaves_improper_ones_to_the_general_fold():
    from fgraph.families.product import product_all

    improper = NormalWeightedMeanPrecision(0.5, -0.25, check=False)  # negative precision: variance -4
    messages = [NormalMeanVariance(1.0, 2.0), improper, NormalMeanVariance(-1.0, 3.0, log_scale=0.3)]
    with np.errstate(invalid="ignore"):  # the normaliser of a non-positive total variance is NaN on both paths
        fast, reference = product_all(messages), pairwise(messages)
    assert float(fast.weighted_mean) == float(reference.weighted_mean)
    assert float(fast.precision) == float(reference.precision)
    np.testing.assert_equal(float(fast.log_scale), float(reference.log_scale))


@pytest.mark.parametrize("first, second", [
    (([0.5, 0.3, 0.2], 0.0), ([0.1, 0.6, 0.3], -2.5)),
    (([0.0, 0.25, 0.75], 1.2), ([0.4, 0.4, 0.2], 0.3)),
    (([1.0, 0.0], -0.7), ([0.2, 0.8], 0.0)),
])
def test_categorical_product_equals_the_batched_path_and_the_sum(first, second):
    """One categorical times another on floats: a batch of one (the array path) and Σ_k p_k q_k agree."""
    (p, s), (q, t) = first, second
    fast = product(Categorical(p, log_scale=s), Categorical(q, log_scale=t))
    reference = product(Categorical([p], log_scale=[s]), Categorical([q], log_scale=[t]))
    assert fast.batch_shape == () and reference.batch_shape == (1,)
    np.testing.assert_allclose(fast.probabilities, reference.probabilities[0], rtol=1e-15, atol=0)
    assert float(fast.log_scale) == pytest.approx(float(reference.log_scale[0]), rel=1e-15, abs=1e-15)
    joint = np.array(p) * np.array(q)
    np.testing.assert_allclose(fast.probabilities, joint / joint.sum(), rtol=1e-15, atol=0)
    assert float(fast.log_scale) == pytest.approx(s + t + np.log(joint.sum()), rel=1e-15, abs=1e-15)


def test_categorical_product_of_disjoint_supports_takes_the_array_path():
    """No common category: the array path's -inf log-scale (and NaN probabilities), not a division by zero."""
    with np.errstate(invalid="ignore"):
        result = product(Categorical([1.0, 0.0]), Categorical([0.0, 1.0]))
    assert float(result.log_scale) == -np.inf


def test_an_unbatched_gamma_with_zero_log_scale_is_already_normalised():
    """``Gamma.unbatched`` shares the zero log-scale, so ``normalised()`` returns the gamma itself, not a copy."""
    plain = Gamma.unbatched(2.0, 1.5, 0.0)
    assert plain.normalised() is plain
    scaled = Gamma.unbatched(2.0, 1.5, -0.7)
    assert float(scaled.log_scale) == -0.7
    assert scaled.normalised() is not scaled and float(scaled.normalised().log_scale) == 0.0
    assert float(scaled.normalised().shape) == 2.0 and float(scaled.normalised().rate) == 1.5


@pytest.mark.parametrize("shape, rate, log_scale", GAMMAS + [(250.0, 1e-3, 0.0)])
def test_gamma_entropy_on_floats_equals_the_array_path_and_quadrature(shape, rate, log_scale):
    one = Gamma(shape, rate, log_scale=log_scale)
    fast = one.entropy()
    reference = Gamma(np.array([shape]), np.array([rate])).entropy()[0]
    assert type(fast) is np.float64
    assert float(fast) == pytest.approx(float(reference), rel=1e-13, abs=1e-13)
    assert float(fast) == pytest.approx(float(gamma_density.entropy(shape, scale=1 / rate)), rel=1e-10, abs=1e-10)
    # ψ(shape) is kept for mean_log as well: reading it first changes nothing
    again = Gamma(shape, rate)
    assert float(again.mean_log) == pytest.approx(float(Gamma(np.array([shape]), np.array([rate])).mean_log[0]),
                                                  rel=1e-14, abs=1e-14)
    assert again.entropy() == fast


@pytest.mark.parametrize("mean, var, log_scale", NORMALS)
def test_normal_entropy_on_floats_equals_the_array_path(mean, var, log_scale):
    for one in (NormalMeanVariance(mean, var, log_scale=log_scale), NormalWeightedMeanPrecision(mean / var, 1 / var)):
        fast = one.entropy()
        reference = NormalMeanVariance(np.array([mean]), np.array([var])).entropy()[0]
        assert type(fast) is np.float64
        assert float(fast) == pytest.approx(float(reference), rel=1e-14)
        assert float(fast) == pytest.approx(float(norm.entropy(mean, np.sqrt(var))), rel=1e-12)
