"""Table test of the MvNormalMeanCovariance rules towards ``out``: N(out | μ_m, Σ_m + Σ) and N(out | E[mean], Σ)."""
import numpy as np
import pytest

from fgraph.families import MvNormalMeanCovariance, MvNormalMeanPrecision, PointMass
from fgraph.nodes.mvnormal import MvNormalMeanCovariance as Node
from tests.rules.tables import assert_message, message, mv_normal

SIGMA = np.array([[1.0, 0.5], [0.5, 2.0]])
COV = np.array([[2.0, 0.0], [0.0, 1.0]])

CASES = [
    pytest.param({"m_mean": MvNormalMeanCovariance([1.0, -1.0], SIGMA), "q_cov": PointMass(COV, 2)},
                 mv_normal([1.0, -1.0], [[3.0, 0.5], [0.5, 3.0]]), id="sp"),
    # precision diag(2, 4) -> covariance diag(0.5, 0.25)
    pytest.param({"m_mean": MvNormalMeanPrecision([0.0, 2.0], np.diag([2.0, 4.0])),
                  "q_cov": PointMass([[1.0, 0.2], [0.2, 1.0]], 2)},
                 mv_normal([0.0, 2.0], [[1.5, 0.2], [0.2, 1.25]]), id="sp-precision"),
    pytest.param({"m_mean": MvNormalMeanCovariance([[1.0, 0.0], [0.0, 1.0]], np.eye(2)), "q_cov": PointMass(COV, 2)},
                 mv_normal([[1.0, 0.0], [0.0, 1.0]], [[[3.0, 0.0], [0.0, 2.0]]] * 2), id="sp-batched"),
    pytest.param({"q_mean": PointMass([1.0, 2.0], 1), "q_cov": PointMass(COV, 2)}, mv_normal([1.0, 2.0], COV), id="mf-point-mass"),
    pytest.param({"q_mean": MvNormalMeanCovariance([3.0, 4.0], SIGMA), "q_cov": PointMass(COV, 2)},
                 mv_normal([3.0, 4.0], COV), id="mf-normal"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_out(inputs, expected):
    assert_message(message(Node, "out", inputs), expected)
