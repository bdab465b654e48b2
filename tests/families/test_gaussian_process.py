"""The Gaussian-process families: conditioning in moment form against the dense formulas, the jitter policy."""
import warnings

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from fgraph.errors import JitterWarning, ModelError
from fgraph.families import MvNormalMeanCovariance
from fgraph.families.gaussian_process import (
    JITTER_LADDER, GaussianProcessPosterior, GaussianProcessPrior, MvNormalDiagonal, condition, kernel_cholesky,
)
from fgraph.families.kernels import ExponentiatedQuadratic

RNG = np.random.default_rng(11)
N = 7
INPUTS = RNG.normal(size=(N, 2))
K = ExponentiatedQuadratic(1.4, 0.9)(INPUTS)
MEAN = RNG.normal(size=N)
TARGETS = RNG.normal(size=N)
NOISE = RNG.uniform(0.1, 0.6, size=N)


def _dense_posterior(prior_mean, prior_cov, targets, noise_cov):
    """The textbook product through inverses (fine at N = 7): precision sum, and the normaliser as a density."""
    precision = np.linalg.inv(prior_cov) + np.linalg.inv(noise_cov)
    cov = np.linalg.inv(precision)
    mean = cov @ (np.linalg.solve(prior_cov, prior_mean) + np.linalg.solve(noise_cov, targets))
    log_z = multivariate_normal(prior_mean, prior_cov + noise_cov).logpdf(targets)
    return mean, cov, log_z


@pytest.mark.parametrize("observations", [
    pytest.param(MvNormalDiagonal(TARGETS, NOISE, log_scale=-0.3), id="diagonal"),
    pytest.param(MvNormalMeanCovariance(TARGETS, np.diag(NOISE) + 0.05, log_scale=-0.3), id="dense"),
])
def test_conditioning_equals_the_dense_product(observations):
    prior = GaussianProcessPrior(MEAN, K, log_scale=0.2)
    posterior = prior * observations
    assert isinstance(posterior, GaussianProcessPosterior)
    mean, cov, log_z = _dense_posterior(MEAN, K, TARGETS, observations.cov)
    np.testing.assert_allclose(posterior.mean, mean, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(posterior.cov, cov, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(posterior.var, np.diag(cov), rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(posterior.log_scale, 0.2 - 0.3 + log_z, rtol=1e-12)
    np.testing.assert_allclose((observations * prior).mean, mean, rtol=1e-9, atol=1e-11)  # both orders


def test_batched_conditioning_equals_one_at_a_time():
    means = np.stack([MEAN, -MEAN])
    targets = np.stack([TARGETS, 2 * TARGETS])
    noise = np.stack([NOISE, NOISE[::-1]])
    batched = condition(GaussianProcessPrior(means, K), MvNormalDiagonal(targets, noise))
    for b in range(2):
        single = condition(GaussianProcessPrior(means[b], K), MvNormalDiagonal(targets[b], noise[b]))
        np.testing.assert_allclose(batched.mean[b], single.mean, rtol=1e-13)
        np.testing.assert_allclose(batched.cov[b], single.cov, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(batched.log_scale[b], single.log_scale, rtol=1e-13)
        np.testing.assert_allclose(batched.weights[b], single.weights, rtol=1e-12)


def test_posterior_densities_and_solves():
    posterior = condition(GaussianProcessPrior(MEAN, K), MvNormalDiagonal(TARGETS, NOISE))
    total = K + np.diag(NOISE)
    np.testing.assert_allclose(posterior.weights, np.linalg.solve(total, TARGETS - MEAN), rtol=1e-10)
    right = RNG.normal(size=(N, 3))
    np.testing.assert_allclose(posterior.solve(right), np.linalg.solve(total, right), rtol=1e-10)
    np.testing.assert_allclose(posterior.log_det_evidence_cov(), np.linalg.slogdet(total)[1], rtol=1e-12)
    point = RNG.normal(size=N)
    np.testing.assert_allclose(posterior.logpdf(point),
                               multivariate_normal(posterior.mean, posterior.cov).logpdf(point), rtol=1e-9)


def test_diagonal_normal_is_the_dense_normal_with_a_diagonal():
    diagonal = MvNormalDiagonal(TARGETS, NOISE)
    dense = MvNormalMeanCovariance(TARGETS, np.diag(NOISE))
    point = RNG.normal(size=N)
    np.testing.assert_allclose(diagonal.logpdf(point), dense.logpdf(point), rtol=1e-13)
    np.testing.assert_allclose(diagonal.entropy(), dense.entropy(), rtol=1e-13)
    np.testing.assert_allclose(diagonal.precision, dense.precision, rtol=1e-13)
    np.testing.assert_allclose(diagonal.second_moment, dense.second_moment, rtol=1e-13)
    with pytest.raises(ModelError, match="variances positive"):
        MvNormalDiagonal(TARGETS, -NOISE)


def test_jitter_is_zero_for_a_definite_matrix_and_reported_when_needed():
    factor, jitter = kernel_cholesky(K + 0.1 * np.eye(N), "K")
    assert jitter == 0.0
    np.testing.assert_allclose(factor @ factor.T, K + 0.1 * np.eye(N), rtol=1e-12)
    rank_one = np.outer(np.ones(N), np.ones(N))  # singular: needs the ladder
    with pytest.warns(JitterWarning, match="jitter"):
        factor, jitter = kernel_cholesky(rank_one, "the kernel matrix of 'f'")
    assert jitter in [c * 1.0 for c in JITTER_LADDER[1:]]
    np.testing.assert_allclose(factor @ factor.T, rank_one + jitter * np.eye(N), rtol=1e-12, atol=1e-15)


def test_fixed_jitter_is_used_as_given_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        factor, jitter = kernel_cholesky(np.ones((3, 3)), "K", jitter=1e-3)
    assert jitter == 1e-3


def test_an_indefinite_matrix_is_an_error_naming_it():
    with pytest.raises(ModelError, match="the kernel matrix of 'f' is not positive definite"):
        kernel_cholesky(-np.eye(3), "the kernel matrix of 'f'")
    with pytest.raises(ModelError, match="jitter must be"):
        kernel_cholesky(np.eye(3), "K", jitter=-1.0)


def test_prior_density_uses_its_jitter():
    prior = GaussianProcessPrior(np.zeros(N), K + 1e-3 * np.eye(N))
    point = RNG.normal(size=N)
    np.testing.assert_allclose(prior.logpdf(point), multivariate_normal(np.zeros(N), prior.cov).logpdf(point),
                               rtol=1e-10)
    assert prior.jitter == 0.0


def test_a_likelihood_with_flat_directions_takes_the_natural_parameter_product():
    from fgraph.families import GaussianLikelihood

    row = RNG.normal(size=N)
    likelihood = GaussianLikelihood(2.0 * row, np.outer(row, row))  # one observation of rowᵀf = 2, unit noise
    posterior = GaussianProcessPrior(MEAN, K) * likelihood
    precision = np.linalg.inv(K) + np.outer(row, row)
    cov = np.linalg.inv(precision)
    np.testing.assert_allclose(posterior.cov, cov, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(posterior.mean, cov @ (np.linalg.solve(K, MEAN) + 2.0 * row), rtol=1e-8, atol=1e-10)
