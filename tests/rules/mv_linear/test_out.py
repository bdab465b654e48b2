"""Table test of the linear-Gaussian rules towards ``out``: f(out, in) = N(out | M in + c, Σ).

Sum-product from a proper N(in | μ, P): N(out | M μ + c, M P Mᵀ + Σ), log-scale 0. From an improper
exp(κ) h(in) exp(ξᵀin − ½ inᵀW in), in information form with Λ = W + MᵀΣ⁻¹M: W_y = Σ⁻¹ − Σ⁻¹MΛ⁻¹MᵀΣ⁻¹,
ξ_y = Σ⁻¹MΛ⁻¹ξ + W_y c and its exact coefficient (NaN where Λ is singular). Mean-field: N(out | M E[in] + c, Σ).

Next to the table: every sum-product message against numerical integration of N(y | M x + c, Σ) μ_in(x)
over x, point by point, which checks the log-scale with the message: in one dimension by the harness
(``tests/rules/quadrature.py``, adaptive quadrature, also the log-scale ∫ μ(y) dy), in two by the
trapezoid rule on a whitened grid (:func:`log_gaussian_integral_2d`), for proper and improper μ_in.
"""
import math
import warnings

import numpy as np
import pytest
from scipy.special import logsumexp

from fgraph.families import GaussianLikelihood, MvNormalMeanCovariance, MvNormalMeanPrecision, NormalMeanVariance, PointMass
from fgraph.nodes.mv_linear import MvLinearNode
from tests.rules.quadrature import HALF_WIDTH, DensityFactor, log_integral, log_message, normal_pdf
from tests.rules.tables import assert_message, message, mv_normal

LOG_2PI = math.log(2.0 * math.pi)
SQUARE = np.array([[2.0, 0.0], [1.0, 1.0]])
ROW = np.array([[1.0, 2.0]])


def likelihood(weighted_mean, precision, log_coefficient):
    """Expected GaussianLikelihood exp(κ) h(x) exp(ξᵀx − ½ xᵀWx): compared by ξ, W and κ (its log_scale)."""
    return {"family": GaussianLikelihood, "weighted_mean": weighted_mean, "precision": precision,
            "log_scale": log_coefficient}


