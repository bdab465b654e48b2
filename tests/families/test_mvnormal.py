"""Multivariate normals against scipy.stats, Monte Carlo and the closed-form Gaussian product."""
import numpy as np
import pytest
from scipy import stats

from fgraph.equality import EqualityNode
from fgraph.families import (
    GaussianLikelihood,
    MultivariateNormal,
    MvNormalMeanCovariance,
    MvNormalMeanPrecision,
    MvNormalWeightedMeanPrecision,
    PointMass,
    product,
)

# Monte Carlo checks allow 5 standard errors: a correct implementation fails
# with probability below 1e-6 per check, and the seeds are fixed anyway.
SAMPLE_COUNT = 200_000
STANDARD_ERRORS = 5.0

MEAN = np.array([1.0, -2.0, 0.5])
COV = np.array([[2.0, 0.6, -0.3], [0.6, 1.0, 0.2], [-0.3, 0.2, 0.5]])
PRECISION = np.linalg.inv(COV)


def parameterisations(mean=MEAN, cov=COV):
    precision = np.linalg.inv(cov)
    precision = 0.5 * (precision + precision.T)
    return [
        MvNormalMeanCovariance(mean, cov),
        MvNormalMeanPrecision(mean, precision),
        MvNormalWeightedMeanPrecision(precision @ mean, precision),
    ]


