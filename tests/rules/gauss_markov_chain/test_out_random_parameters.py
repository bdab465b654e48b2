"""Table test of the message of the random-parameter Gauss–Markov chain to ``out`` against dense Gaussian algebra.

With moments ā, Var[a], w̄, E[log w] (``q_moments``), exp E_q[log f] is an unnormalised Gaussian in x_1..x_T:

    log N(x_1 | m₀, v₀) + Σ_{t≥2} [½ E[log w] − ½ log 2π − ½ w̄ (x_t² − 2ā x_t x_{t−1} + (ā² + Var[a]) x²_{t−1})],

precision matrix Λ_f (tridiagonal) and linear term h_f. The message to x_t is that function times the incoming
μ_s = exp(s_s) N(x_s | m_s, v_s) of the other steps, integrated over them: the Gaussian integral of
exp(−½ xᵀΛx + hᵀx + c) over x_{−t}, done below with dense numpy linear algebra (Schur complement and log-det),
not by any recursion. Its log-scale is the log of that function's integral over x_t.
"""
import numpy as np
import pytest
from scipy.special import digamma

from fgraph.families import NormalMeanVariance, PointMass
from fgraph.nodes.gauss_markov_chain import READ_MOMENTS, VariationalGaussMarkovChainNode
from tests.rules.tables import message

LOG_2PI = np.log(2 * np.pi)
INITIAL_MEAN, INITIAL_VAR = 0.3, 2.0


def dense_messages(moments, means, variances, scales, initial=(INITIAL_MEAN, INITIAL_VAR)):
    gain, gain_var, precision, log_precision = moments
    initial_mean, initial_var = initial
    steps = len(means)
    Lf, hf = np.zeros((steps, steps)), np.zeros(steps)
    Lf[0, 0], hf[0] = 1.0 / initial_var, initial_mean / initial_var
    cf = -0.5 * (LOG_2PI + np.log(initial_var)) - 0.5 * initial_mean**2 / initial_var
    for t in range(1, steps):
        Lf[t, t] += precision
        Lf[t - 1, t - 1] += precision * (gain**2 + gain_var)
        Lf[t, t - 1] = Lf[t - 1, t] = -precision * gain
        cf += 0.5 * (log_precision - LOG_2PI)
    out = []
    for t in range(steps):
        others = [s for s in range(steps) if s != t]
        L, h, c = Lf.copy(), hf.copy(), cf
        for s in others:
            L[s, s] += 1.0 / variances[s]
            h[s] += means[s] / variances[s]
            c += scales[s] - 0.5 * (LOG_2PI + np.log(variances[s])) - 0.5 * means[s] ** 2 / variances[s]
        Loo, Lto = L[np.ix_(others, others)], L[t, others]
        solved_h, solved_L = np.linalg.solve(Loo, h[others]), np.linalg.solve(Loo, Lto)
        L_t = L[t, t] - Lto @ solved_L
        h_t = h[t] - Lto @ solved_h
        c_t = c + 0.5 * h[others] @ solved_h - 0.5 * np.linalg.slogdet(Loo)[1] + 0.5 * len(others) * LOG_2PI
        out.append((h_t / L_t, 1.0 / L_t, c_t + 0.5 * h_t**2 / L_t + 0.5 * (LOG_2PI - np.log(L_t))))
    return np.array(out).T


CASES = [
    pytest.param((0.8, 0.0, 2.0, np.log(2.0)), id="known-gain-and-precision"),
    pytest.param((0.8, 0.3, 2.0, digamma(4.0) - np.log(2.0)), id="random-gain-and-precision"),
    pytest.param((0.0, 0.5, 1.0, -0.2), id="zero-mean-gain"),
    pytest.param((-1.3, 0.05, 0.5, np.log(0.5) - 0.1), id="negative-gain"),
]


@pytest.mark.parametrize("moments", CASES)
@pytest.mark.parametrize("steps", [2, 5])
def test_out(moments, steps, recursion_path):
    rng = np.random.default_rng(steps)
    means, variances, scales = rng.normal(size=steps), rng.uniform(0.1, 3.0, size=steps), rng.normal(size=steps)
    result = message(VariationalGaussMarkovChainNode, "out",
                     {"m_out": NormalMeanVariance(means, variances, log_scale=scales),
                      "q_moments": PointMass(np.array(moments), 1)},
                     batch_shape=(steps,), initial_mean=INITIAL_MEAN, initial_var=INITIAL_VAR)
    expected_mean, expected_var, expected_scale = dense_messages(moments, means, variances, scales)
    np.testing.assert_allclose(result.mean, expected_mean, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(result.var, expected_var, rtol=1e-11)
    np.testing.assert_allclose(result.log_scale, expected_scale, rtol=1e-11, atol=1e-11)
    np.testing.assert_array_equal(result.__dict__[READ_MOMENTS], moments)  # what the free energy reads


def test_chains_with_their_own_moments_and_starts(recursion_path):
    """Batch (2, 4): each chain its own moments (2, 1, 4) and start, against the dense algebra chain by chain."""
    rng = np.random.default_rng(9)
    means, variances, scales = rng.normal(size=(2, 4)), rng.uniform(0.2, 2.0, size=(2, 4)), rng.normal(size=(2, 4))
    moments = np.array([[[0.7, 0.2, 1.5, 0.3]], [[-0.4, 0.1, 3.0, 1.0]]])
    starts = (np.array([0.1, -0.5]), np.array([1.0, 3.0]))
    result = message(VariationalGaussMarkovChainNode, "out",
                     {"m_out": NormalMeanVariance(means, variances, log_scale=scales),
                      "q_moments": PointMass(moments, 1)},
                     batch_shape=(2, 4), initial_mean=starts[0], initial_var=starts[1], gain_batch=(2, 1))
    for chain in range(2):
        expected = dense_messages(moments[chain, 0], means[chain], variances[chain], scales[chain],
                                  (starts[0][chain], starts[1][chain]))
        np.testing.assert_allclose(result.mean[chain], expected[0], rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(result.var[chain], expected[1], rtol=1e-11)
        np.testing.assert_allclose(result.log_scale[chain], expected[2], rtol=1e-11, atol=1e-11)


def test_known_parameters_give_the_fixed_chains_message():
    """Var[a] = 0 and E[log w] = log E[w]: the message of GaussMarkovChainNode with gain ā and var 1/w̄."""
    from fgraph.nodes.gauss_markov_chain import GaussMarkovChainNode

    rng = np.random.default_rng(10)
    means, variances, scales = rng.normal(size=600), rng.uniform(0.1, 2.0, size=600), rng.normal(size=600)
    incoming = NormalMeanVariance(means, variances, log_scale=scales)
    random = message(VariationalGaussMarkovChainNode, "out",
                     {"m_out": incoming, "q_moments": PointMass([0.9, 0.0, 4.0, np.log(4.0)], 1)},
                     batch_shape=(600,), initial_mean=INITIAL_MEAN, initial_var=INITIAL_VAR)
    fixed = message(GaussMarkovChainNode, "out", {"m_out": incoming}, batch_shape=(600,), gain=0.9, var=0.25,
                    initial_mean=INITIAL_MEAN, initial_var=INITIAL_VAR)
    np.testing.assert_allclose(random.mean, fixed.mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(random.var, fixed.var, rtol=1e-10)
    np.testing.assert_allclose(random.log_scale, fixed.log_scale, rtol=1e-10)
