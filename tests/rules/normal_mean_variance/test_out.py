"""Table test of the NormalMeanVariance rules towards ``out``: N(out | μ_m, v_m + v) and N(out | E[mean], v)."""
import pytest

from fgraph.families import NormalMeanPrecision, NormalMeanVariance, NormalWeightedMeanPrecision, PointMass
from fgraph.families.gamma import Gamma
from nodes.normal import NormalMeanVariance as Node
from tests.rules.tables import assert_message, message, normal

CASES = [
    # sum-product: variances add, log-scale 0
    pytest.param({"m_mean": NormalMeanVariance(1.0, 2.0), "q_var": PointMass(3.0)}, normal(1.0, 5.0), id="sp"),
    pytest.param({"m_mean": NormalMeanVariance(-0.5, 0.25), "q_var": PointMass(0.75)}, normal(-0.5, 1.0), id="sp-small"),
    # precision 4 -> variance 0.25
    pytest.param({"m_mean": NormalMeanPrecision(2.0, 4.0), "q_var": PointMass(1.0)}, normal(2.0, 1.25), id="sp-precision"),
    # weighted mean 3, precision 2 -> mean 1.5, variance 0.5
    pytest.param({"m_mean": NormalWeightedMeanPrecision(3.0, 2.0), "q_var": PointMass(0.5)}, normal(1.5, 1.0), id="sp-natural"),
    pytest.param({"m_mean": NormalMeanVariance([0.0, 1.0], [1.0, 2.0]), "q_var": PointMass(1.0)},
                 normal([0.0, 1.0], [2.0, 3.0]), id="sp-batched"),
    pytest.param({"m_mean": NormalMeanVariance([0.0, 1.0], 1.0), "q_var": PointMass([1.0, 3.0])},
                 normal([0.0, 1.0], [2.0, 4.0]), id="sp-batched-var"),
    # mean-field: only E[mean] enters
    pytest.param({"q_mean": PointMass(2.0), "q_var": PointMass(3.0)}, normal(2.0, 3.0), id="mf-point-mass"),
    pytest.param({"q_mean": NormalMeanVariance(1.0, 5.0), "q_var": PointMass(2.0)}, normal(1.0, 2.0), id="mf-normal"),
    # a Gamma marginal on mean (a positive mean) only contributes E[mean] = 3/2
    pytest.param({"q_mean": Gamma(3.0, 2.0), "q_var": PointMass(2.0)}, normal(1.5, 2.0), id="mf-gamma"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_out(inputs, expected):
    assert_message(message(Node, "out", inputs), expected)
