"""Table tests of the float twins of rules and energies (:mod:`fgraph.floats`): each twin, fed the expectations
it declares, gives the numbers of the closed form (worked out by hand below) and of its rule.

Messages are ``(ξ, w, log-scale)`` for a normal (weighted mean, precision) and ``(a, b, log-scale)`` for a
gamma (shape, rate). ψ(2) = 1 − γ.
"""
import math

import numpy as np
import pytest

from fgraph.families import NormalMeanVariance, PointMass
from fgraph.families.gamma import Gamma
from fgraph.float_twins import floats_of
from fgraph.nodes.gamma import GammaNode
from fgraph.nodes.normal import NormalMeanPrecision, NormalMeanVariance as NormalMeanVarianceNode
from tests.rules.tables import energy, float_energy, float_message, message

GAMMA_E = np.euler_gamma
LOG_2PI = math.log(2.0 * math.pi)

MESSAGES = [
    # N(mean | E[out] = 1.5, 1/E[τ] = 2): w = 0.5, ξ = 0.75
    pytest.param(NormalMeanPrecision, "mean", {"q_out": PointMass(1.5), "q_precision": Gamma(2.0, 4.0)},
                 (0.75, 0.5, 0.0), id="normal-mean-precision/mean"),
    # N(out | E[mean] = 1, 1/E[τ] = 1/3): w = 3, ξ = 3
    pytest.param(NormalMeanPrecision, "out", {"q_mean": NormalMeanVariance(1.0, 2.0), "q_precision": Gamma(3.0, 1.0)},
                 (3.0, 3.0, 0.0), id="normal-mean-precision/out"),
    # Gamma(τ | 3/2, S/2), S = (2 − 1)² + 0 + 0.5
    pytest.param(NormalMeanPrecision, "precision", {"q_out": PointMass(2.0), "q_mean": NormalMeanVariance(1.0, 0.5)},
                 (1.5, 0.75, 0.0), id="normal-mean-precision/precision"),
    # N(out | 2, 4): w = 1/4, ξ = 1/2
    pytest.param(NormalMeanVarianceNode, "out", {"q_mean": NormalMeanVariance(2.0, 1.0), "q_var": PointMass(4.0)},
                 (0.5, 0.25, 0.0), id="normal-mean-variance/out"),
    # N(mean | 3, 2): w = 1/2, ξ = 3/2
    pytest.param(NormalMeanVarianceNode, "mean", {"q_out": NormalMeanVariance(3.0, 0.7), "q_var": PointMass(2.0)},
                 (1.5, 0.5, 0.0), id="normal-mean-variance/mean"),
    pytest.param(GammaNode, "out", {"q_shape": PointMass(2.0), "q_rate": PointMass(3.0)}, (2.0, 3.0, 0.0),
                 id="gamma/out-known"),
    # Gamma(out | α, E[β] = 6/2)
    pytest.param(GammaNode, "out", {"q_shape": PointMass(2.0), "q_rate": Gamma(6.0, 2.0)}, (2.0, 3.0, 0.0),
                 id="gamma/out-random-rate"),
    # Gamma(β | α + 1, E[out] = 1/2), log-scale log 3 + 2 − 2γ (tests/rules/gamma/test_rate.py)
    pytest.param(GammaNode, "rate", {"q_out": Gamma(2.0, 4.0), "q_shape": PointMass(3.0)},
                 (4.0, 0.5, math.log(3.0) + 2.0 - 2.0 * GAMMA_E), id="gamma/rate"),
]


@pytest.mark.parametrize("node_type, interface, inputs, expected", MESSAGES)
def test_a_twin_gives_its_rules_message(node_type, interface, inputs, expected):
    np.testing.assert_allclose(float_message(node_type, interface, inputs), expected, rtol=1e-14, atol=1e-15)
    kind, numbers = floats_of(message(node_type, interface, inputs))
    np.testing.assert_allclose(numbers, expected, rtol=1e-14, atol=1e-15)


ENERGIES = [
    # ½ (log 2π + log 2) + ½ · ½ · ((1 − 0)² + 1)
    pytest.param(NormalMeanVarianceNode, {"q_out": PointMass(1.0), "q_mean": NormalMeanVariance(0.0, 1.0),
                                          "q_var": PointMass(2.0)},
                 0.5 * (LOG_2PI + math.log(2.0)) + 0.5, id="normal-mean-variance"),
    # ½ (log 2π − ψ(2)) + ½ · 2 · 2 with E[τ] = 2
    pytest.param(NormalMeanPrecision, {"q_out": PointMass(1.0), "q_mean": NormalMeanVariance(0.0, 1.0),
                                       "q_precision": Gamma(2.0, 1.0)},
                 0.5 * (LOG_2PI - (1.0 - GAMMA_E)) + 2.0, id="normal-mean-precision"),
    # −(3 log 2 − log Γ(3) + 2 ψ(2) − 2 · 2) with E[out] = 2, E[log out] = ψ(2)
    pytest.param(GammaNode, {"q_out": Gamma(2.0, 1.0), "q_shape": PointMass(3.0), "q_rate": PointMass(2.0)},
                 2.0 + 2.0 * GAMMA_E - 2.0 * math.log(2.0), id="gamma"),
]


@pytest.mark.parametrize("node_type, inputs, expected", ENERGIES)
def test_a_twin_gives_its_nodes_average_energy(node_type, inputs, expected):
    assert float_energy(node_type, inputs) == pytest.approx(expected, rel=1e-14)
    assert float(energy(node_type, inputs)) == pytest.approx(expected, rel=1e-14)
