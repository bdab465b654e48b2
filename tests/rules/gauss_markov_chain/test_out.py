"""Table test of the Gauss–Markov chain rule against dense Gaussian conditioning and quadrature.

The incoming messages μ_s = exp(s_s) N(x_s | m_s, v_s) act as pseudo-observations m_s = x_s + e_s,
e_s ~ N(0, v_s). The message to x_t is exp(Σ_{s≠t} s_s) p(x_t) p(m_{−t} | x_t): normalised, the
conditional p(x_t | m_{−t}); its log-scale Σ_{s≠t} s_s + log p(m_{−t}). Both are computed below from
the dense joint covariance of the chain (numpy linear algebra), not by any recursion.
"""
import numpy as np
import pytest
from scipy import integrate
from scipy.stats import multivariate_normal, norm

from fgraph.families import NormalMeanVariance
from fgraph.nodes.gauss_markov_chain import GaussMarkovChainNode
from tests.rules.tables import message

GAIN, PROCESS_VAR, INITIAL_MEAN, INITIAL_VAR = 0.8, 0.5, 0.3, 2.0


def chain_moments(steps):
    """Mean vector and covariance matrix of x_1..x_T under the chain prior."""
    mean = INITIAL_MEAN * GAIN ** np.arange(steps)
    var = np.empty(steps)
    var[0] = INITIAL_VAR
    for t in range(1, steps):
        var[t] = GAIN**2 * var[t - 1] + PROCESS_VAR
    cov = np.empty((steps, steps))
    for s in range(steps):
        for t in range(steps):
            cov[s, t] = GAIN ** abs(t - s) * var[min(s, t)]
    return mean, cov


def dense_messages(means, variances, scales):
    steps = len(means)
    prior_mean, prior_cov = chain_moments(steps)
    out = []
    for t in range(steps):
        others = [s for s in range(steps) if s != t]
        observed_cov = prior_cov[np.ix_(others, others)] + np.diag(variances[others])
        cross = prior_cov[t, others]
        gain = np.linalg.solve(observed_cov, cross)
        mean = prior_mean[t] + gain @ (means[others] - prior_mean[others])
        var = prior_cov[t, t] - gain @ cross
        log_scale = scales[others].sum() + multivariate_normal(prior_mean[others], observed_cov).logpdf(means[others])
        out.append((mean, var, log_scale))
    return np.array(out).T


CASES = [
    pytest.param(np.array([0.5, -1.0, 2.0]), np.array([1.0, 0.5, 2.0]), np.array([0.0, 0.3, -0.2]), id="three-steps"),
    pytest.param(np.array([1.0, 0.0, -0.5, 0.5, 3.0]), np.array([0.1, 10.0, 1.0, 1.0, 0.2]), np.zeros(5), id="five-steps"),
]


@pytest.mark.parametrize("means, variances, scales", CASES)
def test_out(means, variances, scales):
    steps = len(means)
    result = message(GaussMarkovChainNode, "out", {"m_out": NormalMeanVariance(means, variances, log_scale=scales)},
                     batch_shape=(steps,), gain=GAIN, var=PROCESS_VAR, initial_mean=INITIAL_MEAN, initial_var=INITIAL_VAR)
    expected_mean, expected_var, expected_scale = dense_messages(means, variances, scales)
    np.testing.assert_allclose(result.mean, expected_mean, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(result.var, expected_var, rtol=1e-12)
    np.testing.assert_allclose(result.log_scale, expected_scale, rtol=1e-12, atol=1e-12)


def test_two_steps_against_quadrature():
    """Message to x_1 = N(x_1 | m₀, v₀) ∫ N(x_2 | a x_1, q) μ_2(x_2) dx_2, at several x_1."""
    incoming = NormalMeanVariance(np.array([0.0, 1.5]), np.array([1.0, 0.7]), log_scale=np.array([0.0, 0.4]))
    result = message(GaussMarkovChainNode, "out", {"m_out": incoming}, batch_shape=(2,), gain=GAIN, var=PROCESS_VAR,
                     initial_mean=INITIAL_MEAN, initial_var=INITIAL_VAR)
    for x1 in (-2.0, 0.0, 0.7, 3.0):
        value, _ = integrate.quad(
            lambda x2: norm.pdf(x2, GAIN * x1, np.sqrt(PROCESS_VAR)) * norm.pdf(x2, 1.5, np.sqrt(0.7)), -np.inf, np.inf)
        expected = np.log(norm.pdf(x1, INITIAL_MEAN, np.sqrt(INITIAL_VAR)) * value) + 0.4
        actual = result.log_scale[0] + norm.logpdf(x1, result.mean[0], np.sqrt(result.var[0]))
        np.testing.assert_allclose(actual, expected, rtol=1e-9)


def test_independent_chains_in_a_batch():
    """Batch (2, T): the scan version, each chain against dense conditioning."""
    rng = np.random.default_rng(4)
    means, variances, scales = rng.normal(size=(2, 4)), rng.uniform(0.2, 3.0, size=(2, 4)), rng.normal(size=(2, 4))
    result = message(GaussMarkovChainNode, "out", {"m_out": NormalMeanVariance(means, variances, log_scale=scales)},
                     batch_shape=(2, 4), gain=GAIN, var=PROCESS_VAR, initial_mean=INITIAL_MEAN, initial_var=INITIAL_VAR)
    for chain in range(2):
        expected_mean, expected_var, expected_scale = dense_messages(means[chain], variances[chain], scales[chain])
        np.testing.assert_allclose(result.mean[chain], expected_mean, rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(result.var[chain], expected_var, rtol=1e-12)
        np.testing.assert_allclose(result.log_scale[chain], expected_scale, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("steps", [1, 2, 6])
def test_out_with_nothing_attached_is_the_prior(steps):
    """A flat message into every x_t: the prior marginals, from the dense joint x = B⁻¹(c + e) with B the
    bidiagonal matrix of x_t − a x_{t−1}, c = (m₀, 0, ...), e ~ N(0, diag(v₀, q, ...)); log-scale 0."""
    from fgraph.families.pointmass import Uninformative

    B = np.eye(steps) - GAIN * np.eye(steps, k=-1)
    inverse = np.linalg.inv(B)
    mean = inverse @ np.r_[INITIAL_MEAN, np.zeros(steps - 1)]
    cov = inverse @ np.diag(np.r_[INITIAL_VAR, np.full(steps - 1, PROCESS_VAR)]) @ inverse.T
    result = message(GaussMarkovChainNode, "out", {"m_out": Uninformative((steps,))}, batch_shape=(steps,),
                     gain=GAIN, var=PROCESS_VAR, initial_mean=INITIAL_MEAN, initial_var=INITIAL_VAR)
    np.testing.assert_allclose(result.mean, mean, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(result.var, np.diag(cov), rtol=1e-12)
    np.testing.assert_allclose(result.log_scale, np.zeros(steps), atol=1e-12)
