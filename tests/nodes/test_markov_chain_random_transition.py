"""Markov chain node with a random transition matrix: the average energy under q(z) (two-slice tables) and q(A).

U_1 = −Σ_k q(z_1 = k) log π_k (q(z_1) the margin of the first table, ``diag q(z_1)``),
U_t = −Σ_ij ξ_t[i, j] E[log A_ij] for t ≥ 2, with E[log A_ij] = ψ(α_ij) − ψ(Σ_i' α_i'j) for a MatrixDirichlet
q(A) and log A_ij for a known matrix (a point mass).
"""
import numpy as np
from scipy.special import digamma

from fgraph.families import Contingency, MatrixDirichlet, PointMass
from fgraph.nodes.markov_chain import MarkovChainNode
from tests.rules.tables import energy

INITIAL = np.array([0.6, 0.3, 0.1])
MATRIX = np.array([[0.7, 0.1, 0.5], [0.2, 0.6, 0.1], [0.1, 0.3, 0.4]])


def pair_tables(path):
    """The one-hot tables of a state path: diag e_{z_1}, then e_{z_t} e_{z_{t−1}}ᵀ."""
    states = np.eye(3)[path]
    return np.concatenate([[np.diag(states[0])], states[1:, :, None] * states[:-1, None, :]])


def test_an_observed_path_with_a_known_matrix_has_minus_its_log_probability_per_step():
    path = np.array([0, 2, 2, 1, 0])
    inputs = {"q_out_pairs": Contingency(pair_tables(path)), "q_transition": PointMass(MATRIX, 2)}
    result = energy(MarkovChainNode, inputs, batch_shape=(5,), initial=INITIAL)
    expected = -np.log(np.concatenate([[INITIAL[path[0]]], MATRIX[path[1:], path[:-1]]]))
    np.testing.assert_allclose(result, expected, rtol=1e-12)


def test_a_dirichlet_matrix_and_soft_tables():
    """Random tables and α: each step's energy written out with digamma; a zero entry of π with zero weight
    adds nothing (0 · log 0 = 0)."""
    rng = np.random.default_rng(4)
    initial = np.array([0.0, 0.4, 0.6])
    tables = rng.dirichlet(np.ones(9), size=4).reshape(4, 3, 3)
    tables[0] = np.diag([0.0, 0.3, 0.7])
    alpha = rng.uniform(0.5, 3.0, (3, 3))
    result = energy(MarkovChainNode, {"q_out_pairs": Contingency(tables), "q_transition": MatrixDirichlet(alpha)},
                    batch_shape=(4,), initial=initial)
    mean_log = digamma(alpha) - digamma(alpha.sum(axis=0))
    expected = [-(0.3 * np.log(0.4) + 0.7 * np.log(0.6))] + [-np.sum(tables[t] * mean_log) for t in range(1, 4)]
    np.testing.assert_allclose(result, expected, rtol=1e-12)


def test_a_batch_with_a_matrix_per_chain_has_each_chains_energy():
    rng = np.random.default_rng(6)
    tables = rng.dirichlet(np.ones(9), size=(2, 3)).reshape(2, 3, 3, 3)
    tables[:, 0] = [np.diag(v) for v in rng.dirichlet(np.ones(3), size=2)]
    alpha = rng.uniform(0.5, 3.0, (2, 1, 3, 3))
    together = energy(MarkovChainNode, {"q_out_pairs": Contingency(tables), "q_transition": MatrixDirichlet(alpha)},
                      batch_shape=(2, 3), initial=INITIAL)
    for b in range(2):
        alone = energy(MarkovChainNode, {"q_out_pairs": Contingency(tables[b]),
                                         "q_transition": MatrixDirichlet(alpha[b, 0])},
                       batch_shape=(3,), initial=INITIAL)
        np.testing.assert_allclose(together[b], alone, rtol=1e-14)
