"""Table test of the MvNormalMeanCovariance rules towards ``mean`` (symmetric in out and mean)."""
import numpy as np
import pytest

from fgraph.families import MvNormalMeanCovariance, PointMass
from fgraph.nodes.mvnormal import MvNormalMeanCovariance as Node
from tests.rules.tables import assert_message, message, mv_normal

COV = np.array([[1.0, -0.5], [-0.5, 1.0]])

CASES = [
    pytest.param({"m_out": MvNormalMeanCovariance([0.0, 1.0], np.diag([1.0, 2.0])), "q_cov": PointMass(COV, 2)},
                 mv_normal([0.0, 1.0], [[2.0, -0.5], [-0.5, 3.0]]), id="sp"),
    # observed out: N(y | mean, Σ) = N(mean | y, Σ), log-scale 0
    pytest.param({"q_out": PointMass([2.0, -2.0], 1), "q_cov": PointMass(COV, 2)}, mv_normal([2.0, -2.0], COV), id="observed-out"),
    pytest.param({"q_out": PointMass([[2.0, -2.0], [0.0, 1.0]], 1), "q_cov": PointMass(COV, 2)},
                 mv_normal([[2.0, -2.0], [0.0, 1.0]], [COV, COV]), id="observed-out-batched"),
    pytest.param({"q_out": MvNormalMeanCovariance([1.0, 1.0], np.eye(2)), "q_cov": PointMass(COV, 2)},
                 mv_normal([1.0, 1.0], COV), id="mf-normal"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_mean(inputs, expected):
    assert_message(message(Node, "mean", inputs), expected)
