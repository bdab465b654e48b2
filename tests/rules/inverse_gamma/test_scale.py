"""Table test of the InverseGamma node rules towards ``scale``: Gamma(β | E[α] + 1, E[1/out]).

Log-scale for a known shape α: ∫ β^α exp(-β E[1/out]) exp(-(α + 1) E[log out]) / Γ(α) dβ
= α E[1/out]^-(α+1) exp(-(α + 1) E[log out]), i.e. log α for a clamped out; 0 for a random shape.
"""
import math

import numpy as np
import pytest

from fgraph.families import InverseGamma, PointMass
from fgraph.families.gamma import Gamma
from fgraph.nodes.inverse_gamma import InverseGammaNode
from tests.rules.tables import assert_message, gamma, message

EULER = np.euler_gamma

CASES = [
    # x = 2, α = 3: Gamma(β | 4, 1/2), log-scale log 3
    pytest.param({"q_out": PointMass(2.0), "q_shape": PointMass(3.0)}, gamma(4.0, 0.5, math.log(3.0)), id="observed"),
    # q(out) = InverseGamma(3, 2): E[1/out] = 3/2, E[log out] = log 2 - ψ(3) = log 2 - 3/2 + γ; α = 2:
    # log 2 - 3 (log 3/2 + log 2 - 3/2 + γ) = log 2 - 3 log 3 + 9/2 - 3γ
    pytest.param({"q_out": InverseGamma(3.0, 2.0), "q_shape": PointMass(2.0)},
                 gamma(3.0, 1.5, math.log(2.0) - 3.0 * math.log(3.0) + 4.5 - 3.0 * EULER), id="mf-inverse-gamma-out"),
    # random shape Gamma(4, 2): E[α] = 2
    pytest.param({"q_out": PointMass(0.5), "q_shape": Gamma(4.0, 2.0)}, gamma(3.0, 2.0), id="mf-random-shape"),
    pytest.param({"q_out": PointMass([1.0, 0.25]), "q_shape": PointMass(2.0)}, gamma(3.0, [1.0, 4.0], math.log(2.0)),
                 id="batched"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_scale(inputs, expected):
    assert_message(message(InverseGammaNode, "scale", inputs), expected)
