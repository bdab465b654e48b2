"""The matrix-normal–gamma family against scipy densities, Monte Carlo and its own exponential-family identities."""
import numpy as np
import pytest
from scipy import stats

from fgraph.errors import ModelError
from fgraph.families import product
from fgraph.families.base import ExponentialFamily
from fgraph.families.matrix_normal_gamma import MatrixNormalGamma, MatrixNormalGammaLikelihood

SAMPLE_COUNT = 200_000
STANDARD_ERRORS = 5.0

MEAN = np.array([[0.5, -1.0, 0.2], [1.5, 0.3, -0.4]])  # h = 2, p = 3
COVARIANCE = np.array([[1.0, 0.3, -0.2], [0.3, 0.8, 0.1], [-0.2, 0.1, 0.5]])
SHAPE = np.array([2.5, 4.0])
RATE = np.array([1.5, 0.7])


def member(**changes):
    parameters = dict(mean=MEAN, column_covariance=COVARIANCE, shape=SHAPE, rate=RATE)
    parameters.update(changes)
    return MatrixNormalGamma(**parameters)


def scipy_logpdf(matrix, precisions, mean=MEAN, covariance=COVARIANCE, shape=SHAPE, rate=RATE):
    """Π_i Gamma(λ_i | α_i, β_i) N(a_i | m_i, V/λ_i) from scipy's densities, for draws (..., h, p), (..., h).

    N(a | m, V/λ) = λ^{p/2} N(m + √λ (a − m) | m, V): scipy's normal with V, at the whitened point.
    """
    total = 0.0
    columns = mean.shape[-1]
    for i in range(len(shape)):
        lam = precisions[..., i]
        total = total + stats.gamma.logpdf(lam, shape[i], scale=1.0 / rate[i])
        point = mean[i] + np.sqrt(lam)[..., None] * (matrix[..., i, :] - mean[i])
        total = total + stats.multivariate_normal.logpdf(point, mean[i], covariance) + 0.5 * columns * np.log(lam)
    return total


def scipy_draws(count, seed, mean=MEAN, covariance=COVARIANCE, shape=SHAPE, rate=RATE):
    """(A, λ) drawn with scipy: λ_i from the gamma, then each row from its normal."""
    rng = np.random.default_rng(seed)
    precisions = np.stack([stats.gamma.rvs(shape[i], scale=1.0 / rate[i], size=count, random_state=rng)
                           for i in range(len(shape))], axis=-1)
    white = stats.multivariate_normal.rvs(np.zeros(mean.shape[-1]), covariance, size=(count, len(shape)),
                                          random_state=rng)
    return mean + white / np.sqrt(precisions)[..., None], precisions


def assert_monte_carlo(samples, expected):
    """The sample mean of ``samples`` (axis 0) within 5 standard errors of ``expected``."""
    error = samples.std(axis=0) / np.sqrt(samples.shape[0])
    assert np.all(np.abs(samples.mean(axis=0) - expected) <= STANDARD_ERRORS * error + 1e-12), (
        samples.mean(axis=0), expected)


def test_logpdf_matches_scipy():
    q = member()
    matrix, precisions = scipy_draws(5, seed=1)
    expected = [stats.multivariate_normal.logpdf(matrix[j, 0], MEAN[0], COVARIANCE / precisions[j, 0])
                + stats.multivariate_normal.logpdf(matrix[j, 1], MEAN[1], COVARIANCE / precisions[j, 1])
                + stats.gamma.logpdf(precisions[j], SHAPE, scale=1 / RATE).sum() for j in range(5)]
    np.testing.assert_allclose(scipy_logpdf(matrix, precisions), expected, rtol=1e-12)
    np.testing.assert_allclose(q.logpdf((matrix, precisions)), expected, rtol=1e-12)


def test_expectations_against_monte_carlo():
    q = member()
    matrix, precisions = scipy_draws(SAMPLE_COUNT, seed=2)
    assert_monte_carlo(precisions, q.mean_precision)
    assert_monte_carlo(np.log(precisions), q.mean_log_precision)
    assert_monte_carlo(matrix, q.mean)
    assert_monte_carlo(precisions[..., None] * matrix, q.mean_weighted_rows)
    row_outer = precisions[..., None, None] * matrix[..., :, None] * matrix[..., None, :]
    assert_monte_carlo(row_outer, q.mean_weighted_row_outer)
    assert_monte_carlo(row_outer.sum(axis=1), q.mean_weighted_outer_sum)


