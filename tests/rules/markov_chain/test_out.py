"""Table test of the Markov-chain rule: the message to each z_t, against enumeration of every path.

μ'_t(k) = Σ over paths with z_t = k of π(z_1) Π_u A[z_u, z_{u−1}] Π_{s≠t} exp(s_s) p_s(z_s),
written below as a loop over the K^T paths, never with the forward–backward recursion.
"""
import itertools

import numpy as np
import pytest

from fgraph.families import Categorical
from fgraph.families.pointmass import Uninformative
from fgraph.nodes.markov_chain import MarkovChainNode
from fgraph.rules.markov_chain.out import FLOAT_STATES
from tests.rules.tables import message


def enumerated_messages(initial, transition, probabilities, scales):
    """(probabilities (T, K), log-scales (T,)) of the messages to every z_t, by enumeration."""
    steps, count = probabilities.shape
    totals = np.zeros((steps, count))
    for path in itertools.product(range(count), repeat=steps):
        weight = initial[path[0]] * np.prod([transition[path[u], path[u - 1]] for u in range(1, steps)])
        for t in range(steps):
            others = np.prod([np.exp(scales[s]) * probabilities[s, path[s]] for s in range(steps) if s != t])
            totals[t, path[t]] += weight * others
    mass = totals.sum(axis=1)
    return totals / mass[:, None], np.log(mass)


CASES = [
    pytest.param(np.array([0.7, 0.3]), np.array([[0.9, 0.2], [0.1, 0.8]]),
                 np.array([[0.5, 0.5], [0.9, 0.1], [0.2, 0.8]]), np.array([0.0, -1.0, 0.5]), id="two-states"),
    pytest.param(np.array([0.2, 0.5, 0.3]), np.array([[0.6, 0.0, 0.1], [0.3, 0.7, 0.2], [0.1, 0.3, 0.7]]),
                 np.array([[0.1, 0.6, 0.3], [0.0, 0.5, 0.5], [0.3, 0.3, 0.4], [1.0, 0.0, 0.0]]),
                 np.array([0.2, 0.0, -3.0, 1.0]), id="three-states-with-zeros"),
    pytest.param(np.array([1.0, 0.0]), np.array([[0.5, 0.0], [0.5, 1.0]]),
                 np.array([[0.3, 0.7]]), np.array([0.4]), id="one-step"),
    # four states: the associative scan (more states than FLOAT_STATES)
    pytest.param(np.array([0.1, 0.2, 0.3, 0.4]), np.random.default_rng(1).dirichlet(np.ones(4), 4).T,
                 np.random.default_rng(2).dirichlet(np.ones(4), 4), np.array([0.1, -0.5, 0.0, 2.0]), id="four-states"),
]


@pytest.mark.parametrize("initial, transition, probabilities, scales", CASES)
def test_out(initial, transition, probabilities, scales):
    steps = probabilities.shape[0]
    result = message(MarkovChainNode, "out", {"m_out": Categorical(probabilities, log_scale=scales)},
                     batch_shape=(steps,), initial=initial, transition=transition)
    expected_p, expected_scale = enumerated_messages(initial, transition, probabilities, scales)
    assert result.batch_shape == (steps,)
    np.testing.assert_allclose(result.probabilities, expected_p, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(result.log_scale, expected_scale, rtol=1e-12, atol=1e-12)


def test_the_cases_cover_both_versions_of_the_recursions():
    """Few states (in a short chain) run on floats, more on the associative scan; the table has both."""
    counts = [case.values[0].size for case in CASES]
    assert min(counts) <= FLOAT_STATES < max(counts)


def test_independent_chains_in_a_batch():
    """Batch (2, T): each chain against its own enumeration (the scan, vectorised over chains)."""
    initial, transition = CASES[0].values[0], CASES[0].values[1]
    rng = np.random.default_rng(3)
    probabilities = rng.dirichlet(np.ones(2), size=(2, 4))
    scales = rng.normal(size=(2, 4))
    result = message(MarkovChainNode, "out", {"m_out": Categorical(probabilities, log_scale=scales)},
                     batch_shape=(2, 4), initial=initial, transition=transition)
    assert result.batch_shape == (2, 4)
    for chain in range(2):
        expected_p, expected_scale = enumerated_messages(initial, transition, probabilities[chain], scales[chain])
        np.testing.assert_allclose(result.probabilities[chain], expected_p, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(result.log_scale[chain], expected_scale, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("initial, transition", [case.values[:2] for case in CASES])
def test_out_with_nothing_attached_is_the_prior(initial, transition):
    """A flat message into every z_t (nothing attached): the prior marginals, by enumeration with every
    likelihood 1, and log-scale 0 (nothing observed)."""
    steps, count = 5, initial.size
    result = message(MarkovChainNode, "out", {"m_out": Uninformative((steps,), (count,))}, batch_shape=(steps,),
                     initial=initial, transition=transition)
    expected_p, expected_scale = enumerated_messages(initial, transition, np.ones((steps, count)), np.zeros(steps))
    np.testing.assert_allclose(result.probabilities, expected_p, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(result.log_scale, expected_scale, atol=1e-12)
