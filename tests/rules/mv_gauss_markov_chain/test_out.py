"""Table test of the multivariate Gauss–Markov chain rule against dense Gaussian conditioning.

The chain prior is written out as one joint normal N(μ, Σ) of the stacked states (Td dimensions, built
step by step from F_t, Q_t, c_t); the incoming messages μ_s = exp(κ_s) h(x) exp(ξ_sᵀx − ½ xᵀW_s x) multiply
it as a block-diagonal information term. The message to x_t is the integral of that product over every
other state: completed square with Λ = Σ⁻¹ + W_{−t} (inverses of the dense matrices, no recursion).
"""
import numpy as np
import pytest
from scipy import integrate
from scipy.stats import multivariate_normal

from fgraph.families import GaussianLikelihood, MvNormalMeanCovariance
from fgraph.nodes.mv_gauss_markov_chain import MvGaussMarkovChainNode
from tests.rules.tables import message

LOG_2PI = np.log(2 * np.pi)
F = np.array([[0.9, 0.2], [-0.1, 0.8]])
Q = np.array([[0.5, 0.1], [0.1, 0.3]])
M0, P0 = np.array([0.3, -0.2]), np.array([[2.0, 0.4], [0.4, 1.0]])


def chain_prior(steps, transition=F, noise=Q, offset=None):
    """Stacked mean (T d,) and covariance (T d, T d) of x_1..x_T; per-step F_t, Q_t as (T − 1, d, d)."""
    d = M0.size
    Fs = np.broadcast_to(transition, (steps - 1, d, d)) if np.ndim(transition) == 2 else transition
    Qs = np.broadcast_to(noise, (steps - 1, d, d)) if np.ndim(noise) == 2 else noise
    c = np.zeros((steps, d)) if offset is None else offset
    mean = np.zeros((steps, d))
    cov = np.zeros((steps, d, steps, d))
    mean[0], cov[0, :, 0, :] = M0, P0
    for t in range(1, steps):
        mean[t] = Fs[t - 1] @ mean[t - 1] + c[t]
        for s in range(t):  # Cov(x_t, x_s) = F_t Cov(x_{t−1}, x_s)
            cov[t, :, s, :] = Fs[t - 1] @ cov[t - 1, :, s, :]
            cov[s, :, t, :] = cov[t, :, s, :].T
        cov[t, :, t, :] = Fs[t - 1] @ cov[t - 1, :, t - 1, :] @ Fs[t - 1].T + Qs[t - 1]
    return mean.reshape(-1), cov.reshape(steps * d, steps * d)


def dense_messages(xi, W, kappa, singular_prior=False, **prior):
    """Mean (T, d), covariance (T, d, d) and log-scale (T,) of every message to x_t.

    ``singular_prior``: the stacked covariance Σ has no inverse (a singular Q); the product is then
    conditioned in covariance form, S = (I + ΣW)⁻¹Σ, m = (I + ΣW)⁻¹(μ + Σξ), with the matching integral.
    """
    steps, d = xi.shape
    mu, sigma = chain_prior(steps, **prior)
    means, covs, scales = [], [], []
    for t in range(steps):
        info = np.zeros((steps, d, steps, d))
        linear = xi.copy()
        for s in range(steps):
            if s != t:
                info[s, :, s, :] = W[s]
        linear[t] = 0.0
        info, linear = info.reshape(steps * d, steps * d), linear.reshape(-1)
        if singular_prior:
            spread = np.eye(steps * d) + sigma @ info
            posterior_cov = np.linalg.solve(spread, sigma)
            posterior_mean = np.linalg.solve(spread, mu + sigma @ linear)
            u = linear - info @ mu
            log_integral = (-0.5 * np.linalg.slogdet(spread)[1] + linear @ mu - 0.5 * mu @ info @ mu
                            + 0.5 * u @ posterior_cov @ u)
        else:
            sigma_inv = np.linalg.inv(sigma)
            precision = sigma_inv + info
            posterior_cov = np.linalg.inv(precision)
            shifted = sigma_inv @ mu + linear
            posterior_mean = posterior_cov @ shifted
            # log ∫ N(x | μ, Σ) exp(ξᵀx − ½ xᵀWx) dx by the completed square
            log_integral = (-0.5 * np.linalg.slogdet(sigma)[1] - 0.5 * np.linalg.slogdet(precision)[1]
                            + 0.5 * shifted @ posterior_cov @ shifted - 0.5 * mu @ sigma_inv @ mu)
        others = [s for s in range(steps) if s != t]
        means.append(posterior_mean[t * d:(t + 1) * d])
        covs.append(posterior_cov[t * d:(t + 1) * d, t * d:(t + 1) * d])
        scales.append(log_integral + np.sum(kappa[others]) - 0.5 * d * LOG_2PI * len(others))
    return np.array(means), np.array(covs), np.array(scales)


