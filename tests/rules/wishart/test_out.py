"""Table test of the Wishart node rule towards ``out``: the factor Wishart(out | ν, S) itself, log-scale 0."""
import numpy as np
import pytest

from fgraph.families import PointMass
from fgraph.nodes.wishart import WishartNode
from tests.rules.tables import assert_message, message, wishart

SCALE = np.array([[1.0, 0.3], [0.3, 0.5]])

CASES = [
    pytest.param({"q_df": PointMass(5.0), "q_scale": PointMass(SCALE, 2)}, wishart(5.0, SCALE), id="point-masses"),
    pytest.param({"q_df": PointMass(3.0), "q_scale": PointMass(np.eye(3), 2)}, wishart(3.0, np.eye(3)), id="three-dimensional"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_out(inputs, expected):
    assert_message(message(WishartNode, "out", inputs), expected)
