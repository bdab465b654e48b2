"""Messages out of the linear-Gaussian factor N(out | M in + c, Σ) towards ``out``.

Shapes: ``in`` (..., n), ``out`` (..., m), M (..., m, n), Σ (..., m, m), c (..., m); batch axes broadcast.

From a proper N(in | μ, P) the message is the push-forward N(out | M μ + c, M P Mᵀ + Σ), a density in
``out`` (log-scale 0). From an improper message on ``in``,

    μ_in(x) = exp(κ) h_n(x) exp(ξᵀx − ½ xᵀW x),   h_n(x) = (2π)^{−n/2},   W only positive semi-definite,

the integral is taken in information form. With u = y − c, Λ = W + MᵀΣ⁻¹M and completing the square in x,

    ∫ N(y | M x + c, Σ) μ_in(x) dx
        = exp(κ) (2π)^{−m/2} |Σ|^{−½} |Λ|^{−½} exp(−½ uᵀΣ⁻¹u + ½ (ξ + MᵀΣ⁻¹u)ᵀ Λ⁻¹ (ξ + MᵀΣ⁻¹u))

(the (2π)^{n/2} of the Gaussian integral cancels h_n). In y this is exp(κ_y) h_m(y) exp(ξ_yᵀy − ½ yᵀW_y y) with

    W_y = Σ⁻¹ − Σ⁻¹M Λ⁻¹ MᵀΣ⁻¹,    g = Σ⁻¹M Λ⁻¹ ξ,    ξ_y = g + W_y c,
    κ_y = κ − ½ log|Σ| − ½ log|Λ| + ½ ξᵀΛ⁻¹ξ − ½ cᵀW_y c − cᵀg.

The integral exists iff Λ is positive definite: W must be proper along the null space of M. W_y is then
only semi-definite in general (a flat μ_in, W = 0, gives a message to ``out`` flat along the range of M), so
the result is a proper normal when W_y is positive definite and a GaussianLikelihood otherwise
(:meth:`MultivariateNormal.from_coefficient`). Where Λ is singular the integral diverges and no Gaussian
function is the message: its log-scale is NaN there, which the engine reports as a NumericalError naming
this node.

As every sum-product rule, it treats the incoming message as normalised (log_scale 0) and returns its own
local log-scale; the engine adds the incoming one. A GaussianLikelihood keeps its κ in its log_scale, so
the information form takes κ = 0 (the family's −A(η) at log_scale 0, which is 0 for a likelihood).
"""
import numpy as np

from fgraph.families import Distribution, GaussianLikelihood, MultivariateNormal
from fgraph.families.linalg import cholesky_factor, cholesky_log_det, matvec, triangular_solve_vector
from fgraph.families.mvnormal import SINGULAR_PIVOT, MvNormalMeanCovariance
from fgraph.registry import rule
from fgraph.nodes.mv_linear import MvLinearNode


def _symmetric(matrix: np.ndarray) -> np.ndarray:
    return 0.5 * (matrix + np.swapaxes(matrix, -1, -2))


def factor_where_definite(matrix: np.ndarray) -> tuple:
    """``(L, definite)``: the lower Cholesky factor of every positive-definite matrix of the batch
    ``(..., d, d)``, the identity where a matrix is not (``definite`` False: not positive definite, or a
    pivot below :data:`~fgraph.families.mvnormal.SINGULAR_PIVOT` of its largest diagonal entry, a flat
    direction up to rounding)."""
    largest = np.max(np.diagonal(matrix, axis1=-2, axis2=-1), axis=-1)
    usable = True
    try:
        factor = cholesky_factor(matrix)
    except np.linalg.LinAlgError:  # some matrices of the batch are not definite: find them, factor the others
        usable = np.linalg.eigvalsh(matrix)[..., 0] > SINGULAR_PIVOT * np.maximum(largest, 0.0)
        factor = cholesky_factor(np.where(usable[..., None, None], matrix, np.eye(matrix.shape[-1])))
    pivots = np.diagonal(factor, axis1=-2, axis2=-1) ** 2
    definite = usable & np.all(pivots > SINGULAR_PIVOT * largest[..., None], axis=-1)
    if not np.all(definite):
        factor = np.where(definite[..., None, None], factor, np.eye(matrix.shape[-1]))
    return factor, definite


