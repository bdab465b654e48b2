"""Table test of the Gaussian linear transition rules towards ``out``: N(out | a μ, a² v_in + v) and N(out | a E[in], v)."""
import pytest

from fgraph.families import NormalMeanPrecision, NormalMeanVariance, PointMass
from fgraph.nodes.gaussian_linear import GaussianLinear
from tests.rules.tables import assert_message, message, normal

CASES = [
    pytest.param(2.0, {"m_in": NormalMeanVariance(1.0, 2.0), "q_var": PointMass(0.5)}, normal(2.0, 8.5), id="sp"),
    pytest.param(-1.0, {"m_in": NormalMeanVariance(3.0, 1.0), "q_var": PointMass(1.0)}, normal(-3.0, 2.0), id="sp-negative"),
    # precision 4 -> variance 1/4; 0.5² / 4 + 1 = 17/16
    pytest.param(0.5, {"m_in": NormalMeanPrecision(2.0, 4.0), "q_var": PointMass(1.0)}, normal(1.0, 17.0 / 16.0), id="sp-precision"),
    pytest.param(2.0, {"m_in": NormalMeanVariance([0.0, 1.0], 1.0), "q_var": PointMass([1.0, 2.0])},
                 normal([0.0, 2.0], [5.0, 6.0]), id="sp-batched"),
    pytest.param(3.0, {"q_in": PointMass(2.0), "q_var": PointMass(1.0)}, normal(6.0, 1.0), id="mf-point-mass"),
    pytest.param(2.0, {"q_in": NormalMeanVariance(1.0, 5.0), "q_var": PointMass(0.5)}, normal(2.0, 0.5), id="mf-normal"),
]


@pytest.mark.parametrize("gain, inputs, expected", CASES)
def test_out(gain, inputs, expected):
    assert_message(message(GaussianLinear, "out", inputs, gain=gain), expected)