def random_messages(rng, steps, rank_one_at=()):
    """Proper information-form messages, rank-one (a partial observation cᵀx) at the listed steps."""
    xi, W = rng.normal(size=(steps, 2)), np.empty((steps, 2, 2))
    for t in range(steps):
        if t in rank_one_at:
            row = rng.normal(size=2)
            W[t] = np.outer(row, row) / rng.uniform(0.3, 2.0)
            xi[t] = row * rng.normal() / rng.uniform(0.3, 2.0)
        else:
            root = rng.normal(size=(2, 2))
            W[t] = root @ root.T + 0.3 * np.eye(2)
    return xi, W, rng.normal(size=steps)


def check(result, expected, batch=()):
    mean, cov, scale = expected
    np.testing.assert_allclose(result.mean[batch], mean, rtol=1e-10, atol=1e-11)
    np.testing.assert_allclose(result.cov[batch], cov, rtol=1e-10, atol=1e-11)
    np.testing.assert_allclose(result.log_scale[batch], scale, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("steps, rank_one_at", [(1, ()), (2, (1,)), (4, ()), (6, (0, 2, 3, 5))])
def test_out_against_dense_conditioning(steps, rank_one_at):
    xi, W, kappa = random_messages(np.random.default_rng(steps), steps, rank_one_at)
    incoming = GaussianLikelihood(xi, W, kappa)
    result = message(MvGaussMarkovChainNode, "out", {"m_out": incoming}, batch_shape=(steps,), transition=F,
                     noise=Q, initial_mean=M0, initial_cov=P0)
    check(result, dense_messages(xi, W, kappa))


def test_proper_messages_in_moment_form():
    """MvNormal messages (mean, covariance, log-scale) enter through their log-coefficient."""
    rng = np.random.default_rng(11)
    means, roots = rng.normal(size=(5, 2)), rng.normal(size=(5, 2, 2))
    covs = roots @ np.swapaxes(roots, -1, -2) + 0.2 * np.eye(2)
    scales = rng.normal(size=5)
    incoming = MvNormalMeanCovariance(means, covs, log_scale=scales)
    result = message(MvGaussMarkovChainNode, "out", {"m_out": incoming}, batch_shape=(5,), transition=F, noise=Q,
                     initial_mean=M0, initial_cov=P0)
    W = np.linalg.inv(covs)
    xi = np.einsum("tij,tj->ti", W, means)
    kappa = scales - 0.5 * np.einsum("ti,ti->t", xi, means) + 0.5 * np.linalg.slogdet(W)[1]
    check(result, dense_messages(xi, W, kappa))


def test_per_step_dynamics_and_control_offsets():
    rng = np.random.default_rng(3)
    steps = 5
    Fs = F + 0.3 * rng.normal(size=(steps - 1, 2, 2))
    roots = rng.normal(size=(steps - 1, 2, 2))
    Qs = roots @ np.swapaxes(roots, -1, -2) + 0.1 * np.eye(2)
    offset = np.vstack([np.zeros((1, 2)), rng.normal(size=(steps - 1, 2))])
    xi, W, kappa = random_messages(rng, steps, (1, 4))
    result = message(MvGaussMarkovChainNode, "out", {"m_out": GaussianLikelihood(xi, W, kappa)},
                     batch_shape=(steps,), transition=Fs, noise=Qs, initial_mean=M0, initial_cov=P0, offset=offset)
    check(result, dense_messages(xi, W, kappa, transition=Fs, noise=Qs, offset=offset))


def test_singular_process_noise():
    """A position integrating a velocity: Q = diag(0, q) is singular, the chain prior still proper."""
    transition, noise = np.array([[1.0, 1.0], [0.0, 1.0]]), np.diag([0.0, 0.4])
    xi, W, kappa = random_messages(np.random.default_rng(8), 4, (0, 1, 2, 3))
    result = message(MvGaussMarkovChainNode, "out", {"m_out": GaussianLikelihood(xi, W, kappa)}, batch_shape=(4,),
                     transition=transition, noise=noise, initial_mean=M0, initial_cov=P0)
    check(result, dense_messages(xi, W, kappa, singular_prior=True, transition=transition, noise=noise))


def test_independent_chains_in_a_batch():
    rng = np.random.default_rng(5)
    parts = [random_messages(rng, 4, (1,)) for _ in range(3)]
    xi, W, kappa = (np.stack([part[i] for part in parts]) for i in range(3))
    result = message(MvGaussMarkovChainNode, "out", {"m_out": GaussianLikelihood(xi, W, kappa)},
                     batch_shape=(3, 4), transition=F, noise=Q, initial_mean=M0, initial_cov=P0)
    for chain in range(3):
        check(result, dense_messages(*parts[chain]), (chain,))


def test_two_steps_against_quadrature():
    """Message to x_1 at a few points: N(x_1 | m₀, P₀) ∫ N(x_2 | F x_1, Q) μ_2(x_2) dx_2, by 2-D quadrature."""
    xi = np.array([[0.0, 0.0], [0.8, -0.4]])
    W = np.array([np.zeros((2, 2)), [[1.5, 0.3], [0.3, 0.9]]])
    kappa = np.array([0.0, 0.25])
    result = message(MvGaussMarkovChainNode, "out", {"m_out": GaussianLikelihood(xi, W, kappa)}, batch_shape=(2,),
                     transition=F, noise=Q, initial_mean=M0, initial_cov=P0)
    transition_density = multivariate_normal(np.zeros(2), Q)

    def incoming(x2):
        return np.exp(kappa[1] - LOG_2PI + xi[1] @ x2 - 0.5 * x2 @ W[1] @ x2)

    for x1 in (np.array([0.0, 0.0]), np.array([1.0, -0.5]), np.array([-2.0, 1.5])):
        centre = F @ x1
        value, _ = integrate.dblquad(
            lambda b, a: transition_density.pdf(np.array([a, b]) - centre) * incoming(np.array([a, b])),
            centre[0] - 8, centre[0] + 8, centre[1] - 8, centre[1] + 8, epsabs=1e-13, epsrel=1e-11)
        expected = multivariate_normal(M0, P0).logpdf(x1) + np.log(value)
        actual = result.log_scale[0] + multivariate_normal(result.mean[0], result.cov[0]).logpdf(x1)
        np.testing.assert_allclose(actual, expected, rtol=1e-8)


@pytest.mark.parametrize("steps", [1, 2, 5])
def test_out_with_nothing_attached_is_the_prior(steps):
    """A flat message into every x_t: the prior marginals, from the dense joint x = B⁻¹(c + e) with B the
    block-bidiagonal matrix of x_t − F x_{t−1}, c = (m₀, 0, ...), e ~ N(0, blockdiag(P₀, Q, ...)); log-scale 0."""
    from scipy.linalg import block_diag

    from fgraph.families.pointmass import Uninformative

    d = M0.size
    B = np.eye(steps * d) - np.kron(np.eye(steps, k=-1), F)
    inverse = np.linalg.inv(B)
    mean = inverse @ np.r_[M0, np.zeros((steps - 1) * d)]
    cov = inverse @ block_diag(P0, *[Q] * (steps - 1)) @ inverse.T
    result = message(MvGaussMarkovChainNode, "out", {"m_out": Uninformative((steps,), (d,))}, batch_shape=(steps,),
                     transition=F, noise=Q, initial_mean=M0, initial_cov=P0)
    blocks = [cov[t * d:(t + 1) * d, t * d:(t + 1) * d] for t in range(steps)]
    check(result, (mean.reshape(steps, d), np.stack(blocks), np.zeros(steps)))
