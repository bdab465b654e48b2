"""Table test of IsotropicNormal towards ``mean``: N(mean | E[out], (E[τ] I)⁻¹), worked by hand."""
import numpy as np
import pytest

from fgraph.families import MvNormalMeanCovariance, PointMass
from fgraph.families.gamma import Gamma
from fgraph.nodes.isotropic_normal import IsotropicNormalNode as Node
from tests.rules.tables import assert_message, message, mv_normal

CASES = [
    # known out (3, −1), E[τ] = 2/4: covariance 2 I
    pytest.param({"q_out": PointMass(np.array([3.0, -1.0]), 1), "q_precision": Gamma(2.0, 4.0)},
                 mv_normal([3.0, -1.0], 2.0 * np.eye(2)), id="observed-out"),
    # latent out: its mean only; known τ = 10
    pytest.param({"q_out": MvNormalMeanCovariance(np.array([0.5, 0.5]), np.eye(2)), "q_precision": PointMass(10.0)},
                 mv_normal([0.5, 0.5], 0.1 * np.eye(2)), id="latent-out"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_mean(inputs, expected):
    assert_message(message(Node, "mean", inputs), expected)
