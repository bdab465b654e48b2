"""Table test of the exponential node rules towards ``out``, plus oracles.

f(out, rate) = λ e^{−λ out}. With a point-mass rate λ the message is the
factor itself, Gamma(out | 1, λ), a density in ``out`` (log-scale 0); with a
Gamma marginal of the rate (VMP) it is exp(E[log λ] − E[λ] out) ∝ Gamma(out | 1, E[λ]).
"""
import numpy as np
import pytest
from scipy import integrate

from fgraph.families import PointMass
from fgraph.families.gamma import Gamma
from fgraph.nodes.exponential import ExponentialNode
from tests.rules.tables import assert_message, gamma, message

CASES = [
    pytest.param({"q_rate": PointMass(2.0)}, gamma(1.0, 2.0), id="point-mass"),
    pytest.param({"q_rate": PointMass(0.1)}, gamma(1.0, 0.1), id="point-mass-small"),
    pytest.param({"q_rate": PointMass([0.5, 3.0])}, gamma(1.0, [0.5, 3.0]), id="point-mass-batched"),
    # E[λ] = 3 / 1.5 = 2
    pytest.param({"q_rate": Gamma(3.0, 1.5)}, gamma(1.0, 2.0), id="mf-gamma"),
    # E[λ] = 0.5 / 4 = 1/8
    pytest.param({"q_rate": Gamma(0.5, 4.0)}, gamma(1.0, 0.125), id="mf-gamma-small-shape"),
    # E[λ] = (2/1, 6/2)
    pytest.param({"q_rate": Gamma([2.0, 6.0], [1.0, 2.0])}, gamma(1.0, [2.0, 3.0]), id="mf-batched"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_out(inputs, expected):
    assert_message(message(ExponentialNode, "out", inputs), expected)


@pytest.mark.parametrize("rate", [0.3, 1.0, 7.0])
def test_point_mass_rate_gives_the_factor(rate):
    result = message(ExponentialNode, "out", {"q_rate": PointMass(rate)})
    total, _ = integrate.quad(lambda x: rate * np.exp(-rate * x), 0.0, np.inf)
    np.testing.assert_allclose(result.log_scale, np.log(total), atol=1e-10)
    x = np.array([0.01, 0.4, 2.5])
    np.testing.assert_allclose(result.log_scale + result.logpdf(x), np.log(rate) - rate * x, rtol=1e-12)


def test_mean_field_is_the_expected_log_factor_up_to_a_constant():
    q_rate = Gamma(2.5, 0.8)
    result = message(ExponentialNode, "out", {"q_rate": q_rate})
    x = np.array([0.2, 1.0, 3.0])
    difference = result.logpdf(x) - (q_rate.mean_log - q_rate.mean * x)
    np.testing.assert_allclose(difference - difference[0], 0.0, atol=1e-12)


def test_batched_equals_elementwise():
    rates = np.array([[0.5, 1.0, 2.0], [3.0, 4.0, 5.0]])
    batched = message(ExponentialNode, "out", {"q_rate": PointMass(rates)})
    assert batched.batch_shape == rates.shape
    for index in np.ndindex(rates.shape):
        single = message(ExponentialNode, "out", {"q_rate": PointMass(rates[index])})
        assert_message(batched[index], gamma(single.shape, single.rate, single.log_scale))
