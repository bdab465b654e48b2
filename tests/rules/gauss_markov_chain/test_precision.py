"""Table test of the message of the random-parameter Gauss–Markov chain to ``precision``, with a dense oracle.

Gamma(w | 1 + (T − 1)/2, ½ Σ_t (E[x_t²] − 2 E[a] E[x_t x_{t−1}] + E[a²] E[x²_{t−1}])), the pair moments of q(x)
from its marginals and the coupling κ = −E[w] E[a] of the moments.
"""
import numpy as np
import pytest

from fgraph.families import NormalMeanVariance, PointMass
from fgraph.families.gamma import Gamma
from fgraph.nodes.gauss_markov_chain import VariationalGaussMarkovChainNode
from tests.rules.gauss_markov_chain.test_gain import (
    COUPLED,
    MEANS,
    UNCOUPLED,
    VARIANCES,
    covariance,
    tridiagonal_joint,
)
from tests.rules.tables import assert_message, gamma, message

# Σ E[x_t²] (t = 2, 3) = 4.25 + 2 = 6.25, Σ E[x²_{t−1}] = 5.75, Σ E[x_t] E[x_{t−1}] = 0
CROSS = covariance(-1.0, 0.5, 0.25) + covariance(-1.0, 0.25, 1.0)
CASES = [
    # a ~ N(0.5, 0.3): E[a²] = 0.55
    pytest.param(UNCOUPLED, NormalMeanVariance(0.5, 0.3), gamma(2.0, 0.5 * (6.25 + 0.55 * 5.75)), id="uncoupled"),
    pytest.param(COUPLED, NormalMeanVariance(0.5, 0.3), gamma(2.0, 0.5 * (6.25 - 2 * 0.5 * CROSS + 0.55 * 5.75)),
                 id="coupled"),
    pytest.param(COUPLED, PointMass(-0.7), gamma(2.0, 0.5 * (6.25 + 2 * 0.7 * CROSS + 0.49 * 5.75)),
                 id="clamped-gain"),
]


@pytest.mark.parametrize("q_moments, q_gain, expected", CASES)
def test_precision(q_moments, q_gain, expected):
    inputs = {"m_precision": Gamma(1.0, 1.0), "q_out": NormalMeanVariance(MEANS, VARIANCES), "q_gain": q_gain,
              "q_moments": q_moments}
    result = message(VariationalGaussMarkovChainNode, "precision", inputs, batch_shape=(3,), initial_var=1.0)
    assert_message(result, expected)


def test_against_the_dense_joint():
    rng = np.random.default_rng(5)
    gain, precision = -0.8, 1.5
    means, cov = tridiagonal_joint(rng, 7, -gain * precision)
    q_gain = NormalMeanVariance(0.3, 0.2)
    inputs = {"m_precision": Gamma(1.0, 1.0), "q_out": NormalMeanVariance(means, np.diag(cov)), "q_gain": q_gain,
              "q_moments": PointMass([gain, 0.1, precision, 0.2], 1)}
    result = message(VariationalGaussMarkovChainNode, "precision", inputs, batch_shape=(7,), initial_var=1.0)
    second = cov + np.outer(means, means)
    squares = (np.trace(second[1:, 1:]) - 2 * 0.3 * np.sum(np.diag(second, k=1))
               + (0.09 + 0.2) * np.trace(second[:-1, :-1]))
    assert_message(result, gamma(1.0 + 3.0, 0.5 * squares))


def test_chains_sum_into_a_shared_precision():
    """Two chains of five steps: 2 × 4 transitions, shape 1 + 4, and the rates add."""
    rng = np.random.default_rng(6)
    means, variances = rng.normal(size=(2, 5)), rng.uniform(0.2, 1.0, size=(2, 5))
    inputs = {"m_precision": Gamma(1.0, 1.0), "q_out": NormalMeanVariance(means, variances),
              "q_gain": NormalMeanVariance(0.4, 0.1), "q_moments": COUPLED}
    shared = message(VariationalGaussMarkovChainNode, "precision", inputs, batch_shape=(2, 5), initial_var=1.0)
    alone = [message(VariationalGaussMarkovChainNode, "precision", dict(inputs, q_out=NormalMeanVariance(m, v)),
                     batch_shape=(5,), initial_var=1.0) for m, v in zip(means, variances)]
    assert_message(shared, gamma(1.0 + 4.0, alone[0].rate + alone[1].rate))
