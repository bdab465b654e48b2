"""Table test of the NormalMeanVariance rules towards ``out``: N(out | μ_m, v_m + v) and N(out | E[mean], v).

With a random variance (an InverseGamma marginal) the variance is 1/E[1/v], and the structured
(sum-product) message carries the log-scale -½ (E[log v] + log E[1/v]).
"""
import math

import numpy as np
import pytest
from scipy import stats

from fgraph.families import InverseGamma, NormalMeanPrecision, NormalMeanVariance, NormalWeightedMeanPrecision, PointMass
from fgraph.families.gamma import Gamma
from fgraph.nodes.normal import NormalMeanVariance as Node
from tests.rules.quadrature import DensityFactor, log_integral, log_message
from tests.rules.tables import assert_message, message, normal

# v ~ InverseGamma(3, 2): E[1/v] = 3/2, E[log v] = log 2 - ψ(3) = log 2 - 3/2 + γ
IG_3_2_LOG_SCALE = -0.5 * ((math.log(2.0) - 1.5 + np.euler_gamma) + math.log(1.5))

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
    # random variance: N(out | E[mean], 1/E[1/v]) with E[1/v] = α/β
    pytest.param({"q_mean": NormalMeanVariance(1.0, 5.0), "q_var": InverseGamma(3.0, 2.0)}, normal(1.0, 2.0 / 3.0),
                 id="mf-inverse-gamma"),
    # ReactiveMP.jl test/rules/normal_mean_variance/out_tests.jl, (q_μ, q_v) = (PointMass(-1), InverseGamma(2, 1)),
    # (PointMass(1), InverseGamma(4, 2)), (PointMass(2), InverseGamma(4, 6)). ReactiveMP returns N(E[μ], E[v]) =
    # N(-1, 1), N(1, 2/3), N(2, 2); the mean-field message exp E_q[log N] has variance 1/E[1/v] = β/α instead:
    pytest.param({"q_mean": PointMass(-1.0), "q_var": InverseGamma(2.0, 1.0)}, normal(-1.0, 0.5), id="reactivemp-ig-1"),
    pytest.param({"q_mean": PointMass(1.0), "q_var": InverseGamma(4.0, 2.0)}, normal(1.0, 0.5), id="reactivemp-ig-2"),
    pytest.param({"q_mean": PointMass(2.0), "q_var": InverseGamma(4.0, 6.0)}, normal(2.0, 1.5), id="reactivemp-ig-3"),
    # structured (out, mean) cluster: N(out | μ_m, v_m + β/α), log-scale -½ (E[log v] + log E[1/v])
    pytest.param({"m_mean": NormalMeanVariance(0.0, 1.0), "q_var": InverseGamma(3.0, 2.0)},
                 normal(0.0, 1.0 + 2.0 / 3.0, IG_3_2_LOG_SCALE), id="structured-inverse-gamma"),
    pytest.param({"m_mean": NormalMeanVariance([0.0, 1.0], 1.0), "q_var": InverseGamma([3.0, 3.0], [2.0, 2.0])},
                 normal([0.0, 1.0], 1.0 + 2.0 / 3.0, IG_3_2_LOG_SCALE), id="structured-batched"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_out(inputs, expected):
    assert_message(message(Node, "out", inputs), expected)


def test_structured_message_against_quadrature():
    """∫ exp(E_q[log N(out | mean, v)]) m(mean) dmean by the quadrature harness, with E_q[log v] and E_q[1/v] of the
    InverseGamma marginal taken from scipy (pointwise and the log-scale)."""
    q_var = InverseGamma(3.5, 1.2)
    reference = stats.invgamma(a=3.5, scale=1.2)
    mean_log, mean_inverse = reference.expect(np.log), reference.expect(lambda v: 1.0 / v)

    def expected_factor(values):
        squared = (values["out"] - values["mean"]) ** 2
        return math.exp(-0.5 * (math.log(2.0 * math.pi) + mean_log + mean_inverse * squared))

    m_mean = NormalMeanVariance(0.7, 1.3)
    result = message(Node, "out", {"m_mean": m_mean, "q_var": q_var})
    points = float(result.mean) + math.sqrt(float(result.var)) * np.linspace(-4.0, 4.0, 9)
    factor = DensityFactor(expected_factor)
    expected = log_message(factor, "out", {"mean": m_mean}, points)
    np.testing.assert_allclose(result.log_scale + result.logpdf(points), expected, rtol=0.0, atol=1e-7)
    limits = (float(result.mean) - 12.0 * math.sqrt(float(result.var)), float(result.mean) + 12.0 * math.sqrt(float(result.var)))
    np.testing.assert_allclose(result.log_scale, log_integral(factor, "out", {"mean": m_mean}, limits), rtol=0.0, atol=1e-7)
