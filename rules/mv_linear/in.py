"""Messages out of the linear-Gaussian factor N(out | M in + c, Σ) towards ``in``.

Shapes: ``in`` (..., n), ``out`` (..., m), M (..., m, n), Σ (..., m, m), c (..., m); batch axes broadcast.

As a function of ``in`` these messages are likelihoods, Gaussian functions

    μ(x) = exp(κ_x) h_n(x) exp(ξ_xᵀx − ½ xᵀW_x x),   h_n(x) = (2π)^{−n/2},

with W_x = Mᵀ A M for an m × m positive semi-definite A, so W_x has rank at most rank M ≤ min(m, n): an
observation of part of the state (m < n) is flat along the null space of M and comes back as a
GaussianLikelihood; where W_x is positive definite (e.g. M square and invertible) it is a proper normal
carrying log-scale log ∫ μ(x) dx (:meth:`MultivariateNormal.from_coefficient` decides which).

* Observed ``out`` = y: μ(x) = N(y | M x + c, Σ), A = Σ⁻¹, ξ_x = MᵀΣ⁻¹(y − c),
  κ_x = (n − m)/2 log 2π − ½ log|Σ| − ½ (y − c)ᵀΣ⁻¹(y − c).
* Proper N(out | μ, V): μ(x) = N(M x + c | μ, V + Σ), the same with Σ replaced by R = V + Σ.
* Improper exp(κ) h_m(y) exp(ξᵀy − ½ yᵀW y) (W only semi-definite): completing the square in y,

      ∫ N(y | z, Σ) exp(κ) h_m(y) exp(ξᵀy − ½ yᵀW y) dy
          = exp(κ) (2π)^{−m/2} |I + ΣW|^{−½} exp(½ ξᵀΣb) exp(−½ zᵀA z + zᵀb),   z = M x + c,

  with A = W (I + ΣW)⁻¹ = (I + WΣ)⁻¹W (symmetric, positive semi-definite) and b = (I + WΣ)⁻¹ξ: no inverse
  of W, which may be singular (I + ΣW is invertible for Σ positive definite, W semi-definite). Hence

      W_x = Mᵀ A M,   ξ_x = Mᵀ (b − A c) = Mᵀ (I + WΣ)⁻¹ (ξ − W c),
      κ_x = κ + (n − m)/2 log 2π − ½ log|I + WΣ| + ½ ξᵀΣb − ½ cᵀA c + cᵀb.

  For a proper message (W = V⁻¹, ξ = V⁻¹μ) A = (V + Σ)⁻¹: the case above.

As every sum-product rule, it treats the incoming message as normalised (log_scale 0) and returns its own
local log-scale; the engine adds the incoming one. A GaussianLikelihood keeps its κ in its log_scale, so
the information form takes κ = 0 (the family's −A(η) at log_scale 0, which is 0 for a likelihood).
"""
import numpy as np

from fgraph.families import Distribution, GaussianLikelihood, MultivariateNormal
from fgraph.families.linalg import cholesky_factor, cholesky_log_det, matvec, triangular_solve_vector
from fgraph.families.mvnormal import LOG_2PI
from fgraph.registry import rule
from fgraph.nodes.mv_linear import MvLinearNode
from fgraph.rules.mv_linear.out import drop_rounding_directions


def _symmetric(matrix: np.ndarray) -> np.ndarray:
    return 0.5 * (matrix + np.swapaxes(matrix, -1, -2))


def _likelihood(weighted_mean, precision, log_coefficient) -> MultivariateNormal:
    """exp(κ) h_n(x) exp(ξᵀx − ½ xᵀWx) in x: a proper normal (with its log-scale) where W is positive
    definite for every batch element, else a GaussianLikelihood."""
    return MultivariateNormal.from_coefficient((weighted_mean, -0.5 * precision), log_coefficient)


