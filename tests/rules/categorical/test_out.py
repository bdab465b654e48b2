"""Categorical node rules towards ``out`` (one-hot).

Sum-product: Cat(E[p]) = Cat(alpha / Σ alpha) for a Dirichlet message on p, the factor itself for a fixed p
(log-scale 0); mean-field: Cat ∝ exp E[log p].
"""
import numpy as np
import pytest
from scipy import integrate, stats

from fgraph.families import Categorical, Dirichlet, PointMass
from fgraph.nodes.categorical import CategoricalNode
from tests.rules.tables import assert_message, message


def categorical(p, log_scale=0.0):
    return {"family": Categorical, "probabilities": p, "log_scale": log_scale}


# ψ(2) - ψ(1) = 1 and ψ(3) - ψ(1) = 3/2, so exp E[log p] for Dirichlet(1, 2, 3) is ∝ (1, e, e^1.5)
MEAN_FIELD_123 = np.array([1.0, np.e, np.exp(1.5)]) / (1.0 + np.e + np.exp(1.5))

CASES = [
    pytest.param({"m_p": Dirichlet([1.0, 2.0, 3.0])}, categorical([1 / 6, 2 / 6, 3 / 6]), id="sp-dirichlet"),
    pytest.param({"m_p": Dirichlet([[1.0, 1.0], [3.0, 1.0]])}, categorical([[0.5, 0.5], [0.75, 0.25]]), id="sp-batched"),
    pytest.param({"q_p": PointMass([0.2, 0.8], 1)}, categorical([0.2, 0.8]), id="point-mass"),
    pytest.param({"q_p": PointMass([0.0, 1.0, 0.0], 1)}, categorical([0.0, 1.0, 0.0]), id="point-mass-certain"),
    pytest.param({"q_p": Dirichlet([1.0, 2.0, 3.0])}, categorical(MEAN_FIELD_123), id="mf-dirichlet"),
    pytest.param({"q_p": Dirichlet([2.0, 2.0])}, categorical([0.5, 0.5]), id="mf-symmetric"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_out(inputs, expected):
    assert_message(message(CategoricalNode, "out", inputs), expected)


def one_hot(k, num_categories):
    return np.eye(num_categories)[k]


def test_sum_product_against_integration_k2():
    """message(e_k) exp(log_scale) = ∫ p_k Dir(p | alpha) dp, with p = (u, 1 - u), u in [0, 1]."""
    alpha = np.array([0.7, 2.5])
    result = message(CategoricalNode, "out", {"m_p": Dirichlet(alpha)})
    for k in range(2):
        integral, _ = integrate.quad(
            lambda u: np.array([u, 1.0 - u])[k] * stats.beta.pdf(u, alpha[0], alpha[1]), 0.0, 1.0
        )
        np.testing.assert_allclose(np.exp(result.log_scale + result.logpdf(one_hot(k, 2))), integral, rtol=1e-8)


def test_sum_product_against_integration_k3():
    alpha = np.array([1.5, 2.0, 3.0])
    result = message(CategoricalNode, "out", {"m_p": Dirichlet(alpha)})
    density = stats.dirichlet(alpha)
    for k in range(3):
        integral, _ = integrate.dblquad(
            lambda p2, p1: np.array([p1, p2, 1.0 - p1 - p2])[k] * density.pdf([p1, p2, max(1.0 - p1 - p2, 0.0)])
            if p1 + p2 < 1.0 else 0.0,
            0.0, 1.0, 0.0, lambda p1: 1.0 - p1, epsabs=1e-10,
        )
        np.testing.assert_allclose(np.exp(result.log_scale + result.logpdf(one_hot(k, 3))), integral, rtol=1e-6)


def test_point_mass_against_the_factor():
    p = np.array([0.1, 0.6, 0.3])
    result = message(CategoricalNode, "out", {"q_p": PointMass(p, 1)})
    for k in range(3):
        x = one_hot(k, 3)
        np.testing.assert_allclose(np.exp(result.log_scale + result.logpdf(x)), np.prod(p**x), rtol=1e-12)
