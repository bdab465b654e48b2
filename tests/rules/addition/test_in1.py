"""Table test of the addition rules towards ``in1``: in1 = out - in2, so means subtract and (co)variances add; log-scale 0."""
import numpy as np
import pytest

from fgraph.families import MvNormalMeanCovariance, NormalMeanVariance, PointMass
from fgraph.nodes.addition import Addition, MvAddition
from tests.rules.tables import assert_message, message, mv_normal, normal, point_mass

CASES = [
    pytest.param(Addition, {"m_out": NormalMeanVariance(5.0, 1.0), "m_in2": NormalMeanVariance(2.0, 3.0)},
                 normal(3.0, 4.0), id="sp"),
    pytest.param(Addition, {"m_out": NormalMeanVariance(5.0, 1.0), "q_in2": PointMass(2.0)}, normal(3.0, 1.0), id="constant-in2"),
    # observed out = 5: m_in2(5 - in1) = N(in1 | 5 - 2, 3)
    pytest.param(Addition, {"q_out": PointMass(5.0), "m_in2": NormalMeanVariance(2.0, 3.0)}, normal(3.0, 3.0), id="observed-out"),
    pytest.param(Addition, {"q_out": PointMass(5.0), "q_in2": PointMass(2.0)}, point_mass(3.0), id="observed-out-constant-in2"),
    pytest.param(Addition, {"m_out": NormalMeanVariance([5.0, 0.0], [1.0, 2.0]), "m_in2": NormalMeanVariance(1.0, 1.0)},
                 normal([4.0, -1.0], [2.0, 3.0]), id="sp-batched"),
    pytest.param(MvAddition, {"m_out": MvNormalMeanCovariance([5.0, 1.0], np.eye(2)),
                               "m_in2": MvNormalMeanCovariance([2.0, 2.0], [[1.0, 0.5], [0.5, 1.0]])},
                 mv_normal([3.0, -1.0], [[2.0, 0.5], [0.5, 2.0]]), id="mv-sp"),
    pytest.param(MvAddition, {"m_out": MvNormalMeanCovariance([5.0, 1.0], np.eye(2)), "q_in2": PointMass([1.0, 1.0], 1)},
                 mv_normal([4.0, 0.0], np.eye(2)), id="mv-constant-in2"),
    pytest.param(MvAddition, {"q_out": PointMass([5.0, 1.0], 1), "m_in2": MvNormalMeanCovariance([2.0, 2.0], 3.0 * np.eye(2))},
                 mv_normal([3.0, -1.0], 3.0 * np.eye(2)), id="mv-observed-out"),
    pytest.param(MvAddition, {"q_out": PointMass([5.0, 1.0], 1), "q_in2": PointMass([2.0, 2.0], 1)},
                 point_mass([3.0, -1.0]), id="mv-observed-out-constant-in2"),
]


@pytest.mark.parametrize("node_type, inputs, expected", CASES)
def test_in1(node_type, inputs, expected):
    assert_message(message(node_type, "in1", inputs), expected)
