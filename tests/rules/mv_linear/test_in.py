"""Table test of the linear-Gaussian rules towards ``in``: f(out, in) = N(out | M in + c, Σ).

As a function of ``in`` every message is a Gaussian function exp(κ_x) h(x) exp(ξ_xᵀx − ½ xᵀW_x x):

* observed out = y (and the mean-field message, with E[out]): W_x = MᵀΣ⁻¹M, ξ_x = MᵀΣ⁻¹(y − c),
  κ_x = (n − m)/2 log 2π − ½ log|Σ| − ½ (y − c)ᵀΣ⁻¹(y − c);
* proper N(out | μ, V): the same with R = V + Σ for Σ;
* improper exp(κ) h(y) exp(ξᵀy − ½ yᵀWy): W_x = Mᵀ W (I + ΣW)⁻¹ M, ξ_x = Mᵀ (I + WΣ)⁻¹ (ξ − W c).

It is a proper normal (with log-scale log ∫ μ) when W_x is positive definite (M square and invertible),
a GaussianLikelihood otherwise (M = [[1, 2]]: rank one). Next to the table, each sum-product message
against numerical integration over ``out`` (the harness in one dimension, the trapezoid rule of
``test_out`` in two) and, for improper messages, the mass of prior × message against the evidence
integrated numerically over ``in``.
"""
import math

import numpy as np
import pytest
from scipy.stats import norm

from fgraph.families import (
    GaussianLikelihood, MvNormalMeanCovariance, MvNormalMeanPrecision, NormalMeanVariance, PointMass, product,
)
from fgraph.nodes.mv_linear import MvLinearNode
from tests.rules.mv_linear.test_out import (
    ONE_D, ONE_D_ATTRIBUTES, ROW, log_gaussian_function, log_gaussian_integral_2d, log_normal, log_value, peak_of,
)
from tests.rules.quadrature import log_integral, log_message
from tests.rules.tables import assert_message, message, mv_normal

LOG_2PI = math.log(2.0 * math.pi)


def likelihood(weighted_mean, precision, log_coefficient):
    return {"family": GaussianLikelihood, "weighted_mean": weighted_mean, "precision": precision,
            "log_scale": log_coefficient}


ROW_ATTRIBUTES = dict(matrix=ROW, cov=[[0.5]], offset=[1.0])
# y = 4 through M = [[1, 2]], Σ = 1/2, c = 1: W_x = MᵀM/Σ = [[2, 4], [4, 8]], ξ_x = Mᵀ (4 − 1)/Σ = (6, 12),
# κ_x = ½ log 2π − ½ log ½ − ½ · 9/½ (n − m = 1)
OBSERVED_ROW = likelihood([6.0, 12.0], [[2.0, 4.0], [4.0, 8.0]], 0.5 * LOG_2PI + 0.5 * math.log(2.0) - 9.0)

