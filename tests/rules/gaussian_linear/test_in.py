"""Table test of the Gaussian linear transition rules towards ``in``.

Sum-product: N(a in | μ_m, v_m + v) = N(in | μ_m/a, (v_m + v)/a²) / |a|, log-scale -log|a|;
mean-field: N(in | E[out]/a, v/a²) with the same log-scale (exact for an observed out).
"""
import numpy as np
import pytest

from fgraph.families import NormalMeanVariance, PointMass
from fgraph.nodes.gaussian_linear import GaussianLinear
from tests.rules.tables import assert_message, message, normal

CASES = [
    pytest.param(2.0, {"m_out": NormalMeanVariance(4.0, 1.5), "q_var": PointMass(0.5)},
                 normal(2.0, 0.5, -np.log(2.0)), id="sp"),
    pytest.param(-0.5, {"m_out": NormalMeanVariance(1.0, 0.75), "q_var": PointMass(0.25)},
                 normal(-2.0, 4.0, np.log(2.0)), id="sp-negative-small"),
    pytest.param(2.0, {"m_out": NormalMeanVariance([2.0, -2.0], [1.0, 3.0]), "q_var": PointMass(1.0)},
                 normal([1.0, -1.0], [0.5, 1.0], -np.log(2.0)), id="sp-batched"),
    pytest.param(3.0, {"q_out": PointMass(6.0), "q_var": PointMass(0.9)}, normal(2.0, 0.1, -np.log(3.0)), id="observed-out"),
    pytest.param(-1.0, {"q_out": NormalMeanVariance(1.0, 4.0), "q_var": PointMass(2.0)}, normal(-1.0, 2.0), id="mf-normal"),
]


@pytest.mark.parametrize("gain, inputs, expected", CASES)
def test_in(gain, inputs, expected):
    assert_message(message(GaussianLinear, "in", inputs, gain=gain), expected)