@pytest.mark.parametrize("normal", parameterisations(), ids=lambda normal: type(normal).__name__)
def test_matches_scipy(normal):
    reference = stats.multivariate_normal(MEAN, COV)
    x = np.random.default_rng(5).normal(size=(4, 3))
    np.testing.assert_allclose(normal.logpdf(x), reference.logpdf(x), rtol=1e-10)
    np.testing.assert_allclose(normal.mean, MEAN, rtol=1e-10)
    np.testing.assert_allclose(normal.mode, MEAN, rtol=1e-10)
    np.testing.assert_allclose(normal.cov, COV, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(normal.var, np.diag(COV), rtol=1e-10)
    np.testing.assert_allclose(normal.precision, PRECISION, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(normal.weighted_mean, PRECISION @ MEAN, rtol=1e-10)
    np.testing.assert_allclose(normal.second_moment, COV + np.outer(MEAN, MEAN), rtol=1e-10)
    np.testing.assert_allclose(normal.entropy(), reference.entropy(), rtol=1e-12)
    assert normal.dim == 3
    assert normal.family() is MultivariateNormal
    assert type(MultivariateNormal.from_natural(normal.natural_parameters())) is MvNormalWeightedMeanPrecision


@pytest.mark.parametrize("normal", parameterisations()[:2], ids=lambda normal: type(normal).__name__)
def test_sampling_moments(normal):
    # Covariance-side and precision-side colouring of white noise are different code paths.
    samples = normal.sample(np.random.default_rng(0), SAMPLE_COUNT)
    assert samples.shape == (SAMPLE_COUNT, 3)
    mean_error = np.sqrt(np.diag(COV) / SAMPLE_COUNT)
    assert np.all(np.abs(samples.mean(axis=0) - MEAN) < STANDARD_ERRORS * mean_error)
    centred = samples - samples.mean(axis=0)
    products = centred[:, :, None] * centred[:, None, :]
    cov_error = products.std(axis=0) / np.sqrt(SAMPLE_COUNT)
    assert np.all(np.abs(products.mean(axis=0) - COV) < STANDARD_ERRORS * cov_error)


def test_product_matches_closed_form():
    mean_left, cov_left = MEAN, COV
    mean_right, cov_right = np.array([0.0, 1.0, -1.0]), np.array([[1.0, 0.0, 0.3], [0.0, 2.0, 0.0], [0.3, 0.0, 1.5]])
    left = MvNormalMeanCovariance(mean_left, cov_left, log_scale=0.25)
    right = MvNormalMeanPrecision(mean_right, np.linalg.inv(cov_right), log_scale=-1.5)
    result = product(left, right)
    # N(x; m1, S1) N(x; m2, S2) = N(m1; m2, S1 + S2) N(x; m, S),
    # S = (S1^-1 + S2^-1)^-1, m = S (S1^-1 m1 + S2^-1 m2).
    cov = np.linalg.inv(np.linalg.inv(cov_left) + np.linalg.inv(cov_right))
    mean = cov @ (np.linalg.solve(cov_left, mean_left) + np.linalg.solve(cov_right, mean_right))
    log_normaliser = stats.multivariate_normal(mean_right, cov_left + cov_right).logpdf(mean_left)
    np.testing.assert_allclose(result.mean, mean, rtol=1e-10)
    np.testing.assert_allclose(result.cov, cov, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(result.log_scale, 0.25 - 1.5 + log_normaliser, rtol=1e-10)


def test_product_with_point_mass():
    normal = MvNormalMeanCovariance(MEAN, COV)
    result = product(normal, PointMass([0.0, 0.0, 0.0], event_ndim=1))
    np.testing.assert_allclose(result.log_scale, stats.multivariate_normal(MEAN, COV).logpdf(np.zeros(3)))


def test_batch_behaviour():
    means = np.array([[0.0, 0.0], [1.0, 2.0], [-1.0, 3.0]])
    cov = np.array([[1.0, 0.5], [0.5, 2.0]])
    normal = MvNormalMeanCovariance(means, cov, log_scale=[0.0, 1.0, 2.0])
    assert normal.batch_shape == (3,)
    assert normal.event_shape == (2,)
    assert normal.cov.shape == (3, 2, 2)
    x = np.array([0.5, 0.5])
    np.testing.assert_allclose(normal.logpdf(x), [stats.multivariate_normal(m, cov).logpdf(x) for m in means])
    single = normal[1]
    assert single.batch_shape == ()
    np.testing.assert_allclose(single.mean, [1.0, 2.0])
    np.testing.assert_allclose(single.cov, cov)
    np.testing.assert_allclose(single.log_scale, 1.0)
    broadcast = MvNormalMeanCovariance([0.0, 1.0], cov).broadcast_to((2, 3))
    assert broadcast.batch_shape == (2, 3)
    np.testing.assert_allclose(broadcast.mean, np.broadcast_to([0.0, 1.0], (2, 3, 2)), atol=1e-14)
    assert normal.sample(np.random.default_rng(1), (4,)).shape == (4, 3, 2)
    assert normal.entropy().shape == (3,)
    assert product(normal, MvNormalMeanPrecision([0.0, 0.0], np.eye(2))).batch_shape == (3,)


def test_repr():
    assert repr(MvNormalMeanCovariance(MEAN, COV)) == "MvNormalMeanCovariance(dim=3, batch_shape=())"


# ------------------------------------------------------------ Gaussian likelihoods (not normalisable)
LIKELIHOOD_POINTS = np.random.default_rng(9).normal(size=(6, 3))


def rank_one(x, mean, var):
    """N(xᵀw | mean, var) as a function of w ∈ R³, written from its definition."""
    x = np.asarray(x, dtype=float)
    coefficient = 1.5 * np.log(2 * np.pi) - 0.5 * np.log(2 * np.pi * var) - mean**2 / (2 * var)
    return GaussianLikelihood(x * mean / var, np.outer(x, x) / var, coefficient)


def log_rank_one(x, mean, var, points):
    return -0.5 * np.log(2 * np.pi * var) - (points @ np.asarray(x) - mean) ** 2 / (2 * var)


def log_value(message, points):
    """log of the scaled function a message stands for: log_value, or log_scale + logpdf for a proper one."""
    if isinstance(message, GaussianLikelihood):
        return message.log_value(points)
    return message.log_scale + message.logpdf(points)


ROWS = [([1.0, 2.0, 0.0], 0.5, 2.0), ([0.0, 1.0, -1.0], -1.0, 0.5), ([1.0, 0.0, 1.0], 2.0, 1.0)]


def test_products_of_likelihoods_are_pointwise_products_and_become_proper_at_full_rank():
    """Two rank-one messages in R³ stay a likelihood; the third makes a proper normal; values multiply exactly."""
    messages = [rank_one(*row) for row in ROWS]
    expected = [log_rank_one(*row, LIKELIHOOD_POINTS) for row in ROWS]
    two = product(messages[0], messages[1])
    assert isinstance(two, GaussianLikelihood)
    np.testing.assert_allclose(log_value(two, LIKELIHOOD_POINTS), expected[0] + expected[1], rtol=1e-12)
    three = product(two, messages[2])
    assert not isinstance(three, GaussianLikelihood)
    np.testing.assert_allclose(log_value(three, LIKELIHOOD_POINTS), sum(expected), rtol=1e-10)
    prior = MvNormalMeanCovariance([0.0, 1.0, 0.0], np.eye(3) * 2.0, log_scale=0.2)
    posterior = product(messages[0], prior)
    np.testing.assert_allclose(log_value(posterior, LIKELIHOOD_POINTS),
                               expected[0] + 0.2 + prior.logpdf(LIKELIHOOD_POINTS), rtol=1e-12)


def test_plate_reduction_of_likelihoods_equals_their_sequential_product():
    """An equality node with a prior socket and a plate socket of three rank-one messages."""
    prior = MvNormalMeanCovariance([0.0, 1.0, 0.0], np.eye(3) * 2.0, log_scale=-0.3)
    plate = GaussianLikelihood(np.stack([rank_one(*row).weighted_mean for row in ROWS]),
                               np.stack([rank_one(*row).precision for row in ROWS]),
                               np.array([float(rank_one(*row).log_scale) for row in ROWS]))
    node = EqualityNode([(), (3,)], ())
    node.set_messages([prior, plate])
    sequential = product(product(product(prior, rank_one(*ROWS[0])), rank_one(*ROWS[1])), rank_one(*ROWS[2]))
    np.testing.assert_allclose(node.total().mean, sequential.mean, rtol=1e-12)
    np.testing.assert_allclose(node.total().log_scale, sequential.log_scale, rtol=1e-12)
    # the message back to the prior is the product of the three likelihoods alone: proper here (rank 3)
    back = node.outgoing(0)
    np.testing.assert_allclose(log_value(back, LIKELIHOOD_POINTS),
                               sum(log_rank_one(*row, LIKELIHOOD_POINTS) for row in ROWS), rtol=1e-10)


def test_power_of_a_likelihood_is_the_power_of_its_values():
    message = rank_one(*ROWS[0])
    np.testing.assert_allclose(log_value(message.power(0.3), LIKELIHOOD_POINTS),
                               0.3 * log_rank_one(*ROWS[0], LIKELIHOOD_POINTS), rtol=1e-12)


def test_a_likelihood_has_no_moments_and_says_what_to_do():
    message = rank_one(*ROWS[0])
    for moment in ("mean", "cov", "mode", "second_moment"):
        with pytest.raises(ValueError, match="multiply it with a proper prior"):
            getattr(message, moment)
    with pytest.raises(ValueError, match="multiply it with a proper prior"):
        message.entropy()


@pytest.mark.parametrize("make", [lambda m, c: parameterisations(m, c)[k] for k in range(3)],
                         ids=["MeanCovariance", "MeanPrecision", "WeightedMeanPrecision"])
def test_derived_moments_are_kept_per_distribution_and_equal_a_fresh_computation(make):
    """Moments derived from the stored parameters are computed once per distribution (they are read several
    times per sweep) and are those of that distribution: a second one with other parameters has its own."""
    first, second = make(MEAN, COV), make(-MEAN, 2.0 * COV)
    for name in ("mean", "cov", "precision", "weighted_mean", "second_moment"):
        kept = getattr(first, name)
        assert getattr(first, name) is kept
        np.testing.assert_allclose(getattr(second, name), getattr(make(-MEAN, 2.0 * COV), name), rtol=1e-12)
    np.testing.assert_allclose(first.mean, MEAN, rtol=1e-12)
    np.testing.assert_allclose(second.mean, -MEAN, rtol=1e-12)
    np.testing.assert_allclose(first.cov, COV, rtol=1e-12)
    np.testing.assert_allclose(second.cov, 2.0 * COV, rtol=1e-12)
    np.testing.assert_allclose(first.precision, PRECISION, rtol=1e-10)
    np.testing.assert_allclose(second.second_moment, 2.0 * COV + np.outer(MEAN, MEAN), rtol=1e-12)
