"""Table test of the Gaussian-process prior's rule towards ``out``: N(out | m, k(X, X))."""
import numpy as np
import pytest

from fgraph.families import PointMass
from fgraph.families.gaussian_process import GaussianProcessPrior
from fgraph.families.kernels import ExponentiatedQuadratic, Linear
from fgraph.nodes.gaussian_process import GaussianProcessNode
from tests.rules.tables import assert_message, message

INPUTS = np.array([[0.0], [1.0], [3.0]])

CASES = [
    # k(x, x') = 2 exp(−(x − x')²/2): 2 e^{−1/2} = 1.2130613194252668, 2 e^{−2} = 0.2706705664732254,
    # 2 e^{−9/2} = 0.022217993076484612
    pytest.param({"q_mean": PointMass([0.5, 0.5, 0.5], 1)}, ExponentiatedQuadratic(2.0, 1.0),
                 {"family": GaussianProcessPrior, "mean": [0.5, 0.5, 0.5],
                  "cov": [[2.0, 1.2130613194252668, 0.022217993076484612],
                          [1.2130613194252668, 2.0, 0.2706705664732254],
                          [0.022217993076484612, 0.2706705664732254, 2.0]]}, id="eq"),
    # σ² x x': 0.5 · [[0, 0, 0], [0, 1, 3], [0, 3, 9]] — singular, which the prior message holds as it is
    pytest.param({"q_mean": PointMass([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], 1)}, Linear(0.5),
                 {"family": GaussianProcessPrior, "mean": [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]],
                  "cov": [[[0.0, 0.0, 0.0], [0.0, 0.5, 1.5], [0.0, 1.5, 4.5]]] * 2}, id="linear-batched"),
]


@pytest.mark.parametrize("inputs, kernel, expected", CASES)
def test_out(inputs, kernel, expected):
    assert_message(message(GaussianProcessNode, "out", inputs, kernel=kernel, points=INPUTS), expected)


def test_the_message_carries_the_nodes_jitter_setting():
    result = message(GaussianProcessNode, "out", {"q_mean": PointMass(np.zeros(3), 1)},
                     kernel=ExponentiatedQuadratic(), points=INPUTS, jitter=1e-4)
    assert result.jitter_setting == 1e-4 and result.jitter == 1e-4
