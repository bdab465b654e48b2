"""Beta node rule towards ``out``: with a and b fixed the message is Beta(out | a, b), log-scale 0."""
import numpy as np
import pytest
from scipy import integrate
from scipy.special import betaln

from fgraph.families import Beta, PointMass
from fgraph.nodes.beta import BetaNode
from tests.rules.tables import assert_message, message

CASES = [
    # mean a / (a + b) = 2/5
    pytest.param({"q_a": PointMass(2.0), "q_b": PointMass(3.0)},
                 {"family": Beta, "a": 2.0, "b": 3.0, "mean": 0.4}, id="fixed"),
    pytest.param({"q_a": PointMass([1.0, 0.5]), "q_b": PointMass([1.0, 2.0])},
                 {"family": Beta, "a": [1.0, 0.5], "b": [1.0, 2.0], "mean": [0.5, 0.2]}, id="batched"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_out(inputs, expected):
    assert_message(message(BetaNode, "out", inputs), expected)


@pytest.mark.parametrize("a, b", [(2.0, 3.0), (0.7, 1.4)])
def test_out_is_the_factor(a, b):
    """exp(log_scale) * message(x) = x^(a-1) (1-x)^(b-1) / B(a, b) pointwise, and it integrates to exp(log_scale)."""
    result = message(BetaNode, "out", {"q_a": PointMass(a), "q_b": PointMass(b)})
    x = np.linspace(0.05, 0.95, 7)
    factor = x ** (a - 1.0) * (1.0 - x) ** (b - 1.0) * np.exp(-betaln(a, b))
    np.testing.assert_allclose(np.exp(result.log_scale + result.logpdf(x)), factor, rtol=1e-12)
    total, _ = integrate.quad(lambda u: np.exp(result.logpdf(u)), 0.0, 1.0)
    np.testing.assert_allclose(np.log(total) + result.log_scale, 0.0, atol=1e-8)
