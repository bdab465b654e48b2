"""Table test of the multiplication rules towards ``out``: N(out | a μ, a² v) or N(out | A μ, A Σ A^T), log-scale 0."""
import numpy as np
import pytest

from fgraph.families import MvNormalMeanCovariance, NormalMeanVariance, PointMass
from fgraph.nodes.multiplication import Multiplication, MvMultiplication
from tests.rules.tables import assert_message, message, mv_normal, normal, point_mass

CASES = [
    pytest.param(Multiplication, 3.0, {"m_in": NormalMeanVariance(1.0, 2.0)}, normal(3.0, 18.0), id="scalar"),
    pytest.param(Multiplication, -0.5, {"m_in": NormalMeanVariance(1.0, 2.0)}, normal(-0.5, 0.5), id="negative"),
    pytest.param(Multiplication, 2.0, {"m_in": NormalMeanVariance([1.0, -1.0], [1.0, 3.0])},
                 normal([2.0, -2.0], [4.0, 12.0]), id="batched"),
    pytest.param(Multiplication, 3.0, {"q_in": PointMass(2.0)}, point_mass(6.0), id="constant-in"),
    # A = [[1, 2], [0, 1]]: A (1, 1) = (3, 1), A A^T = [[5, 2], [2, 1]]
    pytest.param(MvMultiplication, np.array([[1.0, 2.0], [0.0, 1.0]]), {"m_in": MvNormalMeanCovariance([1.0, 1.0], np.eye(2))},
                 mv_normal([3.0, 1.0], [[5.0, 2.0], [2.0, 1.0]]), id="square"),
    # A = [[1, 1]] (full row rank): A μ = 3, A Σ A^T = 1 + 2 + 2 * 0.5
    pytest.param(MvMultiplication, np.array([[1.0, 1.0]]), {"m_in": MvNormalMeanCovariance([1.0, 2.0], [[1.0, 0.5], [0.5, 2.0]])},
                 mv_normal([3.0], [[4.0]]), id="wide"),
    pytest.param(MvMultiplication, np.array([[1.0, 2.0], [0.0, 1.0]]), {"q_in": PointMass([1.0, 1.0], 1)},
                 point_mass([3.0, 1.0]), id="mv-constant-in"),
]


@pytest.mark.parametrize("node_type, gain, inputs, expected", CASES)
def test_out(node_type, gain, inputs, expected):
    assert_message(message(node_type, "out", inputs, gain=gain), expected)


def test_tall_gain_has_no_forward_message():
    """A 3x2 gain maps in onto a plane of R³: A Σ A^T is singular, no normal family holds the message."""
    gain = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    with pytest.raises(ValueError, match="degenerate Gaussian"):
        message(MvMultiplication, "out", {"m_in": MvNormalMeanCovariance([0.0, 0.0], np.eye(2))}, gain=gain)
