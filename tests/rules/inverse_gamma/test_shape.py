"""Table test of the InverseGamma node rule towards ``shape``: exp(κ) exp(α c - log Γ(α)), a GammaShapeLikelihood.

c = E[log β] - E[log out], κ = -E[log out] - E[β] E[1/out]: GammaShapeLikelihood(alpha=1, beta=-c, count=1)
with log-scale κ + log ∫ exp(α c - log Γ(α)) dα (by adaptive quadrature in the helper).
"""
import math

import numpy as np
import pytest

from fgraph.families import InverseGamma, PointMass
from fgraph.families.gamma import Gamma
from fgraph.nodes.inverse_gamma import InverseGammaNode
from tests.rules.tables import assert_gamma_shape_likelihood, message

EULER = np.euler_gamma

CASES = [
    # x = 2, β = 3: c = log 3 - log 2, κ = -log 2 - 3/2
    pytest.param({"q_out": PointMass(2.0), "q_scale": PointMass(3.0)},
                 (1.0, -(math.log(3.0) - math.log(2.0)), 1.0, -math.log(2.0) - 1.5), id="observed"),
    # q(out) = InverseGamma(3, 2): E[log out] = log 2 - 3/2 + γ, E[1/out] = 3/2; q(β) = Gamma(1, 1): E[log β] = -γ, E[β] = 1
    pytest.param({"q_out": InverseGamma(3.0, 2.0), "q_scale": Gamma(1.0, 1.0)},
                 (1.0, -(-EULER - (math.log(2.0) - 1.5 + EULER)), 1.0, -(math.log(2.0) - 1.5 + EULER) - 1.5),
                 id="mf"),
    pytest.param({"q_out": PointMass([0.5, 4.0]), "q_scale": PointMass(1.0)},
                 (1.0, np.log([0.5, 4.0]), 1.0, -np.log([0.5, 4.0]) - 1.0 / np.array([0.5, 4.0])), id="batched"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_shape(inputs, expected):
    assert_gamma_shape_likelihood(message(InverseGammaNode, "shape", inputs), *expected)
