"""Table test of the NormalMeanPrecision rules towards ``out``.

Sum-product: N(out | μ_m, v_m + 1/E[τ]) scaled by exp(½ (E[log τ] - log E[τ])) (0 for a point mass);
mean-field: N(out | E[mean], 1/E[τ]).
"""
import numpy as np
import pytest

from fgraph.families import NormalMeanVariance, PointMass
from fgraph.families.gamma import Gamma
from fgraph.nodes.normal import NormalMeanPrecision as Node
from tests.rules.tables import assert_message, message, normal

# E[log τ] for τ ~ Gamma(2, 4) is digamma(2) - log 4 = 1 - γ - 2 log 2, and E[τ] = 1/2.
GAMMA_2_4_LOG_SCALE = 0.5 * ((1.0 - np.euler_gamma - 2.0 * np.log(2.0)) - np.log(0.5))

CASES = [
    pytest.param({"m_mean": NormalMeanVariance(1.0, 2.0), "q_precision": PointMass(4.0)}, normal(1.0, 2.25), id="sp"),
    pytest.param({"m_mean": NormalMeanVariance([0.0, 1.0], 1.0), "q_precision": PointMass([1.0, 2.0])},
                 normal([0.0, 1.0], [2.0, 1.5]), id="sp-batched"),
    pytest.param({"m_mean": NormalMeanVariance(0.0, 1.0), "q_precision": Gamma(2.0, 4.0)},
                 normal(0.0, 3.0, GAMMA_2_4_LOG_SCALE), id="structured-gamma"),
    pytest.param({"q_mean": PointMass(3.0), "q_precision": PointMass(2.0)}, normal(3.0, 0.5), id="mf-point-mass"),
    pytest.param({"q_mean": NormalMeanVariance(1.0, 7.0), "q_precision": Gamma(3.0, 6.0)}, normal(1.0, 2.0), id="mf-gamma"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_out(inputs, expected):
    assert_message(message(Node, "out", inputs), expected)
