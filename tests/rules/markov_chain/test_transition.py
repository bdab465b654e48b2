"""The Markov-chain node's message to a random transition matrix: MatrixDirichlet(1 + Σ_{t≥2} ξ_t) per chain.

``q_out_pairs`` is the chain's joint marginal as its two-slice tables ξ_t = q(z_t, z_{t−1}) (element 1:
``diag q(z_1)``, no transition, left out); the message has the interface's batch ``batch[:-1] + (1,)``.
Log-scale 0 (variational).
"""
import numpy as np
import pytest

from fgraph.errors import ModelError
from fgraph.families import Categorical, Contingency, MatrixDirichlet
from fgraph.families.pointmass import Uninformative
from fgraph.nodes.markov_chain import MarkovChainNode
from tests.rules.tables import assert_message, message

FIRST = np.diag([0.25, 0.75])  # diag q(z_1): not counted
SECOND = np.array([[0.1, 0.2], [0.3, 0.4]])
THIRD = np.array([[0.0, 0.5], [0.5, 0.0]])


def matrix_dirichlet(alpha):
    return {"family": MatrixDirichlet, "alpha": alpha, "log_scale": 0.0}


CASES = [
    # 1 + ξ_2 + ξ_3 = [[1.1, 1.7], [1.8, 1.4]], kept as one message per chain: batch (1,)
    pytest.param(np.array([FIRST, SECOND, THIRD]), (3,), matrix_dirichlet([[[1.1, 1.7], [1.8, 1.4]]]),
                 id="one-chain"),
    pytest.param(np.array([FIRST]), (1,), matrix_dirichlet([np.ones((2, 2))]), id="one-step-no-transition"),
    # chain 0: 1 + ξ_2; chain 1: 1 + ξ_3 (both with a first table that is not counted), batch (2, 1)
    pytest.param(np.array([[FIRST, SECOND], [np.diag([1.0, 0.0]), THIRD]]), (2, 2),
                 matrix_dirichlet([[[[1.1, 1.2], [1.3, 1.4]]], [[[1.0, 1.5], [1.5, 1.0]]]]), id="two-chains"),
]


@pytest.mark.parametrize("tables, batch, expected", CASES)
def test_transition(tables, batch, expected):
    inputs = {"m_transition": MatrixDirichlet(np.ones((2, 2))), "q_out_pairs": Contingency(tables)}
    result = message(MarkovChainNode, "transition", inputs, batch_shape=batch, initial=np.array([0.5, 0.5]))
    assert result.batch_shape == batch[:-1] + (1,)
    assert_message(result, expected)


def test_the_message_is_exp_expected_log_factor():
    """log of the message density differs from E_q[log f] = Σ_t Σ_ij ξ_t[i, j] log A_ij by a constant in A."""
    tables = np.array([FIRST, SECOND, THIRD])
    result = message(MarkovChainNode, "transition", {"m_transition": MatrixDirichlet(np.ones((2, 2))),
                                                     "q_out_pairs": Contingency(tables)},
                     batch_shape=(3,), initial=np.array([0.5, 0.5]))
    matrices = [np.array([[0.3, 0.8], [0.7, 0.2]]), np.array([[0.6, 0.1], [0.4, 0.9]]), np.full((2, 2), 0.5)]
    differences = [result.logpdf(a)[0] - np.sum((SECOND + THIRD) * np.log(a)) for a in matrices]
    np.testing.assert_allclose(differences, differences[0], rtol=1e-12)


def test_sum_product_is_refused():
    inputs = {"m_transition": MatrixDirichlet(np.ones((2, 2))), "m_out": Categorical(np.full((3, 2), 0.5)),
              "m_pairs": Uninformative((3,), (2, 2))}
    with pytest.raises(ModelError, match="Use algorithm='vmp'"):
        message(MarkovChainNode, "transition", inputs, batch_shape=(3,), initial=np.array([0.5, 0.5]))
