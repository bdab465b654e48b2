"""Categorical (one-hot values) against scipy.stats, Monte Carlo and exact sums."""
import numpy as np
import pytest
from scipy import stats

from fgraph.families import Categorical, ExponentialFamily, PointMass, product

# Monte Carlo checks allow 5 standard errors: a correct implementation fails
# with probability below 1e-6 per check, and the seeds are fixed anyway.
SAMPLE_COUNT = 200_000
STANDARD_ERRORS = 5.0

ONE_HOT = np.eye(4)


@pytest.mark.parametrize("p", [[0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.25, 0.25], [0.0, 0.5, 0.5, 0.0]])
def test_matches_scipy(p):
    categorical = Categorical(p)
    reference = stats.multinomial(1, p)
    np.testing.assert_allclose(categorical.logpdf(ONE_HOT), reference.logpmf(ONE_HOT), rtol=1e-12)
    np.testing.assert_allclose(categorical.mean, reference.mean(), rtol=1e-12)
    np.testing.assert_allclose(categorical.cov, reference.cov(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(categorical.var, np.diagonal(reference.cov()), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(categorical.entropy(), reference.entropy(), rtol=1e-12)
    # The generic A - <eta, E[T]> agrees, with 0 * log 0 = 0 for impossible categories.
    np.testing.assert_allclose(ExponentialFamily.entropy(categorical), reference.entropy(), rtol=1e-12)
    np.testing.assert_allclose(categorical.probabilities, p)


def test_logpdf_of_non_one_hot_values():
    categorical = Categorical([0.2, 0.3, 0.5])
    np.testing.assert_array_equal(
        categorical.logpdf([[0.5, 0.5, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 1.0]]),
        [-np.inf, -np.inf, -np.inf, np.log(0.5)],
    )
    assert Categorical([0.0, 1.0]).logpdf([1.0, 0.0]) == -np.inf


def test_mode_is_one_hot():
    categorical = Categorical([[0.2, 0.5, 0.3], [0.4, 0.2, 0.4]])
    np.testing.assert_array_equal(categorical.mode, [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])


def test_sampling_frequencies():
    categorical = Categorical([0.1, 0.0, 0.6, 0.3])
    samples = categorical.sample(np.random.default_rng(0), SAMPLE_COUNT)
    assert samples.shape == (SAMPLE_COUNT, 4)
    np.testing.assert_array_equal(samples.sum(axis=-1), 1.0)
    assert samples[:, 1].sum() == 0.0  # a category of probability zero is never drawn
    frequency_error = np.sqrt(categorical.var / SAMPLE_COUNT)
    assert np.all(np.abs(samples.mean(axis=0) - categorical.mean) <= STANDARD_ERRORS * frequency_error)


def test_product_matches_exact_sum():
    left = Categorical([0.1, 0.2, 0.3, 0.4], log_scale=0.2)
    right = Categorical([0.5, 0.0, 0.25, 0.25], log_scale=0.7)
    result = product(left, right)
    with np.errstate(divide="ignore"):
        joint = np.exp(left.logpdf(ONE_HOT) + right.logpdf(ONE_HOT))
    normaliser = joint.sum()
    np.testing.assert_allclose(result.log_scale, 0.9 + np.log(normaliser), rtol=1e-12)
    np.testing.assert_allclose(result.probabilities, joint / normaliser, rtol=1e-12)


def test_closed_form_product_equals_the_generic_exponential_family_product():
    """The dedicated Categorical product against natural parameters added (batched, with zeros and scales)."""
    from fgraph.families.product import _product_exponential_families

    rng = np.random.default_rng(5)
    left_p = rng.dirichlet(np.ones(4), size=(3, 2))
    left_p[0, 1, 2] = 0.0
    left_p /= left_p.sum(-1, keepdims=True)
    left = Categorical(left_p, log_scale=rng.normal(size=(3, 2)))
    right = Categorical(rng.dirichlet(np.ones(4), size=2), log_scale=rng.normal(size=2))
    closed, generic = product(left, right), _product_exponential_families(left, right)
    assert closed.batch_shape == generic.batch_shape == (3, 2)
    np.testing.assert_allclose(closed.probabilities, generic.probabilities, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(closed.log_scale, generic.log_scale, rtol=1e-12)


def test_point_mass_over_a_categorical_variable_is_one_hot():
    observation = PointMass([0.0, 0.0, 1.0], event_ndim=1)
    result = product(observation, Categorical([0.2, 0.3, 0.5]))
    np.testing.assert_allclose(result.log_scale, np.log(0.5))


def test_batch_behaviour():
    p = np.array([[0.2, 0.8], [0.5, 0.5], [0.9, 0.1]])
    categorical = Categorical(p, log_scale=[1.0, 2.0, 3.0])
    assert categorical.batch_shape == (3,)
    assert categorical.event_shape == (2,)
    np.testing.assert_allclose(categorical.logpdf([1.0, 0.0]), np.log(p[:, 0]))
    np.testing.assert_allclose(categorical[2].probabilities, [0.9, 0.1])
    np.testing.assert_allclose(categorical[2].log_scale, 3.0)
    assert categorical.entropy().shape == (3,)
    assert categorical.sample(np.random.default_rng(1), (5,)).shape == (5, 3, 2)
    broadcast = Categorical([0.3, 0.7]).broadcast_to((2, 3))
    assert broadcast.batch_shape == (2, 3)
    np.testing.assert_allclose(broadcast.probabilities, np.broadcast_to([0.3, 0.7], (2, 3, 2)))
    assert product(categorical, Categorical([0.3, 0.7])).batch_shape == (3,)


def test_repr():
    assert repr(Categorical([0.5, 0.5])) == "Categorical(p=[0.5, 0.5])"


@pytest.mark.parametrize("case", ["ordinary", "a-row-far-below", "impossible-categories", "large-logits"])
def test_from_natural_of_a_large_array_equals_the_row_wise_softmax(case):
    """Large arrays are normalised by one shift (fgraph.families.categorical._normalise_logits); p and the kept
    log p equal scipy's row-wise softmax and log-softmax, and so does the entropy read from the kept log p."""
    from scipy.special import entr, log_softmax, softmax

    rng = np.random.default_rng(11)
    logits = rng.normal(scale=30.0, size=(3000, 4))  # 12,000 numbers: above the size of the one-shift path
    if case == "a-row-far-below":
        logits[17] -= 2000.0  # its exponentials would all underflow after the common shift: the row-wise path
    elif case == "impossible-categories":
        logits[::3, 1] = -np.inf
    elif case == "large-logits":
        logits += 5000.0
    q = Categorical.from_natural((logits,))
    with np.errstate(divide="ignore", invalid="ignore"):
        expected_log = log_softmax(logits, axis=-1)
    np.testing.assert_allclose(q.probabilities, softmax(logits, axis=-1), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(q.natural_parameters()[0], expected_log, rtol=1e-12, atol=1e-12)
    # log p = logits − logsumexp carries an absolute error of about |logits| · 2⁻⁵² (1e-12 at 5000), and so does
    # the entropy of a nearly certain row
    np.testing.assert_allclose(q.entropy(), entr(softmax(logits, axis=-1)).sum(-1), rtol=1e-11,
                               atol=1e-15 * max(1.0, np.max(np.abs(logits[np.isfinite(logits)]))))