def test_expectations_closed_forms():
    q = member()
    np.testing.assert_allclose(q.mean_precision, SHAPE / RATE, rtol=1e-15)
    expected_log = [stats.gamma(a, scale=1 / b).expect(np.log) for a, b in zip(SHAPE, RATE)]
    np.testing.assert_allclose(q.mean_log_precision, expected_log, rtol=1e-8)
    lam = SHAPE / RATE
    expected = COVARIANCE + lam[:, None, None] * MEAN[:, :, None] * MEAN[:, None, :]
    np.testing.assert_allclose(q.mean_weighted_row_outer, expected, rtol=1e-14)
    np.testing.assert_allclose(q.mean_weighted_outer_sum, expected.sum(0), rtol=1e-14)


def test_entropy_against_scipy_and_monte_carlo():
    q = member()
    # the sum of the gamma entropies and, per row, E_λ[H(N(m_i, V/λ_i))] = H(N(0, V)) − p/2 E[log λ_i]
    gamma_entropy = stats.gamma(SHAPE, scale=1.0 / RATE).entropy().sum()
    normal_entropy = stats.multivariate_normal(np.zeros(3), COVARIANCE).entropy()
    expected = gamma_entropy + 2 * normal_entropy - 1.5 * q.mean_log_precision.sum()
    np.testing.assert_allclose(q.entropy(), expected, rtol=1e-12)
    # the generic exponential-family formula A(η) − ⟨η, E[T]⟩ − log h gives the same number
    np.testing.assert_allclose(ExponentialFamily.entropy(q), expected, rtol=1e-12)
    matrix, precisions = scipy_draws(SAMPLE_COUNT, seed=3)
    log_densities = scipy_logpdf(matrix, precisions)
    assert_monte_carlo(-log_densities, q.entropy())


def test_kl_divergence_against_monte_carlo():
    q = member()
    other_mean = MEAN + 0.3
    other_covariance = 1.5 * np.eye(3)
    other_shape, other_rate = np.array([2.0, 2.0]), np.array([1.0, 1.0])
    p = MatrixNormalGamma(other_mean, other_covariance, other_shape, other_rate)
    matrix, precisions = scipy_draws(SAMPLE_COUNT, seed=4)
    ratio = (scipy_logpdf(matrix, precisions)
             - scipy_logpdf(matrix, precisions, other_mean, other_covariance, other_shape, other_rate))
    assert_monte_carlo(ratio, q.kl_divergence(p))
    assert q.kl_divergence(p) > 0.0
    np.testing.assert_allclose(q.kl_divergence(q), 0.0, atol=1e-12)


def test_natural_round_trip_and_log_partition():
    q = member()
    eta = q.natural_parameters()
    # the natural parameters written out from the definitions
    precision = np.linalg.inv(COVARIANCE)
    np.testing.assert_allclose(eta[0], -0.5 * precision, rtol=1e-12)
    np.testing.assert_allclose(eta[1], MEAN @ precision, rtol=1e-12)
    np.testing.assert_allclose(eta[2], -RATE - 0.5 * np.einsum("ij,jk,ik->i", MEAN, precision, MEAN), rtol=1e-12)
    np.testing.assert_allclose(eta[3], SHAPE - 1.0 + 1.5, rtol=1e-15)
    back = MatrixNormalGamma.from_natural(eta)
    np.testing.assert_allclose(back.matrix_mean, MEAN, rtol=1e-12)
    np.testing.assert_allclose(back.column_covariance, COVARIANCE, rtol=1e-12)
    np.testing.assert_allclose(back.shape, SHAPE, rtol=1e-14)
    np.testing.assert_allclose(back.rate, RATE, rtol=1e-12)
    # A(η) = Σ_i [log Γ(α_i) − α_i log β_i] + h/2 log|V|, both from the parameters and from η
    from scipy.special import gammaln
    expected = np.sum(gammaln(SHAPE) - SHAPE * np.log(RATE)) + np.linalg.slogdet(COVARIANCE)[1]
    np.testing.assert_allclose(q.log_partition(), expected, rtol=1e-12)
    np.testing.assert_allclose(MatrixNormalGamma.log_partition_of(eta), expected, rtol=1e-12)
    # the density is h exp(⟨η, T⟩ − A): check at a point
    matrix, precisions = scipy_draws(1, seed=5)
    statistics = (np.einsum("i,ij,ik->jk", precisions[0], matrix[0], matrix[0]), precisions[0][:, None] * matrix[0],
                  precisions[0], np.log(precisions[0]))
    log_density = (MatrixNormalGamma.inner(eta, statistics) - expected
                   + MatrixNormalGamma.log_base_measure_of(eta))
    np.testing.assert_allclose(log_density, scipy_logpdf(matrix[0], precisions[0]), rtol=1e-12)


