"""GammaShapeLikelihood p(a) ∝ a^(α-1) e^(-β a) / Γ(a)^n: its quadrature against scipy's adaptive quadrature.

The family computes its normaliser and moments on a trapezoid grid in u = log a;
the references here integrate over a directly with ``scipy.integrate.quad``
(or use the closed forms of the gamma member n = 0).
"""
import math

import numpy as np
import pytest
from scipy import integrate, optimize
from scipy.special import digamma, gammaln

from fgraph.families import Gamma, GammaShapeLikelihood, NormalMeanVariance, PointMass, product
from fgraph.families.gamma_shape import expected_log_gamma

SAMPLE_COUNT = 100_000
STANDARD_ERRORS = 5.0


def log_unnormalised(a, alpha, beta, count):
    return (alpha - 1.0) * math.log(a) - beta * a - count * math.lgamma(a)


def reference(alpha, beta, count):
    """log ∫ f da and E[log a], E[a], E[a²], E[log Γ(a)] by adaptive quadrature over a (split at the mode)."""
    objective = lambda u: -log_unnormalised(math.exp(u), alpha, beta, count) - u  # density in u = log a
    peak_u = optimize.minimize_scalar(objective, bounds=(-30.0, 10.0), method="bounded", options={"xatol": 1e-10}).x
    shift = -objective(peak_u) - peak_u  # log f at the peak of the density in u: keeps the integrands near 1

    def integral(statistic):
        def integrand(a):
            return math.exp(log_unnormalised(a, alpha, beta, count) - shift) * statistic(a)
        pieces = [(0.0, math.exp(peak_u)), (math.exp(peak_u), np.inf)]
        return sum(integrate.quad(integrand, low, high, epsabs=0.0, epsrel=1e-12, limit=500)[0] for low, high in pieces)

    total = integral(lambda a: 1.0)
    return {
        "log_partition": shift + math.log(total),
        "mean_log": integral(math.log) / total,
        "mean": integral(lambda a: a) / total,
        "second_moment": integral(lambda a: a * a) / total,
        "mean_log_gamma": integral(math.lgamma) / total,
    }


# (α, β, n): a single observation's likelihood (α = 1), one with a positive linear term, a posterior
# after a Gamma(2, 1) prior and 10 observations, a sharp posterior (200 observations), a density
# unbounded at 0 (α + n - 1 < 0), fractional counts (node powers)
CASES = [(1.0, 0.3, 1.0), (1.0, -1.2, 1.0), (2.0, -4.5, 10.0), (3.0, -350.0, 200.0), (0.2, 0.5, 0.5), (1.5, 0.1, 0.3)]


