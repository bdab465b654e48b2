"""Table test of the Gamma node rule towards ``rate``: Gamma(β | α + 1, E[out]).

Log-scale: ∫ β^α exp(-β E[out]) exp((α - 1) E[log out]) / Γ(α) dβ
= α E[out]^-(α+1) exp((α - 1) E[log out]), i.e. α / x² for a clamped out = x.
"""
import numpy as np
import pytest

from fgraph.families import GammaShapeScale, PointMass
from fgraph.families.gamma import Gamma
from fgraph.nodes.gamma import GammaNode
from tests.rules.tables import assert_message, gamma, message

CASES = [
    # α = 1, x = 2: log(1/4)
    pytest.param({"q_out": PointMass(2.0), "q_shape": PointMass(1.0)}, gamma(2.0, 2.0, -2.0 * np.log(2.0)), id="observed"),
    # α = 3, x = 1/2: log(3 * 4)
    pytest.param({"q_out": PointMass(0.5), "q_shape": PointMass(3.0)}, gamma(4.0, 0.5, np.log(12.0)), id="observed-small"),
    # q(out) = Gamma(2, 4): E[out] = 1/2, E[log out] = 1 - γ - 2 log 2; α = 3:
    # log 3 + 4 log 2 + 2 (1 - γ - 2 log 2) = log 3 + 2 - 2γ
    pytest.param({"q_out": Gamma(2.0, 4.0), "q_shape": PointMass(3.0)},
                 gamma(4.0, 0.5, np.log(3.0) + 2.0 - 2.0 * np.euler_gamma), id="mf-gamma"),
    pytest.param({"q_out": PointMass([1.0, 2.0]), "q_shape": PointMass(2.0)},
                 gamma(3.0, [1.0, 2.0], np.log(2.0) - 2.0 * np.log([1.0, 2.0])), id="batched"),
    # ReactiveMP.jl test/rules/gamma_shape_rate/b_tests.jl (q_out, q_α) -> GammaShapeRate(E[α] + 1, E[out]):
    # (Gamma(1, 1), Gamma(1, 1)) -> (2, 1); (GammaShapeScale(1, 10), Gamma(1, 1)) -> (2, 10); random shape: log-scale 0
    pytest.param({"q_out": Gamma(1.0, 1.0), "q_shape": Gamma(1.0, 1.0)}, gamma(2.0, 1.0), id="reactivemp-random-shape"),
    pytest.param({"q_out": GammaShapeScale(1.0, 10.0), "q_shape": Gamma(1.0, 1.0)}, gamma(2.0, 10.0),
                 id="reactivemp-random-shape-scale"),
    # (GammaShapeScale(1, 1), PointMass(10)) -> (11, 1); E[log out] = ψ(1) = -γ: log 10 - 11 log 1 + 9 (-γ)
    pytest.param({"q_out": GammaShapeScale(1.0, 1.0), "q_shape": PointMass(10.0)},
                 gamma(11.0, 1.0, np.log(10.0) - 9.0 * np.euler_gamma), id="reactivemp-known-shape"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_rate(inputs, expected):
    assert_message(message(GammaNode, "rate", inputs), expected)