CASES = [
    # M μ = (2, 0); M diag(1, 2) Mᵀ = [[4, 2], [2, 3]], + I
    pytest.param(dict(matrix=SQUARE, cov=np.eye(2)), {"m_in": MvNormalMeanCovariance([1.0, -1.0], np.diag([1.0, 2.0]))},
                 mv_normal([2.0, 0.0], [[5.0, 2.0], [2.0, 4.0]]), id="sp"),
    # 1 + 2 + c = 4; 1 + 4 + 0.5
    pytest.param(dict(matrix=ROW, cov=[[0.5]], offset=[1.0]), {"m_in": MvNormalMeanCovariance([1.0, 1.0], np.eye(2))},
                 mv_normal([4.0], [[5.5]]), id="sp-row-offset"),
    # precision diag(2, 4) -> P = diag(1/2, 1/4); M = [[1, 0], [0, 1], [1, 1]]: M P Mᵀ + I/10
    pytest.param(dict(matrix=[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], cov=0.1 * np.eye(3)),
                 {"m_in": MvNormalMeanPrecision([1.0, 2.0], np.diag([2.0, 4.0]))},
                 mv_normal([1.0, 2.0, 3.0], [[0.6, 0.0, 0.5], [0.0, 0.35, 0.25], [0.5, 0.25, 0.85]]), id="sp-tall-precision"),
    pytest.param(dict(matrix=ROW, cov=[[1.0]]), {"m_in": MvNormalMeanCovariance([[1.0, 0.0], [0.0, -1.0]], np.eye(2))},
                 mv_normal([[1.0], [-2.0]], [[[6.0]], [[6.0]]]), id="sp-batched"),
    # Improper incoming messages carry their coefficient κ as log_scale, which the engine adds: the rule
    # works with κ = 0 and its log-scale is its own share.
    # W = 2I, ξ = (2, 0) (κ = 0) is N(in | (1, 0), I/2) with scale ½ ξᵀW⁻¹ξ − ½ log|W| = 1 − log 2;
    # pushed through M = I with Σ = I: N(out | (1, 0), 3I/2), the same scale
    pytest.param(dict(matrix=np.eye(2), cov=np.eye(2)), {"m_in": GaussianLikelihood([2.0, 0.0], 2.0 * np.eye(2), 0.1)},
                 mv_normal([1.0, 0.0], 1.5 * np.eye(2), 1.0 - math.log(2.0)), id="likelihood-full-rank"),
    # W = diag(1, 0), ξ = (1, 0), M = Σ = I: Λ = diag(2, 1), W_y = I − Λ⁻¹ = diag(1/2, 0),
    # ξ_y = Λ⁻¹ξ = (1/2, 0), κ_y = −½ log 2 + ½ ξᵀΛ⁻¹ξ = 1/4 − ½ log 2 (flat along the second axis)
    pytest.param(dict(matrix=np.eye(2), cov=np.eye(2)), {"m_in": GaussianLikelihood([1.0, 0.0], np.diag([1.0, 0.0]), 0.3)},
                 likelihood([0.5, 0.0], np.diag([0.5, 0.0]), 0.25 - 0.5 * math.log(2.0)), id="likelihood-rank-one"),
    # the same with c = (1, −1): ξ_y = (1/2, 0) + W_y c = (1, 0), κ_y − ½ cᵀW_y c − cᵀΛ⁻¹ξ = κ_y − 1/4 − 1/2
    pytest.param(dict(matrix=np.eye(2), cov=np.eye(2), offset=[1.0, -1.0]),
                 {"m_in": GaussianLikelihood([1.0, 0.0], np.diag([1.0, 0.0]), 0.3)},
                 likelihood([1.0, 0.0], np.diag([0.5, 0.0]), -0.5 - 0.5 * math.log(2.0)), id="likelihood-offset"),
    # 1·1 + 2·2 + 1 = 6
    pytest.param(dict(matrix=ROW, cov=[[0.5]], offset=[1.0]), {"q_in": PointMass([1.0, 2.0], 1)},
                 mv_normal([6.0], [[0.5]]), id="mf-point-mass"),
    pytest.param(dict(matrix=SQUARE, cov=np.eye(2), offset=[0.5, 0.0]),
                 {"q_in": MvNormalMeanCovariance([1.0, -1.0], [[3.0, 1.0], [1.0, 2.0]])},
                 mv_normal([2.5, 0.0], np.eye(2)), id="mf-normal"),
]


@pytest.mark.parametrize("attributes, inputs, expected", CASES)
def test_out(attributes, inputs, expected):
    assert_message(message(MvLinearNode, "out", inputs, **attributes), expected)


