"""Transition node rules towards ``out``.

Fixed A: (A π_in)_i, log-scale 0 (A is column-stochastic); observed in = e_j: column j of A.
MatrixDirichlet q(A) (structured cluster (out, in)): (Ã π_in)_i / Σ with log-scale log Σ_i (Ã π_in)_i,
Ã = exp E[log A]. Mean-field: ∝ exp(Σ_j E[in_j] E[log A_ij]).

Hand values: A = [[.5, .1], [.3, .3], [.2, .6]], π_in = (1/4, 3/4) gives A π = (.2, .3, .5).
alpha = [[1, 2], [1, 1]]: column 0 has E[log A_i0] = ψ(1) - ψ(2) = -1, column 1 has
E[log A_01] = ψ(2) - ψ(3) = -1/2 and E[log A_11] = ψ(1) - ψ(3) = -3/2, so
Ã = [[e^-1, e^-1/2], [e^-1, e^-3/2]].
"""
import numpy as np
import pytest

from fgraph.families import Categorical, MatrixDirichlet, PointMass
from fgraph.nodes.transition import TransitionNode
from tests.rules.tables import assert_message, message
from tests.rules.transition.brute_force import geometric_mean_matrix_by_quadrature, summed_over_in

A = np.array([[0.5, 0.1], [0.3, 0.3], [0.2, 0.6]])
ALPHA = np.array([[1.0, 2.0], [1.0, 1.0]])
E = np.e
# structured, π_in = (1/2, 1/2): g = ½ (e^-1 + e^-1/2, e^-1 + e^-3/2)
STRUCTURED_WEIGHTS = 0.5 * np.array([E**-1 + E**-0.5, E**-1 + E**-1.5])
# mean-field, E[in] = (1/2, 1/2): log w = ½ (-1 - 1/2, -1 - 3/2) = (-3/4, -5/4)
MEAN_FIELD_P0 = 1.0 / (1.0 + np.exp(-0.5))


def categorical(p, log_scale=0.0):
    return {"family": Categorical, "probabilities": p, "log_scale": log_scale}


CASES = [
    pytest.param({"m_in": Categorical([0.25, 0.75]), "q_matrix": PointMass(A, 2)}, categorical([0.2, 0.3, 0.5]), id="sp"),
    pytest.param({"m_in": Categorical([[1.0, 0.0], [0.5, 0.5]]), "q_matrix": PointMass(A, 2)},
                 categorical([[0.5, 0.3, 0.2], [0.3, 0.3, 0.4]]), id="sp-batched"),
    pytest.param({"q_in": PointMass([0.0, 1.0], 1), "q_matrix": PointMass(A, 2)}, categorical([0.1, 0.3, 0.6]),
                 id="observed-in"),
    pytest.param({"m_in": Categorical([0.5, 0.5]), "q_matrix": MatrixDirichlet(ALPHA)},
                 categorical(STRUCTURED_WEIGHTS / STRUCTURED_WEIGHTS.sum(), np.log(STRUCTURED_WEIGHTS.sum())),
                 id="structured"),
    pytest.param({"q_in": Categorical([0.5, 0.5]), "q_matrix": MatrixDirichlet(ALPHA)},
                 categorical([MEAN_FIELD_P0, 1.0 - MEAN_FIELD_P0]), id="mf"),
    # structural zero: A_10 = 0 meets E[in_0] = 0, which must contribute nothing (not NaN): log w = (log .5, log .5)
    pytest.param({"q_in": Categorical([0.0, 1.0]), "q_matrix": PointMass([[1.0, 0.5], [0.0, 0.5]], 2)},
                 categorical([0.5, 0.5]), id="mf-structural-zero"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_out(inputs, expected):
    assert_message(message(TransitionNode, "out", inputs), expected)


@pytest.mark.parametrize("pi_in", [[0.25, 0.75], [0.9, 0.1]])
def test_sum_product_against_enumeration(pi_in):
    """message(e_i) exp(log_scale) = Σ_j f(e_i, e_j, A) π_in,j."""
    result = message(TransitionNode, "out", {"m_in": Categorical(pi_in), "q_matrix": PointMass(A, 2)})
    expected = summed_over_in(A, np.asarray(pi_in))
    np.testing.assert_allclose(np.exp(result.log_scale + result.logpdf(np.eye(3))), expected, rtol=1e-12)


def test_structured_against_enumeration_and_quadrature():
    """message(e_i) exp(log_scale) = Σ_j exp E_q[log f(e_i, e_j, A)] π_in,j, with E[log A] by quadrature."""
    alpha = np.array([[0.8, 2.0, 3.0], [1.5, 1.0, 0.6]])
    pi_in = np.array([0.2, 0.5, 0.3])
    result = message(TransitionNode, "out", {"m_in": Categorical(pi_in), "q_matrix": MatrixDirichlet(alpha)})
    expected = summed_over_in(geometric_mean_matrix_by_quadrature(alpha), pi_in)
    np.testing.assert_allclose(np.exp(result.log_scale + result.logpdf(np.eye(2))), expected, rtol=1e-8)