def drop_rounding_directions(precision: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``precision`` (..., d, d) with its eigenvalues below SINGULAR_PIVOT · ``scale`` (shape ``batch``) set to 0.

    The precision of a message from an improper one is computed by a difference (W_y = Σ⁻¹ − VᵀV) or a
    solve, so a direction that is exactly flat (W_y v = 0) comes out with an eigenvalue of rounding size,
    of either sign. ``scale`` bounds the exact eigenvalues (W_y ≤ Σ⁻¹, W_x ≤ MᵀΣ⁻¹M), so anything below
    SINGULAR_PIVOT of it is rounding: left in, a 1 × 1 precision of 1e-17 would pass for a proper normal
    of variance 1e17. Matrices without such eigenvalues are returned unchanged.
    """
    eigenvalues, eigenvectors = np.linalg.eigh(precision)
    flat = eigenvalues <= SINGULAR_PIVOT * np.asarray(scale)[..., None]
    if not np.any(flat & (eigenvalues != 0.0)):
        return precision
    kept = np.where(flat, 0.0, eigenvalues)
    return _symmetric((eigenvectors * kept[..., None, :]) @ np.swapaxes(eigenvectors, -1, -2))


@rule(MvLinearNode, "out")
def sum_product(m_in: MultivariateNormal, node) -> MultivariateNormal:
    """∫ N(out | M in + c, Σ) μ_in(in) din for any member μ_in of the family (module docstring).

    A proper N(in | μ, P) gives the push-forward N(out | M μ + c, M P Mᵀ + Σ), which integrates to one in
    ``out`` (log-scale 0); a GaussianLikelihood is integrated in information form (:func:`from_likelihood`).
    One rule for both: the compiler binds rules by the families the upstream rules declare, and a rule that
    may return either (a message towards ``in`` of any linear-Gaussian node) declares MultivariateNormal.
    """
    if isinstance(m_in, GaussianLikelihood):
        return from_likelihood(m_in, node)
    matrix = node.matrix
    spread = matrix @ m_in.cov @ np.swapaxes(matrix, -1, -2)
    return MvNormalMeanCovariance(matvec(matrix, m_in.mean) + node.offset, _symmetric(spread) + node.cov, check=False)


def from_likelihood(m_in: GaussianLikelihood, node) -> MultivariateNormal:
    """∫ N(out | M in + c, Σ) exp(κ) h(in) exp(ξᵀin − ½ inᵀW in) din in information form (module docstring):
    a Gaussian function of ``out`` with W_y = Σ⁻¹ − Σ⁻¹MΛ⁻¹MᵀΣ⁻¹, Λ = W + MᵀΣ⁻¹M, and its exact
    coefficient; proper when W_y is positive definite, NaN log-scale where Λ is singular (divergent)."""
    weighted_mean, precision = m_in.weighted_mean, m_in.precision
    joint = _symmetric(precision + node.information)  # Λ, (..., n, n)
    factor, definite = factor_where_definite(joint)
    # V = K⁻¹ MᵀΣ⁻¹ with Λ = K Kᵀ: Σ⁻¹MΛ⁻¹MᵀΣ⁻¹ = VᵀV, and t = K⁻¹ξ: ξᵀΛ⁻¹ξ = |t|², g = Vᵀt
    pulled = np.linalg.solve(factor, np.swapaxes(node.weighted_matrix, -1, -2))  # (..., n, m)
    whitened = triangular_solve_vector(factor, weighted_mean)  # (..., n)
    out_precision = drop_rounding_directions(
        node.noise_precision - _symmetric(np.swapaxes(pulled, -1, -2) @ pulled), node.largest_noise_precision)
    forced = matvec(np.swapaxes(pulled, -1, -2), whitened)  # g, (..., m)
    offset = node.offset
    shifted = matvec(out_precision, offset)  # W_y c
    # κ of μ_in as if normalised (log_scale 0; the engine adds the incoming scale): −A(η), 0 for a likelihood
    coefficient = (-m_in.log_partition() - 0.5 * node.cov_log_det - 0.5 * cholesky_log_det(factor)
                   + 0.5 * np.sum(whitened**2, axis=-1) - 0.5 * np.sum(offset * shifted, axis=-1)
                   - np.sum(offset * forced, axis=-1))
    out_weighted_mean = forced + shifted
    if not np.all(definite):  # divergent: NaN scale; any proper stand-in keeps the family's factorisations quiet
        coefficient = np.where(definite, coefficient, np.nan)
        out_precision = np.where(definite[..., None, None], out_precision, node.noise_precision)
        out_weighted_mean = np.where(definite[..., None], out_weighted_mean, 0.0)
    return MultivariateNormal.from_coefficient((out_weighted_mean, -0.5 * out_precision), coefficient)


@rule(MvLinearNode, "out")
def mean_field(q_in: Distribution, node) -> MultivariateNormal:
    """exp E_q[log N(out | M in + c, Σ)] ∝ N(out | M E[in] + c, Σ); exact (log-scale 0) for a clamped ``in``."""
    return MvNormalMeanCovariance(matvec(node.matrix, q_in.mean) + node.offset, node.cov, check=False)
