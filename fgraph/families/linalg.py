"""Batched linear algebra through Cholesky factors, shared by the matrix families.

Matrices are arrays of shape ``batch_shape + (d, d)``; vectors are arrays of
shape ``batch_shape + (d,)``. Batch axes broadcast as in numpy.

numpy's ``linalg`` routines are generalised ufuncs that loop over the batch
axes in C, whereas scipy's triangular solvers loop over them in Python. The
triangular systems below are therefore solved with ``numpy.linalg.solve``:
it is exact for triangular matrices too, only not specialised to them, and
at the small event sizes of message passing the C loop matters far more than
the constant factor.
"""
from __future__ import annotations

import math

import numpy as np

from fgraph.errors import ModelError
from fgraph.families.base import Array, compressed

# Relative asymmetry |m - m^T| / max|m| accepted as rounding error; matrices
# built by arithmetic (inverses, sums of outer products) are rarely bitwise symmetric.
SYMMETRY_TOLERANCE = 1e-8


def check_square(matrix: Array, name: str) -> None:
    """Raise ValueError unless ``matrix`` has shape ``batch_shape + (d, d)`` with ``d >= 1``."""
    if matrix.ndim < 2 or matrix.shape[-1] != matrix.shape[-2] or matrix.shape[-1] == 0:
        raise ModelError(
            f"{name} must be a square matrix or a batch of them (shape (..., d, d)), got shape {matrix.shape}"
        )


def check_symmetric(matrix: Array, name: str) -> None:
    """Raise ValueError unless ``matrix`` equals its transpose up to :data:`SYMMETRY_TOLERANCE`."""
    asymmetry = np.max(np.abs(matrix - np.swapaxes(matrix, -1, -2)), initial=0.0)
    magnitude = np.max(np.abs(matrix), initial=0.0)
    if asymmetry > SYMMETRY_TOLERANCE * magnitude:
        raise ModelError(
            f"{name} must be symmetric, but |{name} - {name}^T| reaches {asymmetry:.3g}; "
            f"symmetrise it with ({name} + {name}^T) / 2"
        )


# Up to this size, over at least this many matrices, triangular inverses and solves loop over the entries in
# numpy, each step for the whole batch, instead of a general solve per matrix: a batch of 10^5 2×2 factors
# (one per point, restart and expert) takes 0.5 ms instead of 16 ms (inverse) and 10 ms (solve).
SMALL_MATRIX_SIZE = 4
SMALL_MATRIX_MIN_BATCH = 64


def _small_batch(matrix: Array) -> bool:
    """Whether ``matrix`` (..., d, d) takes the small-matrix paths (:data:`SMALL_MATRIX_SIZE`)."""
    return 1 < matrix.shape[-1] <= SMALL_MATRIX_SIZE and math.prod(matrix.shape[:-2]) >= SMALL_MATRIX_MIN_BATCH


def _small_lower_inverse(factor: Array) -> Array:
    """``factor⁻¹`` for a batch of small lower-triangular matrices, row by row (forward substitution)."""
    dimension = factor.shape[-1]
    inverse = np.zeros(factor.shape)
    for i in range(dimension):
        inverse[..., i, i] = reciprocal = 1.0 / factor[..., i, i]
        for j in range(i):  # (L W)_ij = 0: W_ij = −Σ_{j≤k<i} L_ik W_kj / L_ii
            inverse[..., i, j] = -np.sum(factor[..., i, j:i] * inverse[..., j:i, j], axis=-1) * reciprocal
    return inverse


def _small_lower_solve(factor: Array, right_hand_side: Array, transpose: bool) -> Array:
    """Solve ``L y = b`` (``Lᵀ y = b`` if ``transpose``) for small lower-triangular L, vectors ``(..., d)``."""
    dimension = factor.shape[-1]
    solution = np.zeros(np.broadcast_shapes(factor.shape[:-1], right_hand_side.shape))
    for i in (reversed(range(dimension)) if transpose else range(dimension)):
        if transpose:  # back substitution with the columns of L: y_i = (b_i − Σ_{k>i} L_ki y_k) / L_ii
            known = np.sum(factor[..., i + 1:, i] * solution[..., i + 1:], axis=-1)
        else:  # forward: y_i = (b_i − Σ_{k<i} L_ik y_k) / L_ii
            known = np.sum(factor[..., i, :i] * solution[..., :i], axis=-1)
        solution[..., i] = (right_hand_side[..., i] - known) / factor[..., i, i]
    return solution


def cholesky_factor(matrix: Array) -> Array:
    """``np.linalg.cholesky`` (lower factor; ``LinAlgError`` if a matrix is not positive definite), with
    batches of 1×1 matrices factored by a square root rather than a LAPACK call per element."""
    if matrix.shape[-1] == 1 and matrix.shape[-2] == 1:
        if not np.all(matrix > 0.0):  # also catches NaN, as LAPACK does
            raise np.linalg.LinAlgError("Matrix is not positive definite")
        return np.sqrt(matrix)
    return np.linalg.cholesky(matrix)  # fast on small matrices too (50 ns per 2×2 in large batches)


