"""Table test of the NormalMeanVariance rules towards ``mean``: N(mean | μ_m, v_m + v) and N(mean | E[out], v)."""
import pytest

from fgraph.families import NormalMeanPrecision, NormalMeanVariance, PointMass
from nodes.normal import NormalMeanVariance as Node
from tests.rules.tables import assert_message, message, normal

CASES = [
    pytest.param({"m_out": NormalMeanVariance(1.0, 2.0), "q_var": PointMass(3.0)}, normal(1.0, 5.0), id="sp"),
    pytest.param({"m_out": NormalMeanPrecision(-3.0, 0.5), "q_var": PointMass(0.5)}, normal(-3.0, 2.5), id="sp-precision"),
    pytest.param({"m_out": NormalMeanVariance([1.0, 2.0, 3.0], 1.0), "q_var": PointMass(0.5)},
                 normal([1.0, 2.0, 3.0], [1.5, 1.5, 1.5]), id="sp-batched"),
    # observed out: N(y | mean, v) = N(mean | y, v) integrates to one in mean, log-scale 0
    pytest.param({"q_out": PointMass(4.0), "q_var": PointMass(2.0)}, normal(4.0, 2.0), id="observed-out"),
    pytest.param({"q_out": PointMass([4.0, -1.0]), "q_var": PointMass(2.0)}, normal([4.0, -1.0], [2.0, 2.0]),
                 id="observed-out-batched"),
    pytest.param({"q_out": NormalMeanVariance(0.5, 9.0), "q_var": PointMass(1.0)}, normal(0.5, 1.0), id="mf-normal"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_mean(inputs, expected):
    assert_message(message(Node, "mean", inputs), expected)