def test_product_sums_natural_parameters_and_carries_the_normaliser():
    a = member()
    b = member(mean=np.zeros((2, 3)), column_covariance=2.0 * np.eye(3), shape=np.array([3.0, 1.5]),
               rate=np.array([2.0, 1.0]))
    joint = product(a, b)
    assert type(joint) is MatrixNormalGamma
    for x, y, z in zip(a.natural_parameters(), b.natural_parameters(), joint.natural_parameters()):
        np.testing.assert_allclose(z, x + y, rtol=1e-12, atol=1e-14)
    # its density is a·b/Z: at any point log a + log b − log joint = log Z, the same number everywhere
    matrix, precisions = scipy_draws(3, seed=6)
    log_z = a.logpdf((matrix, precisions)) + b.logpdf((matrix, precisions)) - joint.logpdf((matrix, precisions))
    np.testing.assert_allclose(log_z, joint.log_scale, rtol=1e-10)
    # and Z = E_a[b(A, λ)], by Monte Carlo
    matrix, precisions = scipy_draws(SAMPLE_COUNT, seed=7)
    values = np.exp(b.logpdf((matrix, precisions)))
    error = values.std() / np.sqrt(SAMPLE_COUNT)
    assert abs(values.mean() - np.exp(joint.log_scale)) < STANDARD_ERRORS * error


def test_likelihood_times_prior_is_the_conjugate_posterior():
    """N observations y = A x + ε: the likelihood message times the prior is Bayesian multivariate regression."""
    rng = np.random.default_rng(8)
    inputs = np.concatenate([rng.normal(size=(2, 2)), np.ones((2, 1))], axis=1)  # N = 2 < p = 3: improper alone
    outputs = rng.normal(size=(2, 2))
    likelihood = MatrixNormalGammaLikelihood(-0.5 * inputs.T @ inputs, outputs.T @ inputs,
                                             -0.5 * np.sum(outputs ** 2, axis=0), np.full(2, 1.0),
                                             log_scale=-2 * 0.5 * 2 * np.log(2 * np.pi) + 2 * 3 / 2 * np.log(2 * np.pi))
    with pytest.raises(ModelError, match="prior"):
        likelihood.mean
    prior = member()
    posterior = product(prior, likelihood)
    assert type(posterior) is MatrixNormalGamma
    # the textbook update: V' = (V⁻¹ + XᵀX)⁻¹, M' = (M V⁻¹ + Yᵀ X) V', α' = α + N/2,
    # β'_i = β_i + ½ (y_iᵀ y_i + m_iᵀ V⁻¹ m_i − m'_iᵀ V'⁻¹ m'_i)
    precision = np.linalg.inv(COVARIANCE) + inputs.T @ inputs
    covariance = np.linalg.inv(precision)
    mean = (MEAN @ np.linalg.inv(COVARIANCE) + outputs.T @ inputs) @ covariance
    rate = RATE + 0.5 * (np.sum(outputs ** 2, axis=0) + np.einsum("ij,jk,ik->i", MEAN, np.linalg.inv(COVARIANCE), MEAN)
                         - np.einsum("ij,jk,ik->i", mean, precision, mean))
    np.testing.assert_allclose(posterior.column_covariance, covariance, rtol=1e-12)
    np.testing.assert_allclose(posterior.matrix_mean, mean, rtol=1e-12)
    np.testing.assert_allclose(posterior.shape, SHAPE + 1.0, rtol=1e-14)
    np.testing.assert_allclose(posterior.rate, rate, rtol=1e-12)
    # the log-scale is the log marginal likelihood: log ∫ p(A, λ) Π_n N(y_n | A x_n, Λ⁻¹), which per output
    # row is a multivariate Student-t of the N outputs (by the normal-gamma identity, checked at two points)
    matrix, precisions = scipy_draws(2, seed=9)
    for j in range(2):
        log_likelihood = sum(stats.norm.logpdf(outputs[n, i], matrix[j, i] @ inputs[n], 1 / np.sqrt(precisions[j, i]))
                             for n in range(2) for i in range(2))
        log_evidence = prior.logpdf((matrix[j], precisions[j])) + log_likelihood - posterior.logpdf(
            (matrix[j], precisions[j]))
        np.testing.assert_allclose(posterior.log_scale, log_evidence, rtol=1e-10)