def cholesky(matrix: Array, name: str) -> Array:
    """Lower Cholesky factor, shape ``batch_shape + (d, d)``.

    Raises ValueError naming ``name`` when a matrix of the batch is not
    positive definite, so that the user learns which parameter is wrong.
    """
    try:
        return cholesky_factor(matrix)
    except np.linalg.LinAlgError as error:
        raise ModelError(
            f"{name} must be symmetric positive definite, but its Cholesky factorisation failed"
        ) from error


def cholesky_log_det(factor: Array) -> Array:
    """``log|m|`` from the Cholesky factor of ``m``, shape ``batch_shape``."""
    return 2.0 * np.sum(np.log(np.diagonal(factor, axis1=-2, axis2=-1)), axis=-1)


def cholesky_solve(factor: Array, right_hand_side: Array) -> Array:
    """Solve ``m y = right_hand_side`` for ``m = factor factor^T``; ``right_hand_side`` has shape ``(..., d, k)``."""
    if factor.shape[-1] == 1:  # scalars in a batch: the two divisions the solves make, without a solver per element
        return right_hand_side / factor / factor
    if _small_batch(factor):  # y = L⁻ᵀ (L⁻¹ b)
        inverse_factor = _small_lower_inverse(factor)
        return np.swapaxes(inverse_factor, -1, -2) @ (inverse_factor @ right_hand_side)
    forward = np.linalg.solve(factor, right_hand_side)
    return np.linalg.solve(np.swapaxes(factor, -1, -2), forward)


def cholesky_solve_vector(factor: Array, right_hand_side: Array) -> Array:
    """Solve ``m y = right_hand_side`` for ``m = factor factor^T``; ``right_hand_side`` has shape ``(..., d)``."""
    return cholesky_solve(factor, right_hand_side[..., None])[..., 0]


def cholesky_inverse(factor: Array) -> Array:
    """``m^{-1}`` for ``m = factor factor^T``, shape ``batch_shape + (d, d)``, exactly symmetric.

    Used only where the inverse itself is the wanted quantity (a covariance
    from a precision, a natural parameter from a scale matrix).
    """
    if factor.shape[-1] == 1:  # scalars in a batch (see cholesky_solve)
        return 1.0 / factor / factor
    inverse_factor = triangular_inverse(factor)
    if _small_batch(factor):  # W^T W as a sum of the rows' outer products: bitwise symmetric as it stands
        return sum(outer(row, row) for row in np.moveaxis(inverse_factor, -2, 0))
    inverse = np.swapaxes(inverse_factor, -1, -2) @ inverse_factor
    # Floating-point matmul does not guarantee that W^T W is bitwise symmetric;
    # downstream symmetry checks and Cholesky factorisations expect it to be.
    return 0.5 * (inverse + np.swapaxes(inverse, -1, -2))


# LAPACK's triangular inverse (trtri) called per matrix beats numpy's batched general solve against the
# identity by about 1.5× from this size on; below it, or over very many matrices, the C loop of the solve wins.
TRIANGULAR_INVERSE_MIN_SIZE = 8
TRIANGULAR_INVERSE_MAX_BATCH = 4096


def triangular_inverse(factor: Array) -> Array:
    """``factor⁻¹`` for lower-triangular ``factor`` of shape ``batch_shape + (d, d)`` (lower-triangular too, up to
    round-off above the diagonal on the path of the solve)."""
    size = factor.shape[-1]
    count = math.prod(factor.shape[:-2])
    if _small_batch(factor):
        return _small_lower_inverse(factor)
    if size < TRIANGULAR_INVERSE_MIN_SIZE or count > TRIANGULAR_INVERSE_MAX_BATCH:
        return np.linalg.solve(factor, np.broadcast_to(np.eye(size), factor.shape))
    from scipy.linalg.lapack import dtrtri  # not at import: scipy.linalg is slow to load

    flat = factor.reshape(count, size, size)
    inverse = np.empty_like(flat, dtype=float)
    for index in range(count):
        inverse[index], info = dtrtri(flat[index], lower=1)
        if info > 0:
            raise np.linalg.LinAlgError(f"singular triangular factor (zero pivot {info})")
    return inverse.reshape(factor.shape)


def triangular_solve_vector(triangular: Array, right_hand_side: Array, transpose: bool = False) -> Array:
    """Solve ``t y = right_hand_side`` (``t^T y = ...`` if ``transpose``) for lower-triangular ``t`` (a Cholesky
    factor), vectors of shape ``(..., d)``."""
    if triangular.shape[-1] == 1:  # scalars in a batch (see cholesky_solve)
        return right_hand_side / triangular[..., 0]
    if _small_batch(triangular):
        return _small_lower_solve(triangular, right_hand_side, transpose)
    if transpose:
        triangular = np.swapaxes(triangular, -1, -2)
    return np.linalg.solve(triangular, right_hand_side[..., None])[..., 0]


