"""The normal–Wishart family against scipy densities, Monte Carlo and its own exponential-family identities."""
import numpy as np
import pytest
from scipy import stats
from scipy.special import digamma, multigammaln

from fgraph.errors import ModelError
from fgraph.families import product
from fgraph.families.base import ExponentialFamily
from fgraph.families.normal_wishart import NormalWishart, NormalWishartLikelihood

MEAN = np.array([0.5, -1.0, 0.2])
BETA = 2.5
SCALE = np.array([[0.8, 0.2, -0.1], [0.2, 0.5, 0.05], [-0.1, 0.05, 1.2]])
DF = 5.5
D = 3
SAMPLES = 200_000


def member(**changes):
    parameters = dict(mean=MEAN, precision_scale=BETA, scale=SCALE, df=DF)
    parameters.update(changes)
    return NormalWishart(**parameters)


def scipy_logpdf(mean, precision, m=MEAN, beta=BETA, W=SCALE, nu=DF):
    return (stats.multivariate_normal.logpdf(mean, m, np.linalg.inv(beta * precision))
            + stats.wishart.logpdf(precision, nu, W))


def scipy_draws(count, seed):
    rng = np.random.default_rng(seed)
    precision = stats.wishart.rvs(DF, SCALE, size=count, random_state=rng).reshape(count, D, D)
    factors = np.linalg.cholesky(np.linalg.inv(BETA * precision))
    return MEAN + (factors @ rng.standard_normal((count, D, 1)))[..., 0], precision


def assert_monte_carlo(samples, expected):
    error = samples.std(axis=0) / np.sqrt(samples.shape[0])
    assert np.all(np.abs(samples.mean(axis=0) - expected) <= 5.0 * error + 1e-12), (samples.mean(axis=0), expected)


def test_logpdf_matches_scipy():
    mean, precision = scipy_draws(6, seed=1)
    expected = [scipy_logpdf(mean[j], precision[j]) for j in range(6)]
    np.testing.assert_allclose(member().logpdf((mean, precision)), expected, rtol=1e-12)


def test_natural_parameters_round_trip_and_density():
    q = member()
    eta = q.natural_parameters()
    np.testing.assert_allclose(eta[0], -0.5 * (np.linalg.inv(SCALE) + BETA * np.outer(MEAN, MEAN)), rtol=1e-12)
    np.testing.assert_allclose(eta[1], BETA * MEAN, rtol=1e-15)
    np.testing.assert_allclose(eta[2], -0.5 * BETA, rtol=1e-15)
    np.testing.assert_allclose(eta[3], 0.5 * (DF - D), rtol=1e-15)
    back = NormalWishart.from_natural(eta)
    np.testing.assert_allclose(back.location, MEAN, rtol=1e-12)
    np.testing.assert_allclose(back.scale, SCALE, rtol=1e-12)
    np.testing.assert_allclose([back.precision_scale, back.df], [BETA, DF], rtol=1e-14)
    # A = −(d/2) log β + (ν d/2) log 2 + (ν/2) log|W| + log Γ_d(ν/2), from the parameters and from η
    expected = (-0.5 * D * np.log(BETA) + 0.5 * DF * D * np.log(2) + 0.5 * DF * np.linalg.slogdet(SCALE)[1]
                + multigammaln(0.5 * DF, D))
    np.testing.assert_allclose([q.log_partition(), NormalWishart.log_partition_of(eta)], expected, rtol=1e-12)
    mean, precision = scipy_draws(1, seed=2)
    statistics = (precision[0], precision[0] @ mean[0], mean[0] @ precision[0] @ mean[0],
                  np.linalg.slogdet(precision[0])[1])
    log_density = NormalWishart.inner(eta, statistics) - expected + NormalWishart.log_base_measure_of(eta)
    np.testing.assert_allclose(log_density, scipy_logpdf(mean[0], precision[0]), rtol=1e-12)


def test_expectations_closed_forms_and_monte_carlo():
    q = member()
    np.testing.assert_allclose(q.mean_precision, DF * SCALE, rtol=1e-15)
    expected_logdet = sum(digamma((DF + 1 - i) / 2) for i in range(1, D + 1)) + D * np.log(2) \
        + np.linalg.slogdet(SCALE)[1]
    np.testing.assert_allclose(q.mean_logdet, expected_logdet, rtol=1e-12)
    np.testing.assert_allclose(q.mean_quadratic, D / BETA + DF * MEAN @ SCALE @ MEAN, rtol=1e-12)
    mean, precision = scipy_draws(SAMPLES, seed=3)
    assert_monte_carlo(mean, q.mean)
    assert_monte_carlo(precision, q.mean_precision)
    assert_monte_carlo(np.einsum("nij,nj->ni", precision, mean), q.mean_precision_times_mean)
    assert_monte_carlo(np.einsum("ni,nij,nj->n", mean, precision, mean), q.mean_quadratic)
    assert_monte_carlo(np.linalg.slogdet(precision)[1], q.mean_logdet)
    x = np.array([1.0, 0.0, -0.5])
    difference = x - mean
    assert_monte_carlo(np.einsum("ni,nij,nj->n", difference, precision, difference), q.expected_quadratic_forms(x))


