"""Table test of the NormalMeanVariance rules towards ``mean``: N(mean | μ_m, v_m + v) and N(mean | E[out], v).

With a random variance (an InverseGamma marginal) the variance is 1/E[1/v], and the structured
(sum-product) message carries the log-scale -½ (E[log v] + log E[1/v]).
"""
import math

import numpy as np
import pytest
from scipy import stats

from fgraph.families import InverseGamma, NormalMeanPrecision, NormalMeanVariance, PointMass
from fgraph.nodes.normal import NormalMeanVariance as Node
from tests.rules.quadrature import DensityFactor, log_integral, log_message
from tests.rules.tables import assert_message, message, normal

# v ~ InverseGamma(4, 6): E[1/v] = 2/3, E[log v] = log 6 - ψ(4) = log 6 - 11/6 + γ
IG_4_6_LOG_SCALE = -0.5 * ((math.log(6.0) - 11.0 / 6.0 + np.euler_gamma) + math.log(2.0 / 3.0))

CASES = [
    pytest.param({"m_out": NormalMeanVariance(1.0, 2.0), "q_var": PointMass(3.0)}, normal(1.0, 5.0), id="sp"),
    pytest.param({"m_out": NormalMeanPrecision(-3.0, 0.5), "q_var": PointMass(0.5)}, normal(-3.0, 2.5), id="sp-precision"),
    pytest.param({"m_out": NormalMeanVariance([1.0, 2.0, 3.0], 1.0), "q_var": PointMass(0.5)},
                 normal([1.0, 2.0, 3.0], [1.5, 1.5, 1.5]), id="sp-batched"),
    # observed out: N(y | mean, v) = N(mean | y, v) integrates to one in mean, log-scale 0
    pytest.param({"q_out": PointMass(4.0), "q_var": PointMass(2.0)}, normal(4.0, 2.0), id="observed-out"),
    pytest.param({"q_out": PointMass([4.0, -1.0]), "q_var": PointMass(2.0)}, normal([4.0, -1.0], [2.0, 2.0]),
                 id="observed-out-batched"),
    pytest.param({"q_out": NormalMeanVariance(0.5, 9.0), "q_var": PointMass(1.0)}, normal(0.5, 1.0), id="mf-normal"),
    # random variance: N(mean | E[out], β/α)
    pytest.param({"q_out": NormalMeanVariance(0.5, 9.0), "q_var": InverseGamma(4.0, 6.0)}, normal(0.5, 1.5),
                 id="mf-inverse-gamma"),
    # ReactiveMP.jl test/rules/normal_mean_variance/mean_tests.jl, (q_out, q_v) = (PointMass(1), InverseGamma(4, 2)):
    # ReactiveMP returns N(1, E[v] = 2/3); the mean-field message has variance 1/E[1/v] = 2/4
    pytest.param({"q_out": PointMass(1.0), "q_var": InverseGamma(4.0, 2.0)}, normal(1.0, 0.5), id="reactivemp-ig"),
    # structured: N(mean | μ_m, v_m + 3/2), log-scale -½ (E[log v] + log E[1/v])
    pytest.param({"m_out": NormalMeanPrecision(-3.0, 2.0), "q_var": InverseGamma(4.0, 6.0)},
                 normal(-3.0, 0.5 + 1.5, IG_4_6_LOG_SCALE), id="structured-inverse-gamma"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_mean(inputs, expected):
    assert_message(message(Node, "mean", inputs), expected)


def test_structured_message_against_quadrature():
    """∫ exp(E_q[log N(out | mean, v)]) m(out) dout by the quadrature harness (E_q[log v], E_q[1/v] from scipy)."""
    reference = stats.invgamma(a=4.0, scale=6.0)
    mean_log, mean_inverse = reference.expect(np.log), reference.expect(lambda v: 1.0 / v)
    factor = DensityFactor(lambda values: math.exp(
        -0.5 * (math.log(2.0 * math.pi) + mean_log + mean_inverse * (values["out"] - values["mean"]) ** 2)))
    m_out = NormalMeanPrecision(-3.0, 2.0)
    result = message(Node, "mean", {"m_out": m_out, "q_var": InverseGamma(4.0, 6.0)})
    sd = math.sqrt(float(result.var))
    points = float(result.mean) + sd * np.linspace(-4.0, 4.0, 9)
    np.testing.assert_allclose(result.log_scale + result.logpdf(points), log_message(factor, "mean", {"out": m_out}, points),
                               rtol=0.0, atol=1e-7)
    limits = (float(result.mean) - 12.0 * sd, float(result.mean) + 12.0 * sd)
    np.testing.assert_allclose(result.log_scale, log_integral(factor, "mean", {"out": m_out}, limits), rtol=0.0, atol=1e-7)
