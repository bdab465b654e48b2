"""Batched linear algebra helpers against element-by-element numpy."""
import numpy as np
import pytest

from fgraph.families.linalg import quadratic_forms

RNG = np.random.default_rng(20261123)


def brute_force(vectors, matrices):
    batch = np.broadcast_shapes(vectors.shape[:-1], matrices.shape[:-2])
    vectors = np.broadcast_to(vectors, batch + vectors.shape[-1:])
    matrices = np.broadcast_to(matrices, batch + matrices.shape[-2:])
    out = np.empty(batch)
    for index in np.ndindex(*batch):
        out[index] = vectors[index] @ matrices[index] @ vectors[index]
    return out


@pytest.mark.parametrize("vector_batch, matrix_batch", [
    ((5,), ()),             # one matrix for a plate
    ((5,), (1,)),           # the same, padded
    ((5,), (3, 1)),         # one matrix per copy, a shared plate of known inputs
    ((3, 5), (3, 1)),       # per-copy inputs
    ((1,), (3, 1)),
    ((5,), (5,)),           # a matrix per element
    ((2, 5), (4, 1, 1)),    # more leading axes on the matrices
    ((), (3,)),
])
def test_quadratic_forms_equal_element_by_element_products(vector_batch, matrix_batch):
    d = 4
    vectors = RNG.normal(size=vector_batch + (d,))
    matrices = RNG.normal(size=matrix_batch + (d, d))
    result = quadratic_forms(vectors, matrices)
    expected = brute_force(vectors, matrices)
    assert result.shape == expected.shape
    np.testing.assert_allclose(result, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("d", [1, 3])
@pytest.mark.parametrize("factor_batch, rhs_batch", [((), (5,)), ((4, 1), (5,)), ((5,), (5,)), ((2, 5), ())])
def test_cholesky_solves_and_inverse_equal_numpy(d, factor_batch, rhs_batch):
    """The solves through a Cholesky factor (with the scalar path for d = 1) against numpy's dense ones."""
    from fgraph.families.linalg import cholesky_inverse, cholesky_solve, cholesky_solve_vector, triangular_solve_vector

    roots = RNG.normal(size=factor_batch + (d, d))
    matrices = roots @ np.swapaxes(roots, -1, -2) + d * np.eye(d)
    factor = np.linalg.cholesky(matrices)
    vector = RNG.normal(size=rhs_batch + (d,))
    columns = RNG.normal(size=rhs_batch + (d, 2))
    np.testing.assert_allclose(cholesky_solve(factor, columns), np.linalg.solve(matrices, columns), rtol=1e-10)
    np.testing.assert_allclose(cholesky_solve_vector(factor, vector),
                               np.linalg.solve(matrices, vector[..., None])[..., 0], rtol=1e-10)
    np.testing.assert_allclose(cholesky_inverse(factor), np.linalg.inv(matrices), rtol=1e-10)
    np.testing.assert_allclose(triangular_solve_vector(factor, vector),
                               np.linalg.solve(factor, vector[..., None])[..., 0], rtol=1e-10)
    np.testing.assert_allclose(triangular_solve_vector(factor, vector, transpose=True),
                               np.linalg.solve(np.swapaxes(factor, -1, -2), vector[..., None])[..., 0], rtol=1e-10)


@pytest.mark.parametrize("batch", [(), (7,), (3, 4)])
def test_cholesky_factor_of_scalars_equals_lapack_and_refuses_what_it_refuses(batch):
    from fgraph.families.linalg import cholesky_factor

    matrices = RNG.uniform(0.1, 3.0, size=batch + (1, 1))
    np.testing.assert_allclose(cholesky_factor(matrices), np.linalg.cholesky(matrices), rtol=1e-15)
    wide = RNG.normal(size=batch + (3, 3))
    spd = wide @ np.swapaxes(wide, -1, -2) + np.eye(3)
    np.testing.assert_array_equal(cholesky_factor(spd), np.linalg.cholesky(spd))
    bad = matrices.copy()
    bad.reshape(-1)[-1] = -1.0
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.cholesky(bad)
    with pytest.raises(np.linalg.LinAlgError):
        cholesky_factor(bad)


@pytest.mark.parametrize("size, batch", [(3, (5,)), (12, (4, 2)), (12, ())])
def test_triangular_inverse_inverts_lower_triangular_factors(size, batch):
    """Both paths (numpy's batched solve for small matrices, LAPACK's trtri per matrix from 8×8 on)."""
    from fgraph.families.linalg import cholesky_inverse, triangular_inverse
    rng = np.random.default_rng(size)
    root = rng.normal(size=batch + (size, size + 4))
    matrices = root @ np.swapaxes(root, -1, -2)
    factor = np.linalg.cholesky(matrices)
    inverse = triangular_inverse(factor)
    np.testing.assert_allclose(inverse @ factor, np.broadcast_to(np.eye(size), factor.shape), atol=1e-10)
    np.testing.assert_allclose(np.triu(inverse, 1), 0.0, atol=1e-12)  # the solve path: up to round-off
    np.testing.assert_allclose(cholesky_inverse(factor), np.linalg.inv(matrices), rtol=1e-9, atol=1e-12)


def test_quadratic_forms_and_weighted_sums_from_the_rows_outer_products(monkeypatch):
    import fgraph.families.linalg as linalg
    rng = np.random.default_rng(3)
    rows = rng.normal(size=(7, 4))
    roots, weights = rng.normal(size=(2, 3, 4, 4)), rng.normal(size=(5, 7))
    matrices = roots + np.swapaxes(roots, -1, -2)  # symmetric, as second moments and covariances are
    outer = linalg.row_outer_products(np.broadcast_to(rows, (3, 1, 7, 4)))  # shared by copies: one (N, d²)
    np.testing.assert_allclose(linalg.quadratic_forms_of_rows(outer, matrices),
                               np.einsum("ni,cmij,nj->cmn", rows, matrices, rows), rtol=1e-12)
    np.testing.assert_allclose(linalg.weighted_outer_sums(outer, weights),
                               np.einsum("cn,ni,nj->cij", weights, rows, rows), rtol=1e-12)
    assert linalg.row_outer_products(rng.normal(size=(2, 7, 4))) is None  # rows per copy
    monkeypatch.setattr(linalg, "ROW_OUTER_BUDGET", 7 * 10 - 1)  # N d(d+1)/2 = 70
    assert linalg.row_outer_products(rows) is None  # over the budget


@pytest.mark.parametrize("d", [2, 3, 4])
@pytest.mark.parametrize("factor_batch, vector_batch", [((200,), (200,)), ((100, 1), (100, 7)), ((1, 70), (3, 70))])
def test_small_triangular_inverses_and_solves_equal_lapack(d, factor_batch, vector_batch):
    """Large batches of small Cholesky factors take the entry-by-entry paths (SMALL_MATRIX_SIZE): the inverse,
    the solves with L and Lᵀ and the Cholesky solve equal numpy's LAPACK, broadcasting the batches alike."""
    from fgraph.families import linalg

    spread = RNG.normal(size=factor_batch + (d, 2 * d))
    matrices = spread @ np.swapaxes(spread, -1, -2) / d + 0.1 * np.eye(d)
    factor = np.linalg.cholesky(matrices)
    vectors = RNG.normal(size=vector_batch + (d,))
    assert linalg._small_batch(factor)
    np.testing.assert_allclose(linalg.triangular_inverse(factor), np.linalg.inv(factor), rtol=1e-10, atol=1e-12)
    for transpose in (False, True):
        system = np.swapaxes(factor, -1, -2) if transpose else factor
        expected = np.linalg.solve(system, vectors[..., None])[..., 0]
        np.testing.assert_allclose(linalg.triangular_solve_vector(factor, vectors, transpose=transpose), expected,
                                   rtol=1e-10, atol=1e-12)
    columns = RNG.normal(size=factor_batch + (d, 3))
    np.testing.assert_allclose(linalg.cholesky_solve(factor, columns), np.linalg.solve(matrices, columns),
                               rtol=1e-9, atol=1e-11)