CASES = [
    # N(y | diag(2, 1) x, I) = N(x | (y₁/2, y₂), diag(1/4, 1)) / |det M|
    pytest.param(dict(matrix=np.diag([2.0, 1.0]), cov=np.eye(2)), {"q_out": PointMass([1.0, 2.0], 1)},
                 mv_normal([0.5, 2.0], np.diag([0.25, 1.0]), -math.log(2.0)), id="observed-square"),
    pytest.param(ROW_ATTRIBUTES, {"q_out": PointMass([4.0], 1)}, OBSERVED_ROW, id="observed-row"),
    # the mean-field message reads E[out] only: the same numbers as the observation at 4
    pytest.param(ROW_ATTRIBUTES, {"q_out": MvNormalMeanCovariance([4.0], [[9.0]])}, OBSERVED_ROW, id="mf-normal"),
    # N(diag(2, 1) x | (1, 2), I + I): x ~ (1/2, 2) with covariance diag(2/4, 2), scale −log 2
    pytest.param(dict(matrix=np.diag([2.0, 1.0]), cov=np.eye(2)), {"m_out": MvNormalMeanCovariance([1.0, 2.0], np.eye(2))},
                 mv_normal([0.5, 2.0], np.diag([0.5, 2.0]), -math.log(2.0)), id="sp-square"),
    # R = 1.5 + 0.5 = 2: W_x = MᵀM/2, ξ_x = Mᵀ (3 − 1)/2 = (1, 2), κ_x = ½ log 2π − ½ log 2 − ½ · 4/2
    pytest.param(ROW_ATTRIBUTES, {"m_out": MvNormalMeanCovariance([3.0], [[1.5]])},
                 likelihood([1.0, 2.0], [[0.5, 1.0], [1.0, 2.0]], 0.5 * LOG_2PI - 0.5 * math.log(2.0) - 1.0), id="sp-row"),
    # precision 2 -> V = 1/2, R = 1: W_x = MᵀM, ξ_x = Mᵀ (3 − 1) = (2, 4), κ_x = ½ log 2π − 2
    pytest.param(ROW_ATTRIBUTES, {"m_out": MvNormalMeanPrecision([3.0], [[2.0]])},
                 likelihood([2.0, 4.0], [[1.0, 2.0], [2.0, 4.0]], 0.5 * LOG_2PI - 2.0), id="sp-row-precision"),
    pytest.param(dict(matrix=[[1.0]], cov=[[1.0]]), {"m_out": MvNormalMeanCovariance([[1.0], [-3.0]], [[[1.0]], [[3.0]]])},
                 mv_normal([[1.0], [-3.0]], [[[2.0]], [[4.0]]]), id="sp-batched"),
    # Improper incoming messages carry their coefficient κ as log_scale, which the engine adds: the rule
    # works with κ = 0 and its log-scale is its own share.
    # W = diag(1, 0), ξ = (1, 0), M = Σ = I: A = W (I + W)⁻¹ = diag(1/2, 0), b = (I + W)⁻¹ξ = (1/2, 0),
    # κ_x = −½ log|I + W| + ½ ξᵀb = 1/4 − ½ log 2
    pytest.param(dict(matrix=np.eye(2), cov=np.eye(2)), {"m_out": GaussianLikelihood([1.0, 0.0], np.diag([1.0, 0.0]), 0.3)},
                 likelihood([0.5, 0.0], np.diag([0.5, 0.0]), 0.25 - 0.5 * math.log(2.0)), id="likelihood-rank-one"),
    # W = 2I, ξ = (2, 0) (κ = 0) is N(out | (1, 0), I/2) with scale 1 − log 2; with c = (1, −1), M = Σ = I:
    # N(x + c | (1, 0), 3I/2) = N(x | (0, 1), 3I/2), the same scale
    pytest.param(dict(matrix=np.eye(2), cov=np.eye(2), offset=[1.0, -1.0]),
                 {"m_out": GaussianLikelihood([2.0, 0.0], 2.0 * np.eye(2), 0.1)},
                 mv_normal([0.0, 1.0], 1.5 * np.eye(2), 1.0 - math.log(2.0)), id="likelihood-offset"),
]


@pytest.mark.parametrize("attributes, inputs, expected", CASES)
def test_in(attributes, inputs, expected):
    assert_message(message(MvLinearNode, "in", inputs, **attributes), expected)


# ---- numerical integration -------------------------------------------------------------------------------

POINTS_1D = np.array([-2.5, -1.0, 0.0, 0.7, 2.2])


@pytest.mark.parametrize("name, incoming, harness_incoming, scale", [
    ("m_out", MvNormalMeanCovariance([0.4], [[0.9]]), NormalMeanVariance(0.4, 0.9), 0.0),
    ("q_out", PointMass([0.4], 1), PointMass(0.4), 0.0),
    # exp(κ) h(y) exp(ξy − ½Wy²) = exp(κ + ξ²/2W − ½ log W) N(y | ξ/W, 1/W)
    ("m_out", GaussianLikelihood([1.2], [[2.5]], -0.4), NormalMeanVariance(1.2 / 2.5, 1 / 2.5),
     -0.4 + 1.2**2 / 5.0 - 0.5 * math.log(2.5)),
], ids=["proper", "observed", "likelihood"])
def test_one_dimensional_against_the_harness(name, incoming, harness_incoming, scale):
    """N(out | −1.5 in + 0.3, 0.4): the message and its log-scale ∫ μ(x) dx by adaptive quadrature."""
    result = message(MvLinearNode, "in", {name: incoming}, **ONE_D_ATTRIBUTES)
    incoming_scale = incoming.log_scale  # the engine adds it (κ of the likelihood, 0 otherwise)
    expected = scale + log_message(ONE_D, "in", {"out": harness_incoming}, POINTS_1D)
    np.testing.assert_allclose(incoming_scale + log_value(result, POINTS_1D[:, None]), expected, rtol=0.0, atol=1e-9)
    centre, half = float(result.mean[0]), 12.0 * math.sqrt(result.cov[0, 0])
    mass = scale + log_integral(ONE_D, "in", {"out": harness_incoming}, (centre - half, centre + half))
    np.testing.assert_allclose(incoming_scale + result.log_scale, mass, atol=1e-9)


def in_by_quadrature(attributes, log_incoming, incoming_curvature, points):
    """log ∫ N(y | M x + c, Σ) μ_out(y) dy at each x of ``points``, over y ∈ R²."""
    matrix, cov = np.asarray(attributes["matrix"], float), np.asarray(attributes["cov"], float)
    offset = np.asarray(attributes.get("offset", np.zeros(len(cov))), float)
    curvature = np.asarray(incoming_curvature) + np.linalg.inv(cov)  # of the integrand in y
    values = []
    for x in points:
        integrand = lambda y, x=x: log_normal(y, matrix @ x + offset, cov) + log_incoming(y)  # noqa: E731
        values.append(log_gaussian_integral_2d(integrand, curvature, peak_of(integrand, curvature)))
    return np.array(values)


