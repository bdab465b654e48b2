"""Joint marginal of the Transition cluster (out, in): q(out = e_i, in = e_j) ∝ f̃_ij π_out,i π_in,j.

Hand values: A = [[.9, .2], [.1, .8]], π_out = (1/2, 1/2), π_in = (1/4, 3/4):
weights = [[.9/8, .2 * 3/8], [.1/8, .8 * 3/8]] = [[.1125, .075], [.0125, .3]], Σ = 1/2.
"""
import numpy as np
import pytest

from fgraph import registry
from fgraph.families import Categorical, Contingency, MatrixDirichlet, PointMass
from fgraph.nodes.transition import TransitionNode
from tests.rules.tables import TOLERANCE, message
from tests.rules.transition.brute_force import factor, geometric_mean_matrix_by_quadrature

A = np.array([[0.9, 0.2], [0.1, 0.8]])
E = np.e
# Ã for alpha = [[1, 2], [1, 1]] (see test_out.py)
A_TILDE = np.array([[E**-1, E**-0.5], [E**-1, E**-1.5]])


def joint(inputs):
    node = TransitionNode("node", ())
    families = {name: type(value) for name, value in inputs.items()}
    bound = registry.resolve(registry.MARGINAL, TransitionNode, ("out", "in"), families, "table test")
    result = bound(inputs, node)
    assert isinstance(result, bound.output_family)
    return result


CASES = [
    pytest.param({"m_out": Categorical([0.5, 0.5]), "m_in": Categorical([0.25, 0.75]), "q_matrix": PointMass(A, 2)},
                 [[0.225, 0.15], [0.025, 0.6]], id="fixed-matrix"),
    pytest.param({"m_out": Categorical([0.5, 0.5]), "m_in": Categorical([0.5, 0.5]),
                  "q_matrix": MatrixDirichlet([[1.0, 2.0], [1.0, 1.0]])},
                 A_TILDE / A_TILDE.sum(), id="structured"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_out_in(inputs, expected):
    result = joint(inputs)
    assert isinstance(result, Contingency)
    np.testing.assert_allclose(result.probabilities, expected, **TOLERANCE)


def test_structured_against_enumeration():
    """q(e_i, e_j) ∝ exp E_q[log f(e_i, e_j, A)] π_out,i π_in,j, E[log A] by quadrature."""
    alpha = np.array([[0.8, 2.0, 3.0], [1.5, 1.0, 0.6]])
    pi_out, pi_in = np.array([0.35, 0.65]), np.array([0.2, 0.5, 0.3])
    result = joint({"m_out": Categorical(pi_out), "m_in": Categorical(pi_in), "q_matrix": MatrixDirichlet(alpha)})
    a_tilde = geometric_mean_matrix_by_quadrature(alpha)
    weights = np.array([[factor(np.eye(2)[i], np.eye(3)[j], a_tilde) * pi_out[i] * pi_in[j] for j in range(3)]
                        for i in range(2)])
    np.testing.assert_allclose(result.probabilities, weights / weights.sum(), rtol=1e-8)


def test_marginals_agree_with_the_messages():
    """Σ_j q(i, j) ∝ π_out,i × (message towards out)_i and Σ_i q(i, j) ∝ π_in,j × (message towards in)_j."""
    alpha = np.array([[0.8, 2.0], [1.5, 1.0]])
    m_out, m_in, q_matrix = Categorical([0.35, 0.65]), Categorical([0.2, 0.8]), MatrixDirichlet(alpha)
    result = joint({"m_out": m_out, "m_in": m_in, "q_matrix": q_matrix})
    towards_out = message(TransitionNode, "out", {"m_in": m_in, "q_matrix": q_matrix}).probabilities
    towards_in = message(TransitionNode, "in", {"m_out": m_out, "q_matrix": q_matrix}).probabilities
    belief_out = m_out.probabilities * towards_out
    belief_in = m_in.probabilities * towards_in
    np.testing.assert_allclose(result.out_probabilities, belief_out / belief_out.sum(), rtol=1e-12)
    np.testing.assert_allclose(result.in_probabilities, belief_in / belief_in.sum(), rtol=1e-12)
