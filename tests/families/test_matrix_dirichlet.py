"""MatrixDirichlet (independent Dirichlet columns) and Contingency (joint of two categoricals)."""
import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import gammaln

from fgraph.families import Contingency, MatrixDirichlet, PointMass, product

ALPHA = np.array([[0.7, 2.0, 1.0], [1.5, 0.6, 3.0], [2.5, 1.0, 1.0]])  # 3 x 3, columns are the Dirichlets


def column_reference(alpha, j):
    return stats.dirichlet(alpha[:, j])


def test_moments_and_entropy_match_scipy_per_column():
    family = MatrixDirichlet(ALPHA)
    for j in range(3):
        reference = column_reference(ALPHA, j)
        np.testing.assert_allclose(family.mean[:, j], reference.mean(), rtol=1e-12)
        np.testing.assert_allclose(family.var[:, j], reference.var(), rtol=1e-12)
    np.testing.assert_allclose(family.entropy(), sum(column_reference(ALPHA, j).entropy() for j in range(3)), rtol=1e-10)
    np.testing.assert_allclose(family.mean.sum(axis=0), 1.0, rtol=1e-12)


def test_logpdf_matches_scipy():
    family = MatrixDirichlet(ALPHA)
    rng = np.random.default_rng(0)
    for _ in range(4):
        matrix = np.stack([rng.dirichlet(ALPHA[:, j]) for j in range(3)], axis=1)
        expected = sum(column_reference(ALPHA, j).logpdf(matrix[:, j]) for j in range(3))
        np.testing.assert_allclose(family.logpdf(matrix), expected, rtol=1e-10)
    assert family.logpdf(np.full((3, 3), 0.5)) == -np.inf  # columns off the simplex


def test_mean_log_by_quadrature():
    alpha = np.array([[0.8, 2.0], [1.5, 1.0]])
    family = MatrixDirichlet(alpha)
    for j in range(2):
        density = stats.beta(alpha[0, j], alpha[1, j])
        np.testing.assert_allclose(family.mean_log[0, j], integrate.quad(lambda u: np.log(u) * density.pdf(u), 0, 1)[0], rtol=1e-8)
        np.testing.assert_allclose(family.mean_log[1, j], integrate.quad(lambda u: np.log1p(-u) * density.pdf(u), 0, 1)[0], rtol=1e-8)


def test_sampling():
    family = MatrixDirichlet(np.broadcast_to(ALPHA, (2, 3, 3)))
    samples = family.sample(np.random.default_rng(1), 50_000)
    assert samples.shape == (50_000, 2, 3, 3)
    np.testing.assert_allclose(samples.sum(axis=-2), 1.0, rtol=1e-12)
    error = np.sqrt(family.var / 50_000)
    assert np.all(np.abs(samples.mean(axis=0) - family.mean) < 5.0 * error)


def test_product_normaliser():
    """log ∫ p1(A) p2(A) dA: the columns are independent, so it is a sum over columns of 1-D integrals (K_out = 2)."""
    alpha_1, alpha_2 = np.array([[2.0, 1.5], [3.0, 0.8]]), np.array([[1.2, 2.0], [0.9, 1.0]])
    result = product(MatrixDirichlet(alpha_1), MatrixDirichlet(alpha_2))
    np.testing.assert_allclose(result.alpha, alpha_1 + alpha_2 - 1.0, rtol=1e-12)
    expected = sum(
        np.log(integrate.quad(lambda u: stats.beta.pdf(u, *alpha_1[:, j]) * stats.beta.pdf(u, *alpha_2[:, j]), 0.0, 1.0)[0])
        for j in range(2)
    )
    np.testing.assert_allclose(result.log_scale, expected, rtol=1e-8)


def test_mode_per_column():
    family = MatrixDirichlet([[2.0, 0.5], [3.0, 3.0], [5.0, 5.0]])
    np.testing.assert_allclose(family.mode, [[1 / 7, 0.0], [2 / 7, 2 / 6], [4 / 7, 4 / 6]])


