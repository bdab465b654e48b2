"""MatrixDirichlet node rule towards ``out``: with alpha fixed the message is the factor, log-scale 0."""
import numpy as np
import pytest
from scipy import integrate

from fgraph.families import MatrixDirichlet, PointMass
from fgraph.nodes.matrix_dirichlet import MatrixDirichletNode
from tests.rules.tables import assert_message, message

CASES = [
    # column means alpha[:, j] / Σ_i alpha_ij: (1/4, 3/4) and (2/3, 1/3)
    pytest.param({"q_alpha": PointMass([[1.0, 2.0], [3.0, 1.0]], 2)},
                 {"family": MatrixDirichlet, "alpha": [[1.0, 2.0], [3.0, 1.0]], "mean": [[0.25, 2 / 3], [0.75, 1 / 3]]},
                 id="fixed"),
    pytest.param({"q_alpha": PointMass(np.ones((2, 3, 2)), 2)},
                 {"family": MatrixDirichlet, "alpha": np.ones((2, 3, 2)), "mean": np.full((2, 3, 2), 1 / 3)}, id="batched"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_out(inputs, expected):
    assert_message(message(MatrixDirichletNode, "out", inputs), expected)


def test_out_is_the_factor():
    """alpha = [[2, 1], [3, 2]]: f(A) = Beta(A_00 | 2, 3) Beta(A_01 | 1, 2) = 12 u (1-u)^2 * 2 (1-v); integral 1."""
    result = message(MatrixDirichletNode, "out", {"q_alpha": PointMass([[2.0, 1.0], [3.0, 2.0]], 2)})
    for u, v in [(0.2, 0.7), (0.5, 0.1), (0.9, 0.4)]:
        matrix = np.array([[u, v], [1.0 - u, 1.0 - v]])
        np.testing.assert_allclose(np.exp(result.log_scale + result.logpdf(matrix)),
                                   12.0 * u * (1.0 - u) ** 2 * 2.0 * (1.0 - v), rtol=1e-12)
    total, _ = integrate.dblquad(lambda v, u: np.exp(result.logpdf([[u, v], [1.0 - u, 1.0 - v]])), 0.0, 1.0, 0.0, 1.0)
    np.testing.assert_allclose(total, 1.0, rtol=1e-8)
