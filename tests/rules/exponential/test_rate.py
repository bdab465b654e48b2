"""Table test of the exponential node rules towards ``rate``, plus oracles.

f(out, rate) = λ e^{−λ out}. For a clamped out = x the exact message is
λ e^{−λ x} = Gamma(λ | 2, x) · Γ(2)/x², so its log-scale is
log ∫ λ e^{−λ x} dλ = −2 log x. For a latent out (VMP) it is
exp(log λ − λ E[out]) ∝ Gamma(λ | 2, E[out]).
"""
import numpy as np
import pytest
from scipy import integrate

from fgraph.families import PointMass
from fgraph.families.gamma import Gamma
from fgraph.nodes.exponential import ExponentialNode
from tests.rules.tables import assert_message, gamma, message

CASES = [
    # x = 1: log 1 = 0
    pytest.param({"q_out": PointMass(1.0)}, gamma(2.0, 1.0, 0.0), id="observed-one"),
    # x = 1/2: −2 log(1/2) = 2 log 2
    pytest.param({"q_out": PointMass(0.5)}, gamma(2.0, 0.5, 2.0 * np.log(2.0)), id="observed-small"),
    # x = 4: −2 log 4
    pytest.param({"q_out": PointMass(4.0)}, gamma(2.0, 4.0, -2.0 * np.log(4.0)), id="observed-large"),
    pytest.param({"q_out": PointMass([0.25, 2.0])}, gamma(2.0, [0.25, 2.0], -2.0 * np.log([0.25, 2.0])),
                 id="observed-batched"),
    # E[out] = 3 / 2
    pytest.param({"q_out": Gamma(3.0, 2.0)}, gamma(2.0, 1.5), id="mf-gamma"),
    # E[out] = (1/4, 4/2)
    pytest.param({"q_out": Gamma([1.0, 4.0], [4.0, 2.0])}, gamma(2.0, [0.25, 2.0]), id="mf-batched"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_rate(inputs, expected):
    assert_message(message(ExponentialNode, "rate", inputs), expected)


@pytest.mark.parametrize("x", [0.05, 0.7, 3.0, 40.0])
def test_log_scale_is_the_integral_of_the_likelihood(x):
    result = message(ExponentialNode, "rate", {"q_out": PointMass(x)})
    total, _ = integrate.quad(lambda rate: rate * np.exp(-rate * x), 0.0, np.inf, epsabs=0.0, epsrel=1e-12)
    np.testing.assert_allclose(result.log_scale, np.log(total), rtol=1e-10)


@pytest.mark.parametrize("x", [0.3, 2.0])
def test_scaled_message_equals_the_factor_pointwise(x):
    result = message(ExponentialNode, "rate", {"q_out": PointMass(x)})
    rates = np.array([0.01, 0.5, 1.0, 6.0])
    np.testing.assert_allclose(result.log_scale + result.logpdf(rates), np.log(rates) - rates * x, rtol=1e-12)


def test_outside_the_support_the_log_scale_is_nan():
    # ∫ λ e^{−λ x} dλ diverges for x <= 0: no Gamma represents the message, and the engine reports the NaN
    result = message(ExponentialNode, "rate", {"q_out": PointMass([1.0, 0.0, -1.0])})
    assert np.isfinite(result.log_scale[0]) and np.all(np.isnan(result.log_scale[1:]))


def test_mean_field_is_the_expected_log_factor_up_to_a_constant():
    q_out = Gamma(1.7, 0.6)
    result = message(ExponentialNode, "rate", {"q_out": q_out})
    rates = np.array([0.1, 1.0, 2.5])
    difference = result.logpdf(rates) - (np.log(rates) - rates * q_out.mean)
    np.testing.assert_allclose(difference - difference[0], 0.0, atol=1e-12)


def test_batched_equals_elementwise():
    observations = np.array([[0.5, 1.0, 2.0], [3.0, 4.0, 5.0]])
    batched = message(ExponentialNode, "rate", {"q_out": PointMass(observations)})
    assert batched.batch_shape == observations.shape
    for index in np.ndindex(observations.shape):
        single = message(ExponentialNode, "rate", {"q_out": PointMass(observations[index])})
        assert_message(batched[index], gamma(single.shape, single.rate, single.log_scale))
