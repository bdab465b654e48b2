"""Bernoulli node rules towards ``p``.

Observed x: the likelihood p^x (1-p)^(1-x) = Beta(p | 1 + x, 2 - x) scaled by
∫ p^x (1-p)^(1-x) dp = B(1 + x, 2 - x) = 1/2, so the log-scale is -log 2.
Mean-field: Beta(1 + E[x], 2 - E[x]), log-scale 0.
"""
import numpy as np
import pytest
from scipy import integrate

from fgraph.families import Bernoulli, Beta, PointMass
from fgraph.nodes.bernoulli import BernoulliNode
from tests.rules.tables import assert_message, message

LOG_HALF = -np.log(2.0)


def beta(a, b, log_scale=0.0):
    return {"family": Beta, "a": a, "b": b, "log_scale": log_scale}


CASES = [
    pytest.param({"q_out": PointMass(1.0)}, beta(2.0, 1.0, LOG_HALF), id="observed-one"),
    pytest.param({"q_out": PointMass(0.0)}, beta(1.0, 2.0, LOG_HALF), id="observed-zero"),
    pytest.param({"q_out": PointMass([1.0, 0.0, 1.0])}, beta([2.0, 1.0, 2.0], [1.0, 2.0, 1.0], LOG_HALF), id="batched"),
    pytest.param({"q_out": Bernoulli(0.3)}, beta(1.3, 1.7), id="mf"),
    pytest.param({"q_out": Bernoulli([0.0, 1.0])}, beta([1.0, 2.0], [2.0, 1.0]), id="mf-certain"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_p(inputs, expected):
    assert_message(message(BernoulliNode, "p", inputs), expected)


@pytest.mark.parametrize("x", [0.0, 1.0])
def test_observed_against_integration(x):
    """exp(log_scale) Beta(p) equals the likelihood pointwise, and log_scale = log ∫_0^1 likelihood dp."""
    result = message(BernoulliNode, "p", {"q_out": PointMass(x)})
    likelihood = lambda p: p**x * (1.0 - p) ** (1.0 - x)  # noqa: E731
    integral, _ = integrate.quad(likelihood, 0.0, 1.0)
    np.testing.assert_allclose(result.log_scale, np.log(integral), rtol=1e-10)
    grid = np.linspace(0.05, 0.95, 7)
    np.testing.assert_allclose(np.exp(result.log_scale + result.logpdf(grid)), likelihood(grid), rtol=1e-12)
