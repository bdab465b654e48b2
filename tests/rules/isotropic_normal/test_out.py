"""Table test of IsotropicNormal towards ``out``: N(out | E[mean], (E[τ] I)⁻¹), worked by hand."""
import numpy as np
import pytest

from fgraph.families import MvNormalMeanCovariance, PointMass
from fgraph.families.gamma import Gamma
from fgraph.nodes.isotropic_normal import IsotropicNormalNode as Node
from tests.rules.tables import assert_message, message, mv_normal

CASES = [
    # known mean (1, 2) and τ = 4: N((1, 2), I/4), exact: log-scale 0
    pytest.param({"q_mean": PointMass(np.array([1.0, 2.0]), 1), "q_precision": PointMass(4.0)},
                 mv_normal([1.0, 2.0], 0.25 * np.eye(2)), id="clamped"),
    # E[mean] = (0, 1, −1) (its covariance is not read), E[τ] = 3/2: covariance I/1.5
    pytest.param({"q_mean": MvNormalMeanCovariance(np.array([0.0, 1.0, -1.0]), np.diag([1.0, 2.0, 3.0])),
                  "q_precision": Gamma(3.0, 2.0)},
                 mv_normal([0.0, 1.0, -1.0], np.eye(3) / 1.5), id="mean-field"),
    # one mean for a batch (2, 1) of precisions E[τ] = (2, 1/2): batch (2, 1)
    pytest.param({"q_mean": PointMass(np.zeros(2), 1), "q_precision": Gamma(np.array([[4.0], [1.0]]), 2.0)},
                 mv_normal(np.zeros((2, 1, 2)), np.array([[0.5 * np.eye(2)], [2.0 * np.eye(2)]])), id="batched"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_out(inputs, expected):
    assert_message(message(Node, "out", inputs), expected)