SQUARE_ATTRIBUTES = dict(matrix=[[1.0, -0.5], [0.3, 2.0]], cov=[[0.6, 0.2], [0.2, 0.5]], offset=[0.4, -0.3])
WIDE_ATTRIBUTES = dict(matrix=[[1.0, -0.5, 0.2], [0.3, 2.0, -1.0]], cov=[[0.6, 0.2], [0.2, 0.5]], offset=[0.4, -0.3])
PROPER_OUT = MvNormalMeanCovariance([0.5, -0.3], [[0.8, 0.25], [0.25, 0.6]])
RANK_ONE = np.outer([1.0, 0.4], [1.0, 0.4]) / 0.7
RANK_ONE_OUT = GaussianLikelihood(np.array([1.0, 0.4]) * 0.9 / 0.7, RANK_ONE, -0.35)
POINTS_2D = np.array([[0.0, 0.0], [1.0, -1.0], [-0.5, 0.8], [1.5, 1.2], [0.2, -2.0], [-1.0, -0.4]])
POINTS_3D = np.array([[0.0, 0.0, 0.0], [1.0, -1.0, 0.5], [-0.5, 0.8, 2.0], [1.5, 1.2, -1.0], [0.2, -2.0, 0.3]])


@pytest.mark.parametrize("attributes, points, square", [
    (SQUARE_ATTRIBUTES, POINTS_2D, True),   # M invertible: proper in x when μ_out is
    (WIDE_ATTRIBUTES, POINTS_3D, False),    # M 2 × 3: flat along its null space
], ids=["square", "wide"])
@pytest.mark.parametrize("incoming, log_incoming, curvature", [
    (PROPER_OUT, lambda y: log_normal(y, PROPER_OUT.mean, PROPER_OUT.cov), PROPER_OUT.precision),
    (RANK_ONE_OUT, log_gaussian_function(RANK_ONE_OUT.weighted_mean, RANK_ONE, -0.35), RANK_ONE),
], ids=["proper-out", "rank-one-out"])
def test_against_quadrature_over_out(attributes, points, square, incoming, log_incoming, curvature):
    result = message(MvLinearNode, "in", {"m_out": incoming}, **attributes)
    # rank W_x = rank of W seen through M: full only for a proper μ_out and an invertible M
    assert isinstance(result, GaussianLikelihood) != (square and incoming is PROPER_OUT)
    expected = in_by_quadrature(attributes, log_incoming, curvature, points)
    # the rule works with the incoming message's log_scale set to 0; the engine adds it
    np.testing.assert_allclose(incoming.log_scale + log_value(result, points), expected, rtol=0.0, atol=1e-8)


def test_observed_scalar_through_a_row_is_a_rank_one_likelihood():
    """M = [[1, 2]] and an observed y: μ(x) = N(y | x₁ + 2x₂ + c, Σ) pointwise, flat along (2, −1); times
    a prior N(m₀, P₀) its mass is the evidence ∫ N(y | Mx + c, Σ) N(x | m₀, P₀) dx (trapezoid rule in x)."""
    y, offset, variance = 4.0, 1.0, 0.5
    result = message(MvLinearNode, "in", {"q_out": PointMass([y], 1)}, **ROW_ATTRIBUTES)
    assert isinstance(result, GaussianLikelihood)
    np.testing.assert_allclose(np.linalg.matrix_rank(result.precision), 1)
    np.testing.assert_allclose(result.log_value(POINTS_2D),
                               norm.logpdf(y, POINTS_2D @ ROW[0] + offset, math.sqrt(variance)), rtol=1e-12)
    assert result.log_value(np.array([2.0, -1.0])) == pytest.approx(result.log_value(np.zeros(2)), rel=1e-13)
    prior = MvNormalMeanCovariance([0.3, -0.5], [[2.0, 0.3], [0.3, 1.0]])
    integrand = lambda x: (norm.logpdf(y, x @ ROW[0] + offset, math.sqrt(variance))  # noqa: E731
                           + log_normal(x, prior.mean, prior.cov))
    curvature = prior.precision + np.outer(ROW[0], ROW[0]) / variance
    evidence = log_gaussian_integral_2d(integrand, curvature, peak_of(integrand, curvature))
    np.testing.assert_allclose(product(prior, result).log_scale, evidence, rtol=0.0, atol=1e-10)