def test_entropy_and_kl_against_monte_carlo_and_scipy():
    q = member()
    # H = H[Wishart] + E_Λ[H(N(m, (βΛ)⁻¹))] = H[W] + d/2 (1 + log 2π) − d/2 log β − ½ E[log |Λ|]
    expected = (stats.wishart(DF, SCALE).entropy() + 0.5 * D * (1 + np.log(2 * np.pi)) - 0.5 * D * np.log(BETA)
                - 0.5 * q.mean_logdet)
    np.testing.assert_allclose(q.entropy(), expected, rtol=1e-12)
    np.testing.assert_allclose(ExponentialFamily.entropy(q), expected, rtol=1e-12)
    mean, precision = scipy_draws(SAMPLES, seed=4)
    assert_monte_carlo(-member().logpdf((mean, precision)), q.entropy())
    other = dict(m=MEAN + 0.4, beta=1.0, W=np.eye(D), nu=4.0)
    p = member(mean=other["m"], precision_scale=other["beta"], scale=other["W"], df=other["nu"])
    ratio = member().logpdf((mean, precision)) - p.logpdf((mean, precision))
    assert_monte_carlo(ratio, q.kl_divergence(p))
    np.testing.assert_allclose(q.kl_divergence(q), 0.0, atol=1e-10)


def test_the_product_with_data_is_the_conjugate_posterior():
    """Prior × Π_n N(x_n | μ, Λ⁻¹) (as a likelihood) is Bishop's posterior (eqs. 10.60–10.63 with r_nk = 1), and its
    scale is the marginal likelihood of the data, against the closed form of the Student-t chain rule."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(4, D))
    N = len(x)
    prior = member()
    log_h = -0.5 * D * np.log(2 * np.pi)
    likelihood = NormalWishartLikelihood(-0.5 * x.T @ x, x.sum(0), -0.5 * N, 0.5 * N,
                                         log_scale=0.5 * D * (1 - N) * np.log(2 * np.pi))
    posterior = product(prior, likelihood)
    assert isinstance(posterior, NormalWishart)
    xbar = x.mean(0)
    S = (x - xbar).T @ (x - xbar)
    np.testing.assert_allclose(posterior.precision_scale, BETA + N, rtol=1e-14)
    np.testing.assert_allclose(posterior.location, (BETA * MEAN + N * xbar) / (BETA + N), rtol=1e-12)
    np.testing.assert_allclose(posterior.df, DF + N, rtol=1e-14)
    W_inv = np.linalg.inv(SCALE) + S + BETA * N / (BETA + N) * np.outer(xbar - MEAN, xbar - MEAN)
    np.testing.assert_allclose(posterior.inverse_scale, W_inv, rtol=1e-12)
    # the evidence by the chain rule of predictive Student-t densities
    log_evidence, current = 0.0, prior
    for n in range(N):
        dof, location, scale = current.predictive()
        log_evidence += stats.multivariate_t.logpdf(x[n], location, scale, df=dof)
        single = NormalWishartLikelihood(-0.5 * np.outer(x[n], x[n]), x[n], -0.5, 0.5)
        current = product(current.normalised(), single)
    np.testing.assert_allclose(posterior.log_scale, log_evidence, rtol=1e-11)
    assert log_h < 0


def test_improper_messages_and_powers():
    zero = NormalWishartLikelihood(np.zeros((D, D)), np.zeros(D), 0.0, 0.0)
    np.testing.assert_allclose(product(member(), zero).location, MEAN, rtol=1e-14)  # a component with no point
    with pytest.raises(ModelError, match="prior"):
        zero.mean_precision
    x = np.array([1.0, 2.0, -1.0])
    single = NormalWishartLikelihood(-0.5 * np.outer(x, x), x, -0.5, 0.5, log_scale=0.0)
    half = single.power(0.5)
    np.testing.assert_allclose(half.natural_parameters()[0], -0.25 * np.outer(x, x))
    # (exp(κ) h exp⟨η, T⟩)^ω = exp(ωκ + (ω − 1) log h) h exp⟨ωη, T⟩
    np.testing.assert_allclose(half.log_scale, -0.5 * NormalWishart.log_base_measure_of(single.natural_parameters()))
    proper = member().power(0.5)  # a proper member raised to a power stays a member
    assert isinstance(proper, NormalWishart)
    np.testing.assert_allclose(proper.precision_scale, 0.5 * BETA)


def test_batches_and_student_t_marginals():
    q = NormalWishart(np.stack([MEAN, -MEAN]), np.array([BETA, 1.0]), np.stack([SCALE, np.eye(D)]),
                      np.array([DF, 4.0]))
    assert q.batch_shape == (2,)
    np.testing.assert_allclose(q[1].mean_logdet, member(mean=-MEAN, precision_scale=1.0, scale=np.eye(D),
                                                        df=4.0).mean_logdet)
    wide = q[:, None].broadcast_to((2, 3))
    np.testing.assert_allclose(wide.mean_quadratic, np.repeat(q.mean_quadratic[:, None], 3, axis=1))
    dof, location, scale = member().mean_marginal()
    mean, precision = scipy_draws(SAMPLES, seed=6)
    # the marginal of μ: Student-t with ν − d + 1 dof and scale W⁻¹/(β(ν − d + 1)); its covariance is
    # scale · dof / (dof − 2)
    assert_monte_carlo(mean[:, 0] ** 2, location[0] ** 2 + scale[0, 0] * dof / (dof - 2))
    with pytest.raises(ModelError, match="df must be greater"):
        member(df=1.5)
    with pytest.raises(ModelError, match="positive definite"):
        member(scale=np.diag([1.0, 0.0, 1.0]))
