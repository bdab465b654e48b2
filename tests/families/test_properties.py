"""Algebraic and statistical properties that every exponential family must satisfy.

Each family supplies a strategy drawing ``count`` members with a common event
shape. Parameter ranges keep products of three members and powers with
exponents in ``EXPONENTS`` valid (e.g. ``shape >= 0.7`` keeps the Gamma shape
``w (shape - 1) + 1`` positive for ``w <= 3.24``) and keep matrices well
conditioned, so that the 1e-9 tolerances measure the algebra, not rounding.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fgraph.families import (
    Bernoulli,
    Beta,
    Categorical,
    Dirichlet,
    Gamma,
    GammaShapeLikelihood,
    GammaShapeScale,
    InverseGamma,
    MvNormalMeanCovariance,
    MvNormalMeanPrecision,
    MvNormalWeightedMeanPrecision,
    NormalMeanPrecision,
    NormalMeanVariance,
    NormalWeightedMeanPrecision,
    Wishart,
    product,
)

PROPERTY_SETTINGS = settings(max_examples=50, deadline=None, database=None)
TOLERANCE = 1e-9
EXPONENTS = st.floats(0.3, 1.8)
LOG_SCALES = st.floats(-3.0, 3.0)

# Entropy against Monte Carlo: 5 standard errors of the mean of -log p(x).
ENTROPY_SAMPLE_COUNT = 20_000
STANDARD_ERRORS = 5.0


# ---------------------------------------------------------------- strategies
def spd_matrices(dim, jitter):
    """Symmetric positive-definite ``dim x dim`` matrices ``B B^T + jitter I`` (eigenvalues >= jitter)."""
    factors = arrays(float, (dim, dim), elements=st.floats(-1.5, 1.5))
    return factors.map(lambda factor: factor @ factor.T + jitter * np.eye(dim))


@st.composite
def univariate_normals(draw, count):
    members = []
    for _ in range(count):
        kind = draw(st.sampled_from([NormalMeanVariance, NormalMeanPrecision, NormalWeightedMeanPrecision]))
        members.append(kind(draw(st.floats(-5.0, 5.0)), draw(st.floats(0.1, 10.0)), log_scale=draw(LOG_SCALES)))
    return members


@st.composite
def gammas(draw, count):
    members = []
    for _ in range(count):
        shape, rate = draw(st.floats(0.7, 8.0)), draw(st.floats(0.2, 5.0))
        if draw(st.booleans()):
            members.append(Gamma(shape, rate, log_scale=draw(LOG_SCALES)))
        else:
            members.append(GammaShapeScale(shape, 1.0 / rate, log_scale=draw(LOG_SCALES)))
    return members


@st.composite
def inverse_gammas(draw, count):
    return [
        InverseGamma(draw(st.floats(0.7, 8.0)), draw(st.floats(0.2, 5.0)), log_scale=draw(LOG_SCALES))
        for _ in range(count)
    ]


@st.composite
def gamma_shape_likelihoods(draw, count):
    """Members with ``count`` in [0.5, 5] observations; ``alpha + count >= 1.2`` keeps powers down to 0.3 proper."""
    members = []
    for _ in range(count):
        n = draw(st.floats(0.5, 5.0))
        alpha, beta = draw(st.floats(max(1.2 - n, 0.3), 4.0)), draw(st.floats(-3.0, 3.0))
        members.append(GammaShapeLikelihood(alpha, beta, n, log_scale=draw(LOG_SCALES)))
    return members


@st.composite
def betas(draw, count):
    return [
        Beta(draw(st.floats(0.7, 8.0)), draw(st.floats(0.7, 8.0)), log_scale=draw(LOG_SCALES))
        for _ in range(count)
    ]


@st.composite
def bernoullis(draw, count):
    return [Bernoulli(draw(st.floats(0.01, 0.99)), log_scale=draw(LOG_SCALES)) for _ in range(count)]


@st.composite
def categoricals(draw, count):
    category_count = draw(st.integers(2, 4))
    members = []
    for _ in range(count):
        weights = draw(arrays(float, (category_count,), elements=st.floats(0.01, 1.0)))
        members.append(Categorical(weights / weights.sum(), log_scale=draw(LOG_SCALES)))
    return members


@st.composite
def dirichlets(draw, count):
    category_count = draw(st.integers(2, 4))
    return [
        Dirichlet(draw(arrays(float, (category_count,), elements=st.floats(0.7, 8.0))), log_scale=draw(LOG_SCALES))
        for _ in range(count)
    ]


@st.composite
def multivariate_normals(draw, count):
    dim = draw(st.integers(1, 3))
    members = []
    for _ in range(count):
        mean = draw(arrays(float, (dim,), elements=st.floats(-3.0, 3.0)))
        matrix = draw(spd_matrices(dim, jitter=0.3))
        kind = draw(st.sampled_from([MvNormalMeanCovariance, MvNormalMeanPrecision, MvNormalWeightedMeanPrecision]))
        members.append(kind(mean, matrix, log_scale=draw(LOG_SCALES)))
    return members


@st.composite
def wisharts(draw, count):
    dim = draw(st.integers(1, 3))
    return [
        Wishart(draw(st.floats(dim + 0.7, dim + 8.0)), draw(spd_matrices(dim, jitter=0.3)), log_scale=draw(LOG_SCALES))
        for _ in range(count)
    ]


FAMILIES = {
    "univariate_normal": univariate_normals,
    "gamma": gammas,
    "inverse_gamma": inverse_gammas,
    "gamma_shape_likelihood": gamma_shape_likelihoods,
    "beta": betas,
    "bernoulli": bernoullis,
    "categorical": categoricals,
    "dirichlet": dirichlets,
    "multivariate_normal": multivariate_normals,
    "wishart": wisharts,
}


# ------------------------------------------------------------------- helpers
def assert_close(actual, expected, rtol=TOLERANCE):
    """Relative closeness measured against the largest entry, so entries near zero are not held to a relative standard."""
    actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    atol = rtol * max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


def assert_same_message(actual, expected, rtol=TOLERANCE):
    """Same family, natural parameters and log-scale.

    For the non-minimal Bernoulli and Categorical, ``natural_parameters()`` is
    the log of the stored (normalised) probabilities, so it is canonical too.
    """
    assert actual.family() is expected.family()
    for eta_actual, eta_expected in zip(actual.natural_parameters(), expected.natural_parameters()):
        assert_close(eta_actual, eta_expected, rtol)
    assert_close(actual.log_scale, expected.log_scale, rtol)


def moments(distribution):
    """Mean, (co)variance and expected sufficient statistics, as a flat list of arrays."""
    result = [distribution.mean, distribution.var, *distribution.expected_statistics()]
    if hasattr(distribution, "cov"):
        result.append(distribution.cov)
    return result


# ------------------------------------------------------------------ products
@pytest.mark.parametrize("family", FAMILIES)
@PROPERTY_SETTINGS
@given(data=st.data())
def test_product_is_commutative(family, data):
    left, right = data.draw(FAMILIES[family](2))
    assert_same_message(product(left, right), product(right, left))


@pytest.mark.parametrize("family", FAMILIES)
@PROPERTY_SETTINGS
@given(data=st.data())
def test_product_is_associative(family, data):
    first, second, third = data.draw(FAMILIES[family](3))
    assert_same_message(product(product(first, second), third), product(first, product(second, third)))


# ---------------------------------------------------------------- round trip
@pytest.mark.parametrize("family", FAMILIES)
@PROPERTY_SETTINGS
@given(data=st.data())
def test_natural_parameter_round_trip(family, data):
    (distribution,) = data.draw(FAMILIES[family](1))
    rebuilt = distribution.from_natural(distribution.natural_parameters(), distribution.log_scale)
    for actual, expected in zip(moments(rebuilt), moments(distribution)):
        assert_close(actual, expected)
    assert_close(rebuilt.log_scale, distribution.log_scale)
    assert_close(rebuilt.entropy(), distribution.entropy())


# ------------------------------------------------------------------- entropy
@pytest.mark.parametrize("family", FAMILIES)
@PROPERTY_SETTINGS
@given(data=st.data())
def test_entropy_matches_monte_carlo(family, data):
    (distribution,) = data.draw(FAMILIES[family](1))
    samples = distribution.sample(np.random.default_rng(0), ENTROPY_SAMPLE_COUNT)
    log_density = distribution.logpdf(samples)
    estimate = -log_density.mean()
    standard_error = log_density.std() / np.sqrt(ENTROPY_SAMPLE_COUNT)
    # The absolute slack covers distributions whose log-density is constant on the
    # samples (a fair coin), where the standard error is zero.
    assert abs(distribution.entropy() - estimate) <= STANDARD_ERRORS * standard_error + 1e-9


# -------------------------------------------------------------------- powers
@pytest.mark.parametrize("family", FAMILIES)
@PROPERTY_SETTINGS
@given(data=st.data())
def test_power_one_is_identity(family, data):
    (distribution,) = data.draw(FAMILIES[family](1))
    assert_same_message(distribution.power(1.0), distribution)


@pytest.mark.parametrize("family", FAMILIES)
@PROPERTY_SETTINGS
@given(data=st.data(), first=EXPONENTS, second=EXPONENTS)
def test_powers_compose(family, data, first, second):
    (distribution,) = data.draw(FAMILIES[family](1))
    assert_same_message(distribution.power(first).power(second), distribution.power(first * second))


@pytest.mark.parametrize("family", FAMILIES)
@PROPERTY_SETTINGS
@given(data=st.data())
def test_power_two_is_the_product_with_itself(family, data):
    (distribution,) = data.draw(FAMILIES[family](1))
    assert_same_message(distribution.power(2.0), product(distribution, distribution))
