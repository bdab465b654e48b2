"""Transition node rules towards ``matrix``: MatrixDirichlet(1 + E[out inᵀ]), log-scale 0 (variational)."""
import numpy as np
import pytest

from fgraph.families import Categorical, Contingency, MatrixDirichlet, PointMass
from fgraph.nodes.transition import TransitionNode
from tests.rules.tables import assert_message, message


def matrix_dirichlet(alpha):
    return {"family": MatrixDirichlet, "alpha": alpha, "log_scale": 0.0}


CASES = [
    pytest.param({"q_out_in": Contingency([[0.1, 0.2], [0.3, 0.4]])}, matrix_dirichlet([[1.1, 1.2], [1.3, 1.4]]),
                 id="structured"),
    pytest.param({"q_out_in": Contingency([[[1.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.5, 0.5]]])},
                 matrix_dirichlet([[[2.0, 1.0], [1.0, 1.0]], [[1.0, 1.0], [1.5, 1.5]]]), id="structured-batched"),
    # outer((.25, .75), (.4, .6)) = [[.1, .15], [.3, .45]]
    pytest.param({"q_out": Categorical([0.25, 0.75]), "q_in": Categorical([0.4, 0.6])},
                 matrix_dirichlet([[1.1, 1.15], [1.3, 1.45]]), id="mf"),
    pytest.param({"q_out": PointMass([0.0, 1.0, 0.0], 1), "q_in": PointMass([1.0, 0.0], 1)},
                 matrix_dirichlet([[1.0, 1.0], [2.0, 1.0], [1.0, 1.0]]), id="mf-observed"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_matrix(inputs, expected):
    assert_message(message(TransitionNode, "matrix", inputs), expected)


def test_structured_is_exp_expected_log_factor():
    """log of the message density differs from E_q[log f(out, in, A)] = Σ_ij P_ij log A_ij by a constant in A."""
    table = np.array([[0.1, 0.2], [0.3, 0.4]])
    result = message(TransitionNode, "matrix", {"q_out_in": Contingency(table)})
    matrices = [np.array([[0.3, 0.8], [0.7, 0.2]]), np.array([[0.6, 0.1], [0.4, 0.9]]), np.array([[0.5, 0.5], [0.5, 0.5]])]
    differences = [result.logpdf(a) - np.sum(table * np.log(a)) for a in matrices]
    np.testing.assert_allclose(differences, differences[0], rtol=1e-12)