def test_divergent_integral_has_a_nan_scale_and_no_warning():
    """μ_in flat along x₂ and M = [[1, 0]] blind to x₂: ∫ ... dx₂ = ∞, so Λ = diag(2, 0) is singular.

    The batch's other element (W = I) is finite and keeps its value."""
    incoming = GaussianLikelihood([[1.0, 0.0], [1.0, 0.0]], [np.diag([1.0, 0.0]), np.eye(2)], [0.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            result = message(MvLinearNode, "out", {"m_in": incoming}, matrix=[[1.0, 0.0]], cov=[[1.0]],
                             batch_shape=(2,))
    assert np.isnan(result.log_scale[0]) and np.isfinite(result.log_scale[1])
    alone = message(MvLinearNode, "out", {"m_in": incoming[1]}, matrix=[[1.0, 0.0]], cov=[[1.0]])
    np.testing.assert_allclose(result[1].mean, alone.mean, rtol=1e-14)
    np.testing.assert_allclose(result.log_scale[1], alone.log_scale, rtol=1e-14)


# ---- numerical integration -------------------------------------------------------------------------------


def log_value(result, points):
    """log μ(t) of a rule's message at ``points`` (n_points, d): log_scale + logpdf, or log_value if improper."""
    if isinstance(result, GaussianLikelihood):
        return result.log_value(points)
    return result.log_scale + result.logpdf(points)


def log_gaussian_integral_2d(log_integrand, curvature, peak):
    """log ∫∫ exp(log_integrand(x)) dx over R² by the trapezoid rule on a grid of 121 × 121 points.

    ``log_integrand`` maps points (N, 2) to values (N,). The grid lies in whitened coordinates,
    x = peak + K z with K Kᵀ = curvature⁻¹, z ∈ [−HALF_WIDTH, HALF_WIDTH]² with step 0.2: the curvature (the
    matrix of the integrand's quadratic term) and the peak only place the window. For a smooth integrand
    decaying like a Gaussian the trapezoid rule converges exponentially in 1/step (its error is of order
    exp(−2π²/step²) relative, far below rounding here), and the mass outside the window is below
    exp(−HALF_WIDTH²/2); so the sum is the integral to rounding, at the cost of one vectorised evaluation.
    """
    step = 0.2
    axis = np.arange(-HALF_WIDTH, HALF_WIDTH + step / 2, step)
    z = np.stack(np.meshgrid(axis, axis, indexing="ij"), axis=-1).reshape(-1, 2)
    root = np.linalg.cholesky(np.linalg.inv(curvature))
    values = log_integrand(np.asarray(peak, dtype=float) + z @ root.T)
    log_jacobian = np.log(np.linalg.det(root)) + 2.0 * math.log(step)
    return float(logsumexp(values) + log_jacobian)


def log_normal(y, mean, cov):
    """log N(y | mean, cov) for points ``y`` and ``mean`` (..., d), written out (no scipy frozen objects)."""
    residual = np.asarray(y, float) - mean
    _, log_det = np.linalg.slogdet(cov)
    return -0.5 * (residual.shape[-1] * LOG_2PI + log_det + np.sum(residual * np.linalg.solve(cov, residual.T).T, axis=-1))


def log_gaussian_function(weighted_mean, precision, log_coefficient):
    """log of exp(κ) h(x) exp(ξᵀx − ½ xᵀWx), h = (2π)^{−d/2}, for points (N, d), written out (not the family's)."""
    weighted_mean, precision = np.asarray(weighted_mean, float), np.asarray(precision, float)
    return lambda x: (log_coefficient - 0.5 * x.shape[-1] * LOG_2PI + x @ weighted_mean
                      - 0.5 * np.sum(x * (x @ precision), axis=-1))


# one-dimensional: N(out | a in + c, s) through the harness (univariate messages for the same numbers)
A, C, S = -1.5, 0.3, 0.4
ONE_D = DensityFactor(lambda v: normal_pdf(v["out"], A * v["in"] + C, S))
ONE_D_ATTRIBUTES = dict(matrix=[[A]], cov=[[S]], offset=[C])
POINTS_1D = np.array([-3.0, -1.2, -0.4, 0.5, 2.0])


def test_one_dimensional_sum_product_against_the_harness():
    result = message(MvLinearNode, "out", {"m_in": MvNormalMeanCovariance([0.7], [[0.8]])}, **ONE_D_ATTRIBUTES)
    incoming = {"in": NormalMeanVariance(0.7, 0.8)}
    expected = log_message(ONE_D, "out", incoming, POINTS_1D)
    np.testing.assert_allclose(log_value(result, POINTS_1D[:, None]), expected, rtol=0.0, atol=1e-9)
    limits = (-0.75 - 12 * math.sqrt(2.2), -0.75 + 12 * math.sqrt(2.2))
    np.testing.assert_allclose(result.log_scale, log_integral(ONE_D, "out", incoming, limits), atol=1e-9)


def test_one_dimensional_likelihood_against_the_harness():
    """A 1-d GaussianLikelihood exp(κ) h(x) exp(ξx − ½Wx²) is exp(κ + ξ²/2W − ½ log W) N(x | ξ/W, 1/W):
    the harness integrates against the normalised normal, the scale is added."""
    xi, w, kappa = 1.2, 2.5, -0.4
    result = message(MvLinearNode, "out", {"m_in": GaussianLikelihood([xi], [[w]], kappa)}, **ONE_D_ATTRIBUTES)
    scale = kappa + xi**2 / (2.0 * w) - 0.5 * math.log(w)
    incoming = {"in": NormalMeanVariance(xi / w, 1.0 / w)}
    expected = scale + log_message(ONE_D, "out", incoming, POINTS_1D)
    # the engine adds the incoming log_scale, κ: the rule's message times exp(κ) is the integral
    np.testing.assert_allclose(kappa + log_value(result, POINTS_1D[:, None]), expected, rtol=0.0, atol=1e-9)
    limits = (A * xi / w + C - 12 * math.sqrt(2.0), A * xi / w + C + 12 * math.sqrt(2.0))
    np.testing.assert_allclose(kappa + result.log_scale, scale + log_integral(ONE_D, "out", incoming, limits), atol=1e-9)


def peak_of(log_integrand, curvature):
    """The maximum of a concave quadratic from its gradient at 0 (central differences, exact for a quadratic)."""
    h = 1e-3
    gradient = np.array([(log_integrand(h * e[None])[0] - log_integrand(-h * e[None])[0]) / (2 * h) for e in np.eye(2)])
    return np.linalg.solve(curvature, gradient)


def out_by_quadrature(attributes, log_incoming, incoming_curvature, points):
    """log ∫ N(y | M x + c, Σ) μ_in(x) dx at each y of ``points``, over x ∈ R²."""
    matrix, cov = np.asarray(attributes["matrix"], float), np.asarray(attributes["cov"], float)
    offset = np.asarray(attributes.get("offset", np.zeros(len(cov))), float)
    curvature = np.asarray(incoming_curvature) + matrix.T @ np.linalg.solve(cov, matrix)  # of the integrand in x
    values = []
    for y in points:
        integrand = lambda x, y=y: log_normal(y, x @ matrix.T + offset, cov) + log_incoming(x)  # noqa: E731
        values.append(log_gaussian_integral_2d(integrand, curvature, peak_of(integrand, curvature)))
    return np.array(values)


SQUARE_ATTRIBUTES = dict(matrix=[[1.0, -0.5], [0.3, 2.0]], cov=[[0.6, 0.2], [0.2, 0.5]], offset=[0.4, -0.3])
ROW_ATTRIBUTES = dict(matrix=ROW, cov=[[0.5]], offset=[0.2])
PROPER_IN = MvNormalMeanCovariance([0.5, -0.3], [[0.8, 0.25], [0.25, 0.6]])
RANK_ONE = np.outer([1.0, 0.4], [1.0, 0.4]) / 0.7  # W = a aᵀ/v: an observation of aᵀx
RANK_ONE_IN = GaussianLikelihood(np.array([1.0, 0.4]) * 0.9 / 0.7, RANK_ONE, -0.35)


@pytest.mark.parametrize("attributes, points", [
    (ROW_ATTRIBUTES, np.array([[-2.0], [-0.1], [0.6], [1.5], [3.0]])),
    (SQUARE_ATTRIBUTES, np.array([[0.0, 0.0], [1.0, -1.0], [-0.5, 0.8], [1.5, 1.2], [0.2, -2.0], [-1.0, -0.4]])),
], ids=["row", "square"])
def test_proper_in_against_quadrature(attributes, points):
    result = message(MvLinearNode, "out", {"m_in": PROPER_IN}, **attributes)
    expected = out_by_quadrature(attributes, lambda x: log_normal(x, PROPER_IN.mean, PROPER_IN.cov), PROPER_IN.precision, points)
    np.testing.assert_allclose(log_value(result, points), expected, rtol=0.0, atol=1e-8)


@pytest.mark.parametrize("attributes, points", [
    # out = x₁ + 2x₂ + noise while μ_in is flat along (0.4, −1): out is flat too (W_y = 0, a constant)
    (ROW_ATTRIBUTES, np.array([[-2.0], [0.6], [3.0]])),
    # flat along M (0.4, −1) in out-space: a rank-one GaussianLikelihood of out
    (SQUARE_ATTRIBUTES, np.array([[0.0, 0.0], [1.0, -1.0], [-0.5, 0.8], [1.5, 1.2], [0.2, -2.0], [-1.0, -0.4]])),
], ids=["row", "square"])
def test_rank_one_likelihood_in_against_quadrature(attributes, points):
    result = message(MvLinearNode, "out", {"m_in": RANK_ONE_IN}, **attributes)
    assert isinstance(result, GaussianLikelihood)
    log_incoming = log_gaussian_function(RANK_ONE_IN.weighted_mean, RANK_ONE, -0.35)
    expected = out_by_quadrature(attributes, log_incoming, RANK_ONE, points)
    # the rule works with κ = 0, the engine adds the incoming log_scale κ = −0.35
    np.testing.assert_allclose(RANK_ONE_IN.log_scale + log_value(result, points), expected, rtol=0.0, atol=1e-8)


def test_flat_directions_stay_exactly_flat():
    """μ_in = exp(ξᵀx − ½ (aᵀx)²) (flat along a⊥) through a row M with M a⊥ ≠ 0: out is flat, W_y = 0
    exactly in exact arithmetic but Σ⁻¹ − VᵀV at rounding size in floating point (about half of these
    cases positive), which must not pass for a proper normal of variance ~1e16: it is set to exactly 0."""
    rng = np.random.default_rng(13)
    for _ in range(12):
        a = rng.normal(size=2)
        a /= np.linalg.norm(a)
        incoming = GaussianLikelihood(a * rng.normal(), np.outer(a, a) * rng.uniform(0.5, 3.0), 0.0)
        result = message(MvLinearNode, "out", {"m_in": incoming}, matrix=rng.normal(size=(1, 2)),
                         cov=[[rng.uniform(0.3, 2.0)]])
        assert isinstance(result, GaussianLikelihood)
        np.testing.assert_array_equal(result.precision, [[0.0]])


def test_likelihood_rule_equals_the_proper_rule_on_a_proper_message():
    """The same proper message given as a GaussianLikelihood (ξ = P⁻¹μ, W = P⁻¹, κ = its log-coefficient,
    which the engine adds): the information form equals the push-forward, scales included."""
    as_likelihood = GaussianLikelihood(PROPER_IN.weighted_mean, PROPER_IN.precision, PROPER_IN.log_coefficient())
    for attributes in (SQUARE_ATTRIBUTES, ROW_ATTRIBUTES):
        proper = message(MvLinearNode, "out", {"m_in": PROPER_IN}, **attributes)
        information = message(MvLinearNode, "out", {"m_in": as_likelihood}, **attributes)
        np.testing.assert_allclose(information.mean, proper.mean, rtol=1e-12)
        np.testing.assert_allclose(information.cov, proper.cov, rtol=1e-12)
        np.testing.assert_allclose(as_likelihood.log_scale + information.log_scale, proper.log_scale, atol=1e-12)


def test_batched_messages_and_matrices_equal_the_elements():
    """A batch of 3 incoming messages against a batch of 3 matrices, offsets and covariances, element by element."""
    rng = np.random.default_rng(0)
    roots = rng.normal(size=(3, 2, 2))
    covs = roots @ np.swapaxes(roots, -1, -2) + 0.3 * np.eye(2)
    means = rng.normal(size=(3, 2))
    matrices, offsets = rng.normal(size=(3, 2, 2)), rng.normal(size=(3, 2))
    noise = np.array([[0.5, 0.1], [0.1, 0.4]])
    vectors = rng.normal(size=(3, 2))
    cases = [("m_in", MvNormalMeanCovariance(means, covs)),
             ("m_in", GaussianLikelihood(vectors * 0.8, np.einsum("ni,nj->nij", vectors, vectors) + np.diag([0.0, 0.1]),
                                         rng.normal(size=3))),
             ("q_in", MvNormalMeanCovariance(means, covs))]
    for name, incoming in cases:
        batched = message(MvLinearNode, "out", {name: incoming}, matrix=matrices, cov=noise, offset=offsets,
                          batch_shape=(3,))
        for n in range(3):
            alone = message(MvLinearNode, "out", {name: incoming[n]}, matrix=matrices[n], cov=noise, offset=offsets[n])
            np.testing.assert_allclose(batched[n].weighted_mean, alone.weighted_mean, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(batched[n].precision, alone.precision, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(batched.log_coefficient()[n], alone.log_coefficient(), rtol=1e-10, atol=1e-12)