def test_natural_round_trip_and_indexing():
    family = MatrixDirichlet(np.stack([ALPHA, 2.0 * ALPHA]))
    again = MatrixDirichlet.from_natural(family.natural_parameters())
    np.testing.assert_allclose(again.alpha, family.alpha)
    np.testing.assert_allclose(family[1].alpha, 2.0 * ALPHA)
    assert family.broadcast_to((4, 2)).batch_shape == (4, 2)


@pytest.mark.parametrize("alpha, words", [([1.0, 2.0], "two last axes"), ([[1.0, 0.0], [1.0, 1.0]], "strictly positive")])
def test_matrix_dirichlet_validation(alpha, words):
    with pytest.raises(ValueError, match=f"alpha.*{words}|{words}"):
        MatrixDirichlet(alpha)


# ------------------------------------------------------------------ Contingency
TABLE = np.array([[0.1, 0.2, 0.0], [0.3, 0.15, 0.25]])


def test_contingency_moments():
    table = Contingency(TABLE)
    np.testing.assert_allclose(table.mean, TABLE)
    np.testing.assert_allclose(table.out_probabilities, [0.3, 0.7])
    np.testing.assert_allclose(table.in_probabilities, [0.4, 0.35, 0.25])
    nonzero = TABLE[TABLE > 0]
    np.testing.assert_allclose(table.entropy(), -np.sum(nonzero * np.log(nonzero)), rtol=1e-12)
    np.testing.assert_allclose(table.mode, [[0, 0, 0], [1, 0, 0]])


def test_contingency_logpdf_and_sampling():
    table = Contingency(TABLE)
    np.testing.assert_allclose(table.logpdf(np.array([[0, 0, 0], [0, 1, 0]])), np.log(0.15))
    assert table.logpdf(np.array([[0, 0, 1], [0, 0, 0]])) == -np.inf  # a pair of probability zero
    assert table.logpdf(np.ones((2, 3))) == -np.inf  # not one-hot
    samples = table.sample(np.random.default_rng(2), 100_000)
    assert samples.shape == (100_000, 2, 3)
    np.testing.assert_allclose(samples.sum(axis=(-2, -1)), 1.0)
    error = np.sqrt(TABLE * (1 - TABLE) / 100_000)
    assert np.all(np.abs(samples.mean(axis=0) - TABLE) <= 5.0 * error)


def test_contingency_exponential_family():
    table = Contingency(TABLE)
    again = Contingency.from_natural(table.natural_parameters())
    np.testing.assert_allclose(again.probabilities, TABLE)
    # the entropy from the generic formula A - <eta, E[T]> (0 log 0 = 0) equals the direct one
    eta = table.natural_parameters()
    generic = Contingency.log_partition_of(eta) - Contingency.inner(eta, table.expected_statistics())
    np.testing.assert_allclose(generic, table.entropy(), rtol=1e-12)
    # product with a point mass: the point's probability
    point = product(table, PointMass([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]], 2))
    np.testing.assert_allclose(point.log_scale, np.log(0.3))


@pytest.mark.parametrize("probabilities, words", [
    ([[0.5, 0.6], [0.0, 0.0]], "sum to one"),
    ([[1.2, -0.2], [0.0, 0.0]], "non-negative"),
    ([0.5, 0.5], "two last axes"),
])
def test_contingency_validation(probabilities, words):
    with pytest.raises(ValueError, match=words):
        Contingency(probabilities)


def test_log_partition_is_sum_of_column_log_betas():
    alpha = ALPHA
    expected = sum(np.sum(gammaln(alpha[:, j])) - gammaln(np.sum(alpha[:, j])) for j in range(3))
    np.testing.assert_allclose(MatrixDirichlet.log_partition_of((alpha - 1.0,)), expected, rtol=1e-12)
