"""Table test of the message of the random-parameter Gauss–Markov chain to ``gain``, with a dense oracle.

N(a) of precision E[w] Σ_t E[x²_{t−1}] and weighted mean E[w] Σ_t E[x_t x_{t−1}] (t = 2..T), the pair moments
of q(x) from its marginals and the coupling κ = −E[w] E[a] of the moments (the off-diagonal of q(x)'s precision):
Cov(x_{t−1}, x_t) = −2κ s s' / (1 + √(1 + 4κ² s s')).
"""
import numpy as np
import pytest

import fgraph as fg
from fgraph.families import NormalMeanVariance, PointMass, Uninformative
from fgraph.families.gamma import Gamma
from fgraph.nodes.gauss_markov_chain import VariationalGaussMarkovChainNode
from tests.rules.tables import assert_message, message, normal


def covariance(kappa, s, s_next):
    return -2.0 * kappa * s * s_next / (1.0 + np.sqrt(1.0 + 4.0 * kappa**2 * s * s_next))


MEANS, VARIANCES = np.array([1.0, 2.0, -1.0]), np.array([0.5, 0.25, 1.0])
UNCOUPLED = PointMass([0.0, 0.0, 1.0, 0.0], 1)  # κ = 0: q(x) factorises
COUPLED = PointMass([0.5, 0.3, 2.0, 0.1], 1)  # κ = −2 · 0.5 = −1

CASES = [
    # Σ E[x²_{t−1}] = (1 + 0.5) + (4 + 0.25) = 5.75, Σ E[x_t] E[x_{t−1}] = 2 − 2 = 0; E[w] = 4/2 = 2
    pytest.param(UNCOUPLED, Gamma(4.0, 2.0), normal(0.0, 1.0 / 11.5), id="uncoupled"),
    # the same with the lag-one covariances at κ = −1 added to Σ E[x_t x_{t−1}]
    pytest.param(COUPLED, Gamma(4.0, 2.0),
                 normal(2.0 * (covariance(-1.0, 0.5, 0.25) + covariance(-1.0, 0.25, 1.0)) / 11.5, 1.0 / 11.5),
                 id="coupled"),
    # a clamped precision w = 3
    pytest.param(COUPLED, PointMass(3.0),
                 normal(3.0 * (covariance(-1.0, 0.5, 0.25) + covariance(-1.0, 0.25, 1.0)) / 17.25, 1.0 / 17.25),
                 id="clamped-precision"),
]


@pytest.mark.parametrize("q_moments, q_precision, expected", CASES)
def test_gain(q_moments, q_precision, expected):
    inputs = {"m_gain": NormalMeanVariance(0.0, 1.0), "q_out": NormalMeanVariance(MEANS, VARIANCES),
              "q_precision": q_precision, "q_moments": q_moments}
    result = message(VariationalGaussMarkovChainNode, "gain", inputs, batch_shape=(3,), initial_var=1.0)
    assert_message(result, expected)


def tridiagonal_joint(rng, steps, kappa):
    """A Gaussian q(x) whose precision is tridiagonal with off-diagonal κ: means, covariance."""
    precision = np.diag(rng.uniform(2.5, 4.0, size=steps)) + kappa * (np.eye(steps, k=1) + np.eye(steps, k=-1))
    return rng.normal(size=steps), np.linalg.inv(precision)


def test_against_the_dense_joint():
    """q(x) any Gaussian Markov chain: the message equals E[w] Σ_t E[(x_t − a x_{t−1})²] read off its covariance."""
    rng = np.random.default_rng(3)
    gain, precision = 0.6, 2.5  # the moments' E[a] and E[w]: κ = −1.5
    means, cov = tridiagonal_joint(rng, 6, -gain * precision)
    inputs = {"m_gain": NormalMeanVariance(0.0, 1.0), "q_out": NormalMeanVariance(means, np.diag(cov)),
              "q_precision": Gamma(6.0, 3.0), "q_moments": PointMass([gain, 0.4, precision, 0.5], 1)}
    result = message(VariationalGaussMarkovChainNode, "gain", inputs, batch_shape=(6,), initial_var=1.0)
    second = cov + np.outer(means, means)
    expected_precision = 2.0 * np.trace(second[:-1, :-1])
    expected_weighted = 2.0 * np.sum(np.diag(second, k=1))
    np.testing.assert_allclose(result.precision, expected_precision, rtol=1e-12)
    np.testing.assert_allclose(result.weighted_mean, expected_weighted, rtol=1e-12)


def test_chains_sum_into_a_shared_gain_and_not_into_their_own():
    rng = np.random.default_rng(4)
    means, variances = rng.normal(size=(2, 5)), rng.uniform(0.2, 1.0, size=(2, 5))
    inputs = {"m_gain": NormalMeanVariance(0.0, 1.0), "q_out": NormalMeanVariance(means, variances),
              "q_precision": Gamma(3.0, 1.0), "q_moments": COUPLED}
    shared = message(VariationalGaussMarkovChainNode, "gain", inputs, batch_shape=(2, 5), initial_var=1.0)
    own = message(VariationalGaussMarkovChainNode, "gain", inputs, batch_shape=(2, 5), initial_var=1.0,
                  gain_batch=(2, 1))
    assert shared.batch_shape == () and own.batch_shape == (2, 1)
    alone = [message(VariationalGaussMarkovChainNode, "gain", dict(inputs, q_out=NormalMeanVariance(m, v)),
                     batch_shape=(5,), initial_var=1.0) for m, v in zip(means, variances)]
    np.testing.assert_allclose(own.precision[:, 0], [m.precision for m in alone], rtol=1e-13)
    np.testing.assert_allclose(own.weighted_mean[:, 0], [m.weighted_mean for m in alone], rtol=1e-13)
    np.testing.assert_allclose(shared.precision, sum(m.precision for m in alone), rtol=1e-13)
    np.testing.assert_allclose(shared.weighted_mean, sum(m.weighted_mean for m in alone), rtol=1e-13)


def test_the_sum_product_message_is_an_error_that_says_vmp():
    inputs = {"m_gain": NormalMeanVariance(0.0, 1.0), "m_out": NormalMeanVariance(MEANS, VARIANCES),
              "m_precision": Gamma(2.0, 1.0), "m_moments": Uninformative((), (4,))}
    with pytest.raises(fg.ModelError, match="node 'node'.*algorithm='vmp'"):
        message(VariationalGaussMarkovChainNode, "gain", inputs, batch_shape=(3,), initial_var=1.0)
