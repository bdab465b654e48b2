"""Bernoulli against scipy.stats, Monte Carlo and exact sums."""
import numpy as np
import pytest
from scipy import stats

from fgraph.families import Bernoulli, ExponentialFamily, PointMass, product

# Monte Carlo checks allow 5 standard errors: a correct implementation fails
# with probability below 1e-6 per check, and the seeds are fixed anyway.
SAMPLE_COUNT = 200_000
STANDARD_ERRORS = 5.0


@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 0.83, 1.0])
def test_matches_scipy(p):
    bernoulli = Bernoulli(p)
    reference = stats.bernoulli(p)
    x = np.array([0.0, 1.0])
    np.testing.assert_allclose(bernoulli.logpdf(x), reference.logpmf(x), rtol=1e-12)
    np.testing.assert_allclose(bernoulli.mean, reference.mean(), rtol=1e-12)
    np.testing.assert_allclose(bernoulli.var, reference.var(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(bernoulli.entropy(), reference.entropy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(bernoulli.probabilities, [1.0 - p, p])


def test_logpdf_outside_support():
    assert Bernoulli(0.3).logpdf(0.5) == -np.inf
    assert Bernoulli(0.3).logpdf(2.0) == -np.inf


def test_mode():
    np.testing.assert_array_equal(Bernoulli([0.2, 0.5, 0.7]).mode, [0.0, 0.0, 1.0])


def test_certain_outcomes_have_finite_exponential_family_quantities():
    # The non-minimal parameterisation: p = 0 and p = 1 are -inf entries, not inf - inf.
    for p in (0.0, 1.0):
        bernoulli = Bernoulli(p)
        assert bernoulli.log_partition() == 0.0
        # The generic entropy A - <eta, E[T]>, bypassing the closed form, needs 0 * log 0 = 0.
        assert ExponentialFamily.entropy(bernoulli) == 0.0
        np.testing.assert_allclose(Bernoulli.from_natural(bernoulli.natural_parameters()).p, p)
    certain = product(Bernoulli(1.0), Bernoulli(0.3))
    np.testing.assert_allclose(certain.p, 1.0)
    np.testing.assert_allclose(certain.log_scale, np.log(0.3))


def test_sampling_moments():
    bernoulli = Bernoulli(0.3)
    samples = bernoulli.sample(np.random.default_rng(0), SAMPLE_COUNT)
    assert samples.shape == (SAMPLE_COUNT,)
    assert set(np.unique(samples)) == {0.0, 1.0}
    mean_error = np.sqrt(bernoulli.var / SAMPLE_COUNT)
    assert abs(samples.mean() - bernoulli.mean) < STANDARD_ERRORS * mean_error
    np.testing.assert_array_equal(Bernoulli([0.0, 1.0]).sample(np.random.default_rng(1), 100), [[0.0, 1.0]] * 100)


def test_product_matches_exact_sum():
    left = Bernoulli(0.3, log_scale=0.5)
    right = Bernoulli(0.8, log_scale=-1.0)
    result = product(left, right)
    x = np.array([0.0, 1.0])
    joint = np.exp(left.logpdf(x) + right.logpdf(x))
    normaliser = joint.sum()
    np.testing.assert_allclose(result.log_scale, 0.5 - 1.0 + np.log(normaliser), rtol=1e-12)
    np.testing.assert_allclose(np.exp(result.logpdf(x)), joint / normaliser, rtol=1e-12)


def test_product_with_point_mass():
    result = product(Bernoulli(0.3), PointMass(1.0))
    np.testing.assert_allclose(result.log_scale, np.log(0.3))


def test_batch_behaviour():
    bernoulli = Bernoulli([0.1, 0.5, 0.9], log_scale=2.0)
    assert bernoulli.batch_shape == (3,)
    assert bernoulli.probabilities.shape == (3, 2)
    np.testing.assert_allclose(bernoulli.logpdf([1.0, 0.0, 1.0]), np.log([0.1, 0.5, 0.9]))
    np.testing.assert_allclose(bernoulli[2].p, 0.9)
    np.testing.assert_allclose(bernoulli[2].log_scale, 2.0)
    np.testing.assert_allclose(bernoulli[1:].p, [0.5, 0.9])
    assert bernoulli.broadcast_to((4, 3)).batch_shape == (4, 3)
    assert bernoulli.sample(np.random.default_rng(1), (2,)).shape == (2, 3)
    assert product(bernoulli, Bernoulli(0.4)).batch_shape == (3,)


def test_repr():
    assert repr(Bernoulli(0.25)) == "Bernoulli(p=0.25)"
