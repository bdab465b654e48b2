"""Table test of the MvNormalMeanPrecision rules towards ``mean`` (symmetric in out and mean)."""
import numpy as np
import pytest

from fgraph.families import MvNormalMeanCovariance, PointMass, Wishart
from fgraph.nodes.mvnormal import MvNormalMeanPrecision as Node
from tests.rules.tables import assert_message, message, mv_normal

# Λ ~ Wishart(4, I/2): E[Λ] = 2 I; E[log|Λ|] = ψ(2) + ψ(3/2) + 2 log 2 + log(1/4) = 3 - 2γ - 2 log 2
# (ψ(3/2) = 2 - γ - 2 log 2); log|E[Λ]| = 2 log 2; log-scale ½ (3 - 2γ - 4 log 2).
WISHART = Wishart(4.0, 0.5 * np.eye(2))
WISHART_LOG_SCALE = 0.5 * (3.0 - 2.0 * np.euler_gamma - 4.0 * np.log(2.0))

CASES = [
    pytest.param({"m_out": MvNormalMeanCovariance([1.0, 0.0], np.eye(2)), "q_precision": PointMass(4.0 * np.eye(2), 2)},
                 mv_normal([1.0, 0.0], 1.25 * np.eye(2)), id="sp"),
    pytest.param({"m_out": MvNormalMeanCovariance([1.0, 0.0], np.eye(2)), "q_precision": WISHART},
                 mv_normal([1.0, 0.0], 1.5 * np.eye(2), WISHART_LOG_SCALE), id="structured-wishart"),
    # observed out, clamped precision: N(y | mean, Λ^-1) = N(mean | y, Λ^-1), log-scale 0
    pytest.param({"q_out": PointMass([3.0, 1.0], 1), "q_precision": PointMass(np.diag([1.0, 2.0]), 2)},
                 mv_normal([3.0, 1.0], np.diag([1.0, 0.5])), id="observed-out"),
    pytest.param({"q_out": MvNormalMeanCovariance([3.0, 1.0], np.eye(2)), "q_precision": WISHART},
                 mv_normal([3.0, 1.0], 0.5 * np.eye(2)), id="mf-wishart"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_mean(inputs, expected):
    assert_message(message(Node, "mean", inputs), expected)
