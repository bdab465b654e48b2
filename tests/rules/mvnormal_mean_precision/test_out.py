"""Table test of the MvNormalMeanPrecision rules towards ``out``.

Sum-product: N(out | μ_m, Σ_m + E[Λ]^-1) scaled by exp(½ (E[log|Λ|] - log|E[Λ]|)) (0 for a point mass);
mean-field: N(out | E[mean], E[Λ]^-1).
"""
import numpy as np
import pytest

from fgraph.families import MvNormalMeanCovariance, PointMass, Wishart
from fgraph.nodes.mvnormal import MvNormalMeanPrecision as Node
from tests.rules.tables import assert_message, message, mv_normal

# Λ ~ Wishart(5, diag(1/2, 1/4)): E[Λ] = diag(5/2, 5/4), E[Λ]^-1 = diag(2/5, 4/5);
# E[log|Λ|] = ψ(5/2) + ψ(2) + 2 log 2 + log(1/8) = 11/3 - 2γ - 3 log 2 (ψ(5/2) = 8/3 - γ - 2 log 2, ψ(2) = 1 - γ)
# and log|E[Λ]| = log(25/8), so the log-scale is ½ (11/3 - 2γ - 2 log 5) = 11/6 - γ - log 5.
WISHART = Wishart(5.0, np.diag([0.5, 0.25]))
WISHART_LOG_SCALE = 11.0 / 6.0 - np.euler_gamma - np.log(5.0)
SIGMA = np.array([[1.0, 0.5], [0.5, 2.0]])

CASES = [
    pytest.param({"m_mean": MvNormalMeanCovariance([1.0, 2.0], SIGMA), "q_precision": PointMass(np.diag([2.0, 4.0]), 2)},
                 mv_normal([1.0, 2.0], [[1.5, 0.5], [0.5, 2.25]]), id="sp"),
    pytest.param({"m_mean": MvNormalMeanCovariance([1.0, 2.0], SIGMA), "q_precision": WISHART},
                 mv_normal([1.0, 2.0], [[1.4, 0.5], [0.5, 2.8]], WISHART_LOG_SCALE), id="structured-wishart"),
    pytest.param({"q_mean": PointMass([1.0, 2.0], 1), "q_precision": WISHART},
                 mv_normal([1.0, 2.0], np.diag([0.4, 0.8])), id="mf-wishart"),
    pytest.param({"q_mean": MvNormalMeanCovariance([0.0, -1.0], SIGMA), "q_precision": PointMass([[2.0, 1.0], [1.0, 1.0]], 2)},
                 mv_normal([0.0, -1.0], [[1.0, -1.0], [-1.0, 2.0]]), id="mf-point-mass"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_out(inputs, expected):
    assert_message(message(Node, "out", inputs), expected)