@rule(MvLinearNode, "in")
def sum_product(m_out: MultivariateNormal, node) -> MultivariateNormal:
    """∫ N(out | M in + c, Σ) μ_out(out) dout as a function of ``in``, for any member μ_out of the family.

    A proper N(out | μ, V) gives N(M in + c | μ, V + Σ): with R = V + Σ = F Fᵀ, B = F⁻¹M and
    e = F⁻¹(μ − c), W_x = BᵀB, ξ_x = Bᵀe and κ_x = (n − m)/2 log 2π − ½ log|R| − ½ |e|²; a
    GaussianLikelihood, whose W may be singular, goes through :func:`from_likelihood` (module docstring).
    One rule for both: the compiler binds rules by the families the upstream rules declare, and a rule that
    may return either (the message of an observation towards ``out``'s variable) declares MultivariateNormal.
    """
    if isinstance(m_out, GaussianLikelihood):
        return from_likelihood(m_out, node)
    matrix = node.matrix
    m, n = matrix.shape[-2:]
    factor = cholesky_factor(_symmetric(m_out.cov + node.cov))  # R is positive definite: Σ is
    whitened = np.linalg.solve(factor, matrix)  # B = F⁻¹M, (..., m, n)
    residual = triangular_solve_vector(factor, m_out.mean - node.offset)  # e
    transposed = np.swapaxes(whitened, -1, -2)
    coefficient = 0.5 * (n - m) * LOG_2PI - 0.5 * cholesky_log_det(factor) - 0.5 * np.sum(residual**2, axis=-1)
    return _likelihood(matvec(transposed, residual), _symmetric(transposed @ whitened), coefficient)


def from_likelihood(m_out: GaussianLikelihood, node) -> MultivariateNormal:
    """∫ N(out | M in + c, Σ) exp(κ) h(out) exp(ξᵀout − ½ outᵀW out) dout as a function of ``in``:
    W_x = Mᵀ W (I + ΣW)⁻¹ M, ξ_x = Mᵀ (I + WΣ)⁻¹ (ξ − W c), with its exact coefficient (module docstring)."""
    matrix, cov, offset = node.matrix, node.cov, node.offset
    m, n = matrix.shape[-2:]
    weighted_mean, precision = m_out.weighted_mean, m_out.precision
    spread = np.eye(m) + precision @ cov  # I + WΣ, invertible, determinant > 0 (similar to I + LᵀWL)
    absorbed = _symmetric(np.linalg.solve(spread, precision))  # A = (I + WΣ)⁻¹W
    pulled = np.linalg.solve(spread, weighted_mean[..., None])[..., 0]  # b = (I + WΣ)⁻¹ξ
    shifted = matvec(absorbed, offset)  # A c
    transposed = np.swapaxes(matrix, -1, -2)
    # κ of μ_out as if normalised (log_scale 0; the engine adds the incoming scale): −A(η), 0 for a likelihood
    coefficient = (-m_out.log_partition() + 0.5 * (n - m) * LOG_2PI - 0.5 * np.linalg.slogdet(spread)[1]
                   + 0.5 * np.sum(weighted_mean * matvec(cov, pulled), axis=-1)
                   - 0.5 * np.sum(offset * shifted, axis=-1) + np.sum(offset * pulled, axis=-1))
    # W_x = MᵀAM: directions W leaves flat are flat up to the rounding of the solve; they are set flat
    in_precision = drop_rounding_directions(_symmetric(transposed @ absorbed @ matrix), node.largest_information)
    return _likelihood(matvec(transposed, pulled - shifted), in_precision, coefficient)


@rule(MvLinearNode, "in")
def mean_field(q_out: Distribution, node) -> MultivariateNormal:
    """exp E_q[log N(out | M in + c, Σ)] ∝ exp(xᵀMᵀΣ⁻¹(E[out] − c) − ½ xᵀMᵀΣ⁻¹M x) in x = ``in``.

    Its coefficient κ_x = (n − m)/2 log 2π − ½ log|Σ| − ½ (E[out] − c)ᵀΣ⁻¹(E[out] − c) makes it the exact
    sum-product message N(y | M in + c, Σ) when ``out`` = y is observed (a point mass); for other
    marginals it is irrelevant (VMP). A GaussianLikelihood unless MᵀΣ⁻¹M is positive definite.
    """
    matrix = node.matrix
    m, n = matrix.shape[-2:]
    residual = q_out.mean - node.offset
    weighted_residual = matvec(node.noise_precision, residual)  # Σ⁻¹(y − c)
    coefficient = (0.5 * (n - m) * LOG_2PI - 0.5 * node.cov_log_det
                   - 0.5 * np.sum(residual * weighted_residual, axis=-1))
    return _likelihood(matvec(np.swapaxes(matrix, -1, -2), weighted_residual), node.information, coefficient)
