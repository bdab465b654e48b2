"""Bernoulli node rules towards ``out``.

Sum-product: Bernoulli(E[p]) for a Beta message on p (log-scale 0), the factor itself for a fixed p;
mean-field: Bernoulli ∝ (exp E[log p], exp E[log(1 - p)]).
"""
import numpy as np
import pytest
from scipy import integrate, stats

from fgraph.families import Bernoulli, Beta, PointMass
from fgraph.nodes.bernoulli import BernoulliNode
from tests.rules.tables import assert_message, message


def bernoulli(p, log_scale=0.0):
    return {"family": Bernoulli, "p": p, "log_scale": log_scale}


CASES = [
    # E[p] = a / (a + b)
    pytest.param({"m_p": Beta(2.0, 3.0)}, bernoulli(0.4), id="sp-beta"),
    pytest.param({"m_p": Beta([1.0, 6.0], [1.0, 2.0])}, bernoulli([0.5, 0.75]), id="sp-beta-batched"),
    pytest.param({"q_p": PointMass(0.3)}, bernoulli(0.3), id="point-mass"),
    pytest.param({"q_p": PointMass([0.0, 1.0])}, bernoulli([0.0, 1.0]), id="point-mass-certain"),
    # E[log p] - E[log(1-p)] = ψ(2) - ψ(3) = -1/2 for Beta(2, 3): p = 1 / (1 + e^(1/2))
    pytest.param({"q_p": Beta(2.0, 3.0)}, bernoulli(1.0 / (1.0 + np.exp(0.5))), id="mf-beta"),
    pytest.param({"q_p": Beta(1.0, 1.0)}, bernoulli(0.5), id="mf-flat"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_out(inputs, expected):
    assert_message(message(BernoulliNode, "out", inputs), expected)


@pytest.mark.parametrize("a, b", [(2.0, 3.0), (0.6, 4.5)])
def test_sum_product_against_integration(a, b):
    """message(x) exp(log_scale) = ∫ p^x (1-p)^(1-x) Beta(p | a, b) dp for x in {0, 1}."""
    result = message(BernoulliNode, "out", {"m_p": Beta(a, b)})
    for x in (0.0, 1.0):
        integral, _ = integrate.quad(lambda p: p**x * (1.0 - p) ** (1.0 - x) * stats.beta.pdf(p, a, b), 0.0, 1.0)
        np.testing.assert_allclose(np.exp(result.log_scale + result.logpdf(x)), integral, rtol=1e-8)


def test_point_mass_against_the_factor():
    p = 0.3
    result = message(BernoulliNode, "out", {"q_p": PointMass(p)})
    for x in (0.0, 1.0):
        np.testing.assert_allclose(np.exp(result.log_scale + result.logpdf(x)), p**x * (1.0 - p) ** (1.0 - x), rtol=1e-12)
