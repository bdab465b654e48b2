"""Table test of the matrix-normal–gamma prior node towards ``out``: the factor itself, log-scale 0."""
import numpy as np
import pytest

from fgraph.families import PointMass
from fgraph.families.matrix_normal_gamma import MatrixNormalGamma
from fgraph.nodes.matrix_normal_gamma import MatrixNormalGammaNode
from tests.rules.tables import assert_message, message

MEAN = np.array([[1.0, -2.0], [0.5, 0.0]])
COVARIANCE = np.array([[2.0, 0.5], [0.5, 1.0]])

CASES = [
    pytest.param({"q_mean": PointMass(MEAN, 2), "q_column_covariance": PointMass(COVARIANCE, 2),
                  "q_shape": PointMass(np.array([2.0, 3.0]), 1), "q_rate": PointMass(np.array([1.0, 0.5]), 1)},
                 # E[λ] = α/β = (2, 6), E[A] = M, E[λ_i a_i] = E[λ_i] m_i
                 {"family": MatrixNormalGamma, "matrix_mean": MEAN, "column_covariance": COVARIANCE,
                  "shape": [2.0, 3.0], "rate": [1.0, 0.5], "mean_precision": [2.0, 6.0],
                  "mean_weighted_rows": [[2.0, -4.0], [3.0, 0.0]]}, id="point-masses"),
    pytest.param({"q_mean": PointMass(np.zeros((3, 1, 1, 2)), 2), "q_column_covariance": PointMass(10.0 * np.eye(2), 2),
                  "q_shape": PointMass(np.full(1, 2.0), 1), "q_rate": PointMass(np.ones(1), 1)},
                 # eq. (4) of the CMN paper per expert: M = 0, V = 10 I, a0 = 2, b0 = 1; E[Σ λ a aᵀ] = h V = 10 I
                 {"family": MatrixNormalGamma, "column_covariance": np.broadcast_to(10.0 * np.eye(2), (3, 1, 2, 2)),
                  "mean_weighted_outer_sum": np.broadcast_to(10.0 * np.eye(2), (3, 1, 2, 2)),
                  "mean_precision": np.full((3, 1, 1), 2.0)}, id="one-per-expert"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_out(inputs, expected):
    assert_message(message(MatrixNormalGammaNode, "out", inputs), expected)
