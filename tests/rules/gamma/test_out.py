"""Table test of the Gamma node rule towards ``out``: Gamma(out | α, E[β]), log-scale 0."""
import pytest

from fgraph.families import PointMass
from fgraph.families.gamma import Gamma
from nodes.gamma import GammaNode
from tests.rules.tables import assert_message, gamma, message

CASES = [
    pytest.param({"q_shape": PointMass(2.0), "q_rate": PointMass(3.0)}, gamma(2.0, 3.0), id="point-masses"),
    # E[β] = 4/2
    pytest.param({"q_shape": PointMass(1.5), "q_rate": Gamma(4.0, 2.0)}, gamma(1.5, 2.0), id="mf-gamma-rate"),
    pytest.param({"q_shape": PointMass([1.0, 2.0]), "q_rate": PointMass(0.5)}, gamma([1.0, 2.0], 0.5), id="batched"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_out(inputs, expected):
    assert_message(message(GammaNode, "out", inputs), expected)
