"""Table test of the addition rules towards ``out``: means add, (co)variances add, log-scale 0."""
import numpy as np
import pytest

from fgraph.families import MvNormalMeanCovariance, NormalMeanPrecision, NormalMeanVariance, PointMass
from nodes.addition import Addition, MvAddition
from tests.rules.tables import assert_message, message, mv_normal, normal

CASES = [
    pytest.param(Addition, {"m_in1": NormalMeanVariance(1.0, 2.0), "m_in2": NormalMeanVariance(3.0, 4.0)},
                 normal(4.0, 6.0), id="sp"),
    # precision 2 -> variance 1/2
    pytest.param(Addition, {"m_in1": NormalMeanPrecision(-1.0, 2.0), "m_in2": NormalMeanVariance(0.5, 0.5)},
                 normal(-0.5, 1.0), id="sp-precision"),
    pytest.param(Addition, {"m_in1": NormalMeanVariance(1.0, 2.0), "q_in2": PointMass(5.0)}, normal(6.0, 2.0), id="constant-in2"),
    pytest.param(Addition, {"q_in1": PointMass(-1.0), "m_in2": NormalMeanVariance(3.0, 4.0)}, normal(2.0, 4.0), id="constant-in1"),
    pytest.param(Addition, {"m_in1": NormalMeanVariance([0.0, 1.0], 1.0), "q_in2": PointMass([1.0, 1.0])},
                 normal([1.0, 2.0], [1.0, 1.0]), id="constant-batched"),
    pytest.param(MvAddition, {"m_in1": MvNormalMeanCovariance([1.0, 2.0], np.eye(2)),
                              "m_in2": MvNormalMeanCovariance([0.0, 1.0], [[1.0, 0.5], [0.5, 1.0]])},
                 mv_normal([1.0, 3.0], [[2.0, 0.5], [0.5, 2.0]]), id="mv-sp"),
    pytest.param(MvAddition, {"m_in1": MvNormalMeanCovariance([1.0, 2.0], np.eye(2)), "q_in2": PointMass([1.0, 1.0], 1)},
                 mv_normal([2.0, 3.0], np.eye(2)), id="mv-constant-in2"),
    pytest.param(MvAddition, {"q_in1": PointMass([1.0, -1.0], 1), "m_in2": MvNormalMeanCovariance([0.0, 0.0], 2.0 * np.eye(2))},
                 mv_normal([1.0, -1.0], 2.0 * np.eye(2)), id="mv-constant-in1"),
]


@pytest.mark.parametrize("node_type, inputs, expected", CASES)
def test_out(node_type, inputs, expected):
    assert_message(message(node_type, "out", inputs), expected)
