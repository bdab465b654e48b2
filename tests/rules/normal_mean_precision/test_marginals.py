"""Table test of the NormalMeanPrecision joint marginal q(out, mean) of the structured cluster (out, mean).

Joint precision E[τ] [[1, -1], [-1, 1]] + diag(w_out, w_mean), weighted mean (ξ_out, ξ_mean).
"""
import numpy as np
import pytest

from fgraph.families import NormalMeanPrecision, NormalMeanVariance, PointMass
from fgraph.families.gamma import Gamma
from fgraph.nodes.normal import NormalMeanPrecision as Node
from tests.rules.tables import assert_message, joint_marginal, mv_normal

CASES = [
    # w = (2, 1), ξ = (2, 0), τ = 3: precision [[5, -3], [-3, 4]] (det 11), covariance [[4, 3], [3, 5]] / 11
    pytest.param({"m_out": NormalMeanVariance(1.0, 0.5), "m_mean": NormalMeanVariance(0.0, 1.0), "q_precision": PointMass(3.0)},
                 mv_normal([8.0 / 11.0, 6.0 / 11.0], np.array([[4.0, 3.0], [3.0, 5.0]]) / 11.0), id="point-mass"),
    # w = (1, 2), ξ = (1/2, 2), E[τ] = 2: precision [[3, -2], [-2, 4]] (det 8), covariance [[4, 2], [2, 3]] / 8
    pytest.param({"m_out": NormalMeanVariance(0.5, 1.0), "m_mean": NormalMeanPrecision(1.0, 2.0), "q_precision": Gamma(2.0, 1.0)},
                 mv_normal([0.75, 0.875], np.array([[4.0, 2.0], [2.0, 3.0]]) / 8.0), id="gamma"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_out_mean(inputs, expected):
    assert_message(joint_marginal(Node, ("out", "mean"), inputs), expected)