def test_batches_broadcast_and_index():
    q = MatrixNormalGamma(np.stack([MEAN, 2 * MEAN]), COVARIANCE, SHAPE, np.stack([RATE, 2 * RATE]))
    assert q.batch_shape == (2,) and q.event_shape == (2, 3)
    np.testing.assert_allclose(q[1].matrix_mean, 2 * MEAN)
    np.testing.assert_allclose(q[1].entropy(), member(mean=2 * MEAN, rate=2 * RATE).entropy(), rtol=1e-14)
    wide = q.broadcast_to((4, 2))
    assert wide.batch_shape == (4, 2)
    np.testing.assert_allclose(wide.entropy()[3], q.entropy(), rtol=1e-14)
    shared = MatrixNormalGamma(MEAN, COVARIANCE, 2.0, 1.0)  # one shape and one rate for every row
    np.testing.assert_array_equal(shared.shape, [2.0, 2.0])
    assert shared.batch_shape == ()


@pytest.mark.parametrize("changes, message", [
    ({"column_covariance": np.eye(2)}, "columns"),
    ({"column_covariance": -np.eye(3)}, "column_covariance must be symmetric positive definite"),
    ({"shape": np.array([1.0, 0.0])}, "shape must be strictly positive"),
    ({"rate": np.array([1.0, -1.0])}, "rate must be strictly positive"),
    ({"rate": np.ones(3)}, "do not fit"),
    ({"mean": np.ones(3)}, r"\(\.\.\., h, p\)"),
])
def test_bad_parameters(changes, message):
    with pytest.raises(ModelError, match=message):
        member(**changes)


def test_likelihood_power_broadcast_and_index():
    """A likelihood f = exp(κ) h exp(⟨η, T⟩): f^w has natural parameters w η and coefficient w κ + (w − 1) log h,
    checked as the value of the function at a point; batches broadcast and index like a member's."""
    eta = member().natural_parameters()
    likelihood = MatrixNormalGammaLikelihood(*eta, log_scale=0.3)
    matrix, precisions = scipy_draws(1, seed=10)
    statistics = (np.einsum("i,ij,ik->jk", precisions[0], matrix[0], matrix[0]), precisions[0][:, None] * matrix[0],
                  precisions[0], np.log(precisions[0]))
    log_base = MatrixNormalGamma.log_base_measure_of(eta)

    def log_value(function):
        return function.log_scale + log_base + MatrixNormalGamma.inner(function.natural_parameters(), statistics)

    powered = likelihood.power(0.4)
    np.testing.assert_allclose(log_value(powered), 0.4 * log_value(likelihood), rtol=1e-12)
    wide = likelihood.broadcast_to((3,))
    assert wide.batch_shape == (3,)
    np.testing.assert_allclose(log_value(wide[2]), log_value(likelihood), rtol=1e-14)
    with pytest.raises(ModelError, match="prior"):
        likelihood.entropy()


def test_no_mode_as_one_array():
    with pytest.raises(ModelError, match="pair"):
        member().mode