def test_rank_one_likelihood_times_prior_has_the_evidence_as_mass():
    """An improper μ_out through a square M: prior × message integrates (numerically, over x and y) to
    ∫∫ N(x | m₀, P₀) N(y | M x + c, Σ) μ_out(y) dy dx, here by the trapezoid rule in y of the closed
    x-integral N(y | M m₀ + c, M P₀ Mᵀ + Σ) (the push-forward, itself checked in test_out)."""
    prior = MvNormalMeanCovariance([0.3, -0.5], [[2.0, 0.3], [0.3, 1.0]])
    result = message(MvLinearNode, "in", {"m_out": RANK_ONE_OUT}, **SQUARE_ATTRIBUTES)
    matrix, cov, offset = (np.asarray(SQUARE_ATTRIBUTES[k], float) for k in ("matrix", "cov", "offset"))
    predicted_mean, predicted_cov = matrix @ prior.mean + offset, matrix @ prior.cov @ matrix.T + cov
    log_incoming = log_gaussian_function(RANK_ONE_OUT.weighted_mean, RANK_ONE, -0.35)
    integrand = lambda y: log_normal(y, predicted_mean, predicted_cov) + log_incoming(y)  # noqa: E731
    curvature = np.linalg.inv(predicted_cov) + RANK_ONE
    evidence = log_gaussian_integral_2d(integrand, curvature, peak_of(integrand, curvature))
    np.testing.assert_allclose(RANK_ONE_OUT.log_scale + product(prior, result).log_scale, evidence, rtol=0.0, atol=1e-10)


def test_likelihood_rule_equals_the_proper_rule_on_a_proper_message():
    as_likelihood = GaussianLikelihood(PROPER_OUT.weighted_mean, PROPER_OUT.precision, PROPER_OUT.log_coefficient())
    for attributes in (SQUARE_ATTRIBUTES, WIDE_ATTRIBUTES):
        proper = message(MvLinearNode, "in", {"m_out": PROPER_OUT}, **attributes)
        information = message(MvLinearNode, "in", {"m_out": as_likelihood}, **attributes)
        assert type(information) is type(proper)
        np.testing.assert_allclose(information.weighted_mean, proper.weighted_mean, rtol=1e-11, atol=1e-13)
        np.testing.assert_allclose(information.precision, proper.precision, rtol=1e-11, atol=1e-13)
        np.testing.assert_allclose(as_likelihood.log_scale + information.log_coefficient(), proper.log_coefficient(),
                                   rtol=1e-11)


def test_flat_directions_of_the_incoming_likelihood_stay_exactly_flat():
    """W = a aᵀ (rank one) seen through M = a⊥ as a column (n = 1): out carries nothing about ``in``, so
    μ(x) is constant. The solve leaves W_x = a⊥ᵀ A a⊥ at rounding size (about half of these cases
    positive), which must not pass for a proper normal of variance ~1e17: it is set to exactly 0."""
    rng = np.random.default_rng(12)
    for _ in range(12):
        a = rng.normal(size=2)
        a /= np.linalg.norm(a)
        root = rng.normal(size=(2, 2))
        incoming = GaussianLikelihood(a * rng.normal(), np.outer(a, a) * rng.uniform(0.5, 3.0), 0.0)
        result = message(MvLinearNode, "in", {"m_out": incoming}, matrix=[[-a[1]], [a[0]]],
                         cov=root @ root.T + 0.2 * np.eye(2))
        assert isinstance(result, GaussianLikelihood)
        np.testing.assert_array_equal(result.precision, [[0.0]])


def test_batched_messages_and_matrices_equal_the_elements():
    rng = np.random.default_rng(1)
    roots = rng.normal(size=(3, 2, 2))
    covs = roots @ np.swapaxes(roots, -1, -2) + 0.3 * np.eye(2)
    means = rng.normal(size=(3, 2))
    matrices, offsets = rng.normal(size=(3, 2, 3)), rng.normal(size=(3, 2))
    noise = np.array([[0.5, 0.1], [0.1, 0.4]])
    vectors = rng.normal(size=(3, 2))
    cases = [("m_out", MvNormalMeanCovariance(means, covs)),
             ("m_out", GaussianLikelihood(vectors * 0.8, np.einsum("ni,nj->nij", vectors, vectors), rng.normal(size=3))),
             ("q_out", PointMass(means, 1))]
    for name, incoming in cases:
        batched = message(MvLinearNode, "in", {name: incoming}, matrix=matrices, cov=noise, offset=offsets,
                          batch_shape=(3,))
        for n in range(3):
            alone = message(MvLinearNode, "in", {name: incoming[n]}, matrix=matrices[n], cov=noise, offset=offsets[n])
            np.testing.assert_allclose(batched[n].weighted_mean, alone.weighted_mean, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(batched[n].precision, alone.precision, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(batched.log_coefficient()[n], alone.log_coefficient(), rtol=1e-10, atol=1e-12)
