"""Table test of the MvNormalMeanPrecision rule towards ``precision``: Wishart(Λ | d + 2, S^-1), S = E[(out - mean)(out - mean)^T].

Log-scale: ∫ (2π)^(-d/2) |Λ|^(1/2) exp(-tr(Λ S)/2) dΛ = (2π)^(-d/2) 2^((d+2)d/2) |S|^(-(d+2)/2) Γ_d((d+2)/2)
(the Wishart normaliser with ν = d + 2). With Γ_2(2) = √π Γ(2) Γ(3/2) = π/2 and d = 2 it is
-log 2π + 4 log 2 - 2 log|S| + log(π/2) = 2 log 2 - 2 log|S|; with Γ(3/2) = √π/2 and d = 1 it is -3/2 log S.
"""
import numpy as np
import pytest

from fgraph.families import MvNormalMeanCovariance, PointMass
from fgraph.nodes.mvnormal import MvNormalMeanPrecision as Node
from tests.rules.tables import assert_message, message, wishart

CASES = [
    # out ~ N((1, 0), diag(1, 2)), mean = 0: S = diag(1, 2) + (1, 0)(1, 0)^T = diag(2, 2), |S| = 4
    pytest.param({"q_out": MvNormalMeanCovariance([1.0, 0.0], np.diag([1.0, 2.0])), "q_mean": PointMass([0.0, 0.0], 1)},
                 wishart(4.0, 0.5 * np.eye(2), 2.0 * np.log(2.0) - 2.0 * np.log(4.0)), id="observed-mean"),
    # S = [[2, 1], [1, 2]] + I + (1, 0)(1, 0)^T = [[4, 1], [1, 3]], |S| = 11, S^-1 = [[3, -1], [-1, 4]] / 11
    pytest.param({"q_out": MvNormalMeanCovariance([1.0, 1.0], [[2.0, 1.0], [1.0, 2.0]]),
                  "q_mean": MvNormalMeanCovariance([0.0, 1.0], np.eye(2))},
                 wishart(4.0, np.array([[3.0, -1.0], [-1.0, 4.0]]) / 11.0, 2.0 * np.log(2.0) - 2.0 * np.log(11.0)),
                 id="normals"),
    # d = 1, point masses 3 and 1: S = 4 -> Wishart(3, 1/4) = Gamma(3/2, 2), log-scale -3/2 log 4
    pytest.param({"q_out": PointMass([3.0], 1), "q_mean": PointMass([1.0], 1)},
                 wishart(3.0, [[0.25]], -1.5 * np.log(4.0)), id="one-dimensional-point-masses"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_precision(inputs, expected):
    assert_message(message(Node, "precision", inputs), expected)


def test_rank_one_statistic_raises():
    """Point masses on out and mean in d = 2 give a rank-one S: no Wishart represents |Λ|^(1/2) exp(-tr(ΛS)/2)."""
    inputs = {"q_out": PointMass([1.0, 2.0], 1), "q_mean": PointMass([0.0, 0.0], 1)}
    with pytest.raises(ValueError, match="not positive definite"):
        message(Node, "precision", inputs)