def matvec(matrix: Array, vector: Array) -> Array:
    """``matrix @ vector`` over batches, shape ``(..., d)``."""
    if _small_batch(matrix):  # element-wise over the batch rather than a tiny product per matrix
        return np.sum(matrix * vector[..., None, :], axis=-1)
    return (matrix @ vector[..., None])[..., 0]


def outer(left: Array, right: Array) -> Array:
    """``left right^T`` over batches, shape ``(..., d, d)``."""
    return left[..., :, None] * right[..., None, :]


# Beyond this many numbers (32 MB) the outer products of a plate of known rows (N · d(d+1)/2) are not formed:
# past it the row-by-row products cost memory of order N d only, and large plates gain little from one product.
ROW_OUTER_BUDGET = 2 ** 22


def row_outer_products(rows: Array) -> Array | None:
    """The upper triangles of ``x_n x_nᵀ`` (i ≤ j, row-major), ``(N, d(d+1)/2)``, for known rows ``(N, d)``
    (leading unit or broadcast axes allowed), or ``None`` where the rows differ along a leading axis or the
    array would exceed :data:`ROW_OUTER_BUDGET` numbers.

    With them, the quadratic forms ``x_nᵀ S_c x_n`` of many symmetric matrices S_c and the weighted sums
    ``Σ_n w_cn x_n x_nᵀ`` of many weight vectors w_c are each one matrix product, ``(C, d(d+1)/2) @ (·, N)`` and
    ``(C, N) @ (N, ·)``, instead of one small product per matrix or weight vector; symmetry halves their cost.
    """
    distinct = compressed(rows)
    if distinct.ndim < 2 or any(length != 1 for length in distinct.shape[:-2]):
        return None
    count, dimension = distinct.shape[-2:]
    if count * dimension * (dimension + 1) // 2 > ROW_OUTER_BUDGET:
        return None
    distinct = distinct.reshape(count, dimension)
    outer = np.empty((count, dimension * (dimension + 1) // 2))
    start = 0
    for i in range(dimension):  # row i of the upper triangle, x_i x_j for j ≥ i, without temporaries of that size
        np.multiply(distinct[:, i:i + 1], distinct[:, i:], out=outer[:, start:start + dimension - i])
        start += dimension - i
    return outer


def _packed_dimension(outer: Array) -> int:
    """d from the d(d+1)/2 columns of :func:`row_outer_products`."""
    return (math.isqrt(8 * outer.shape[1] + 1) - 1) // 2


def quadratic_forms_of_rows(outer: Array, matrices: Array) -> Array:
    """``x_nᵀ S x_n`` for every symmetric matrix S of ``matrices`` ``(..., d, d)`` and row n, shape ``(..., N)``,
    from the rows' outer products (:func:`row_outer_products`): ``Σ_i S_ii x_i² + 2 Σ_{i<j} S_ij x_i x_j``."""
    dimension = matrices.shape[-1]
    upper, lower = np.triu_indices(dimension)
    packed = matrices.reshape(-1, dimension, dimension)[:, upper, lower]
    packed[:, upper != lower] *= 2.0
    return (packed @ outer.T).reshape(matrices.shape[:-2] + (outer.shape[0],))


def weighted_outer_sums(outer: Array, weights: Array) -> Array:
    """``Σ_n w_n x_n x_nᵀ`` for every weight vector of ``weights`` ``(..., N)``, shape ``(..., d, d)`` (symmetric),
    from the rows' outer products (:func:`row_outer_products`)."""
    dimension = _packed_dimension(outer)
    upper, lower = np.triu_indices(dimension)
    packed = weights.reshape(-1, weights.shape[-1]) @ outer
    sums = np.empty((packed.shape[0], dimension, dimension))
    sums[:, upper, lower] = packed
    sums[:, lower, upper] = packed
    return sums.reshape(weights.shape[:-1] + (dimension, dimension))


def quadratic_forms(vectors: Array, matrices: Array) -> Array:
    """``xᵀ S x`` for every batch element, shape ``broadcast(batch of vectors, batch of matrices)``.

    ``vectors`` ``(..., d)``, ``matrices`` ``(..., d, d)``. Where the matrices
    are constant along the vectors' last batch axis (a plate of known inputs
    and one matrix per copy: matrices of batch ``(..., 1)``), that axis becomes
    the rows of one matrix product per matrix, ``X S``, instead of a product of
    a 1×d row with S per element.
    """
    if matrices.ndim == 2:
        weighted = vectors @ matrices
    elif vectors.ndim >= 2 and matrices.shape[-3] == 1:
        weighted = np.matmul(vectors, matrices[..., 0, :, :])  # (..., N, d) @ (..., d, d): rows of one product
    else:
        weighted = np.matmul(vectors[..., None, :], matrices)[..., 0, :]
    return np.einsum("...i,...i->...", weighted, vectors)