@pytest.mark.parametrize("alpha, beta, count", CASES)
def test_normaliser_and_moments_match_adaptive_quadrature(alpha, beta, count):
    distribution = GammaShapeLikelihood(alpha, beta, count)
    expected = reference(alpha, beta, count)
    np.testing.assert_allclose(distribution.log_partition(), expected["log_partition"], rtol=0.0, atol=1e-10)
    np.testing.assert_allclose(distribution.mean_log, expected["mean_log"], rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(distribution.mean, expected["mean"], rtol=1e-9)
    np.testing.assert_allclose(distribution.second_moment, expected["second_moment"], rtol=1e-9)
    np.testing.assert_allclose(distribution.var, expected["second_moment"] - expected["mean"] ** 2, rtol=1e-7)
    np.testing.assert_allclose(distribution.mean_log_gamma, expected["mean_log_gamma"], rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(distribution.expected_statistics(),
                               [expected["mean_log"], expected["mean"], expected["mean_log_gamma"]], rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("alpha, beta, count", CASES[:3])
def test_logpdf_is_the_normalised_density(alpha, beta, count):
    distribution = GammaShapeLikelihood(alpha, beta, count, log_scale=0.7)
    total, _ = integrate.quad(lambda a: math.exp(distribution.logpdf(a)), 0.0, np.inf, epsabs=0.0, epsrel=1e-12, limit=200)
    np.testing.assert_allclose(total, 1.0, rtol=1e-9)
    a = np.array([0.3, 1.0, 2.7])
    expected = [log_unnormalised(x, alpha, beta, count) - reference(alpha, beta, count)["log_partition"] for x in a]
    np.testing.assert_allclose(distribution.logpdf(a), expected, rtol=0.0, atol=1e-10)
    assert distribution.logpdf(0.0) == -np.inf and distribution.logpdf(-1.0) == -np.inf


@pytest.mark.parametrize("shape, rate", [(0.7, 0.4), (2.0, 1.0), (9.0, 3.0)])
def test_the_gamma_member_has_the_gamma_closed_forms(shape, rate):
    distribution = GammaShapeLikelihood(shape, rate, 0.0)
    np.testing.assert_allclose(distribution.log_partition(), gammaln(shape) - shape * np.log(rate), rtol=0.0, atol=1e-11)
    np.testing.assert_allclose(distribution.mean_log, digamma(shape) - np.log(rate), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(distribution.mean, shape / rate, rtol=1e-11)
    np.testing.assert_allclose(distribution.var, shape / rate**2, rtol=1e-9)
    np.testing.assert_allclose(distribution.entropy(), Gamma(shape, rate).entropy(), rtol=1e-10)
    assert GammaShapeLikelihood.from_gamma(Gamma(shape, rate)).count == 0.0


def test_reactivemp_gamma_shape_likelihood_parameters():
    """ReactiveMP's GammaShapeLikelihood(p, γ) ∝ exp(γ a - p log Γ(a)) is the member (α = 1, β = -γ, n = p).

    Cases from ReactiveMP.jl test/rules/gamma_shape_rate/a_tests.jl: q_out = q_β = Gamma(1, 1)
    gives (p, γ) = (1, -2γ_E) (each E[log] is ψ(1) = -γ_E).
    """
    gamma_e = np.euler_gamma
    distribution = GammaShapeLikelihood(1.0, 2.0 * gamma_e, 1.0)
    np.testing.assert_allclose(distribution.natural_parameters(), (0.0, -2.0 * gamma_e, -1.0))
    expected = reference(1.0, 2.0 * gamma_e, 1.0)
    np.testing.assert_allclose(distribution.log_partition(), expected["log_partition"], atol=1e-10)


def test_product_with_a_gamma_prior_stays_in_the_family_with_its_normaliser():
    prior = Gamma(2.0, 1.5, log_scale=0.3)
    likelihood = GammaShapeLikelihood(1.0, -0.8, 3.0, log_scale=-0.2)
    for result in (product(prior, likelihood), product(likelihood, prior)):
        assert type(result) is GammaShapeLikelihood
        # natural parameters add: (1 + 0, -1.5 + 0.8, 0 - 3)
        np.testing.assert_allclose([result.alpha, result.beta, result.count], [2.0, 0.7, 3.0], rtol=1e-12)
        overlap, _ = integrate.quad(lambda a: math.exp(float(prior.logpdf(a) + likelihood.logpdf(a))), 0.0, np.inf,
                                    epsabs=0.0, epsrel=1e-12)
        np.testing.assert_allclose(result.log_scale, 0.3 - 0.2 + math.log(overlap), rtol=0.0, atol=1e-10)
    with pytest.raises(TypeError, match="different families"):
        product(likelihood, NormalMeanVariance(0.0, 1.0))


def test_product_with_point_mass():
    likelihood = GammaShapeLikelihood(1.0, -0.8, 3.0)
    result = product(PointMass(1.5), likelihood)
    assert isinstance(result, PointMass)
    np.testing.assert_allclose(result.log_scale, likelihood.logpdf(1.5))


@pytest.mark.parametrize("alpha, beta, count", [(2.0, -4.5, 10.0), (1.0, 0.3, 1.0), (4.0, 2.0, 0.0)])
def test_mode_maximises_the_density(alpha, beta, count):
    found = optimize.minimize_scalar(lambda a: -log_unnormalised(a, alpha, beta, count), bounds=(1e-6, 50.0),
                                     method="bounded", options={"xatol": 1e-12}).x
    np.testing.assert_allclose(GammaShapeLikelihood(alpha, beta, count).mode, found, rtol=1e-7)


def test_mode_is_zero_where_the_density_is_unbounded_there():
    # a^(α - 1) / Γ(a)^n ~ a^(α + n - 1) near 0: unbounded for α + n < 1
    assert GammaShapeLikelihood(0.2, 0.5, 0.5).mode == 0.0


def test_sampling_moments():
    distribution = GammaShapeLikelihood(2.0, -4.5, 10.0)
    samples = distribution.sample(np.random.default_rng(0), SAMPLE_COUNT)
    assert samples.shape == (SAMPLE_COUNT,)
    assert abs(samples.mean() - distribution.mean) < STANDARD_ERRORS * np.sqrt(distribution.var / SAMPLE_COUNT)
    logs = np.log(samples)
    assert abs(logs.mean() - distribution.mean_log) < STANDARD_ERRORS * logs.std() / np.sqrt(SAMPLE_COUNT)


def test_batch_equals_elements():
    alphas, betas, counts = np.array([1.0, 2.0, 3.0]), np.array([0.3, -4.5, -350.0]), np.array([1.0, 10.0, 200.0])
    batch = GammaShapeLikelihood(alphas, betas, counts, log_scale=[0.1, 0.2, 0.3])
    assert batch.batch_shape == (3,)
    for i in range(3):
        single = GammaShapeLikelihood(alphas[i], betas[i], counts[i])
        for name in ("mean", "mean_log", "mean_log_gamma", "second_moment", "mode"):
            np.testing.assert_allclose(getattr(batch, name)[i], getattr(single, name), rtol=1e-13, err_msg=name)
        np.testing.assert_allclose(batch.log_partition()[i], single.log_partition(), rtol=1e-13)
    assert type(batch.mean) is np.ndarray and type(GammaShapeLikelihood(1.0, 0.3, 1.0).mean) is np.float64
    assert batch[1].batch_shape == () and batch.broadcast_to((2, 3)).batch_shape == (2, 3)
    assert batch.sample(np.random.default_rng(1), (4,)).shape == (4, 3)


def test_improper_members_have_no_normaliser():
    assert np.isnan(GammaShapeLikelihood.log_partition_of((-2.5, 0.0, -1.0)))  # α + n = -1/2: a^(-3/2) near 0
    batch = GammaShapeLikelihood(np.array([1.0, 1.0]), np.array([0.5, -1.0]), 0.0, check=False)  # β <= 0 without data
    assert np.isfinite(batch.mean[0]) and np.isnan(batch.mean[1])


def test_too_vague_a_density_near_zero_is_refused():
    with pytest.raises(ValueError, match="too flat near zero"):
        GammaShapeLikelihood(0.01, 0.01, 0.0).mean


def test_expected_log_gamma_for_every_shape_marginal():
    np.testing.assert_allclose(expected_log_gamma(PointMass([0.5, 3.0])), gammaln([0.5, 3.0]))
    gamma = Gamma(3.0, 2.0)
    by_quadrature, _ = integrate.quad(lambda a: math.lgamma(a) * math.exp(float(gamma.logpdf(a))), 0.0, np.inf,
                                      epsabs=0.0, epsrel=1e-12)
    np.testing.assert_allclose(expected_log_gamma(gamma), by_quadrature, rtol=1e-9)
    likelihood = GammaShapeLikelihood(2.0, -4.5, 10.0)
    np.testing.assert_allclose(expected_log_gamma(likelihood), reference(2.0, -4.5, 10.0)["mean_log_gamma"], rtol=1e-9)
    with pytest.raises(TypeError, match="E\\[log Γ\\(shape\\)\\] is not available for a NormalMeanVariance"):
        expected_log_gamma(NormalMeanVariance(1.0, 1.0))


def test_repr():
    assert repr(GammaShapeLikelihood(1.0, -0.5, 2.0)) == "GammaShapeLikelihood(alpha=1, beta=-0.5, count=2)"
    assert "batch_shape=(2,)" in repr(GammaShapeLikelihood([1.0, 2.0], 0.5, 1.0))
