"""Markov chain node: the average energy of the whole chain against the unrolled chain.

U = −E_q[log f] with independent q(z_t) per step:
U_1 = −Σ_k q_1(k) log π_k,  U_t = −Σ_ij q_t(i) q_{t−1}(j) log A[i, j]
(A[i, j] = P(z_t = i | z_{t−1} = j)). The unrolled chain is a Categorical
node and T − 1 Transition nodes; under mean-field VMP its free energy is
F = Σ_nodes U − Σ_t H[q(z_t)], so at the unrolled graph's own marginals
Σ_t U_t must equal F + Σ_t H[q_t] minus the emission nodes' energies
(written out here).
"""
import numpy as np

import fgraph as fg
from fgraph.families import Categorical as CategoricalDistribution
from fgraph.families import PointMass
from fgraph.nodes import Categorical, Transition
from fgraph.nodes.markov_chain import MarkovChainNode
from tests.rules.tables import energy

INITIAL = np.array([0.6, 0.3, 0.1])
# not symmetric: a transposed pair of states changes every log-probability
TRANSITION = np.array([[0.7, 0.1, 0.5], [0.2, 0.6, 0.1], [0.1, 0.3, 0.4]])
EMISSION = np.array([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6]])  # P(label = l | z = k), columns k


def chain_energy(q_out, batch_shape):
    return energy(MarkovChainNode, {"q_out": q_out}, batch_shape=batch_shape, initial=INITIAL, transition=TRANSITION)


def test_an_observed_path_has_minus_its_log_probability_per_step():
    path = np.array([0, 2, 2, 1, 0])
    result = chain_energy(PointMass(np.eye(3)[path], 1), (5,))
    expected = -np.log(np.concatenate([[INITIAL[path[0]]], TRANSITION[path[1:], path[:-1]]]))
    np.testing.assert_allclose(result, expected, rtol=1e-12)


def test_an_impossible_transition_with_no_weight_adds_nothing():
    """0 · log 0 = 0: q puts no mass on the pair (z_2 = 0, z_1 = 1), whose probability is zero."""
    transition = np.array([[0.5, 0.0], [0.5, 1.0]])
    q = CategoricalDistribution(np.array([[0.0, 1.0], [0.0, 1.0]]))
    result = energy(MarkovChainNode, {"q_out": q}, batch_shape=(2,), initial=np.array([0.5, 0.5]),
                    transition=transition)
    np.testing.assert_allclose(result, [np.log(2.0), 0.0], atol=1e-15)


def unrolled(labels):
    with fg.Model() as model:
        state = Categorical("z0", INITIAL)
        for t, label in enumerate(labels):
            if t > 0:
                state = Transition(f"z{t}", state, TRANSITION)
            Transition(f"y{t}", state, EMISSION, observed=label)
    return model


def test_energy_equals_the_unrolled_chains_mean_field_free_energy():
    labels = np.array([0, 2, 2, 1, 0, 2, 1])
    init = {f"z{t}": fg.Categorical(np.ones(3) / 3) for t in range(len(labels))}
    result = fg.infer(unrolled(labels), algorithm="vmp", iterations=60, init=init)
    q = np.array([result.marginal(f"z{t}").probabilities for t in range(len(labels))])
    assert np.ptp(q, axis=0).max() > 0.2  # the marginals differ from step to step
    entropies = -np.sum(q * np.log(q), axis=1)
    emission_energies = -np.sum(q * np.log(EMISSION[labels]), axis=1)
    chain = chain_energy(CategoricalDistribution(q), (len(labels),))
    np.testing.assert_allclose(np.sum(chain), result.free_energy[-1] + entropies.sum() - emission_energies.sum(),
                               rtol=1e-12)
    # per step, the energies of the unrolled nodes written out
    expected = np.concatenate([[-q[0] @ np.log(INITIAL)],
                               [-q[t] @ np.log(TRANSITION) @ q[t - 1] for t in range(1, len(labels))]])
    np.testing.assert_allclose(chain, expected, rtol=1e-12)


def test_a_batch_of_chains_has_the_energies_of_each_chain():
    q = np.random.default_rng(3).dirichlet(np.ones(3), size=(2, 4))
    together = chain_energy(CategoricalDistribution(q), (2, 4))
    for b in range(2):
        np.testing.assert_allclose(together[b], chain_energy(CategoricalDistribution(q[b]), (4,)), rtol=1e-14)
