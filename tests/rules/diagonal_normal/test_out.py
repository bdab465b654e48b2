"""Table test of the DiagonalNormal rules towards ``out``: the predictive of noisy observations."""
import numpy as np
import pytest

from fgraph.families import MvNormalMeanCovariance, PointMass
from fgraph.families.gaussian_process import GaussianProcessPrior, MvNormalDiagonal
from fgraph.nodes.diagonal_normal import DiagonalNormalNode
from tests.rules.tables import assert_message, message

V = PointMass([0.5, 2.0], 1)

CASES = [
    pytest.param({"q_mean": PointMass([1.0, -3.0], 1), "q_variances": V},
                 {"family": MvNormalDiagonal, "mean": [1.0, -3.0], "var": [0.5, 2.0]}, id="known-mean"),
    pytest.param({"m_mean": MvNormalDiagonal([1.0, 2.0], [0.25, 1.0]), "q_variances": V},
                 {"family": MvNormalDiagonal, "mean": [1.0, 2.0], "var": [0.75, 3.0]}, id="sp-diagonal"),
    # a Gaussian-process prior on the mean: N(out | m, K + V), the prior predictive of the observations
    pytest.param({"m_mean": GaussianProcessPrior([0.0, 1.0], [[1.0, 0.5], [0.5, 1.0]]), "q_variances": V},
                 {"family": MvNormalMeanCovariance, "mean": [0.0, 1.0], "cov": [[1.5, 0.5], [0.5, 3.0]]},
                 id="sp-process"),
    pytest.param({"q_mean": MvNormalMeanCovariance([4.0, 5.0], np.eye(2)), "q_variances": V},
                 {"family": MvNormalDiagonal, "mean": [4.0, 5.0], "var": [0.5, 2.0]}, id="mf"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_out(inputs, expected):
    assert_message(message(DiagonalNormalNode, "out", inputs), expected)
