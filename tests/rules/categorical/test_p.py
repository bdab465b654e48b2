"""Categorical node rules towards ``p``.

Observed one-hot x = e_k: the likelihood prod_j p_j^x_j = p_k is the scaled
density Dir(p | 1 + x) with scale ∫_simplex p_k dp = B(1 + x)
= Γ(2) Γ(1)^(K-1) / Γ(K + 1) = 1 / K! (Lebesgue measure on the first K - 1
coordinates): log-scale -log K!, i.e. -log 2 for K = 2 and -log 6 for K = 3.
Mean-field: Dir(1 + E[x]), log-scale 0.
"""
import numpy as np
import pytest
from scipy import integrate

from fgraph.families import Categorical, Dirichlet, PointMass
from fgraph.nodes.categorical import CategoricalNode
from tests.rules.tables import assert_message, message


def dirichlet(alpha, log_scale=0.0):
    return {"family": Dirichlet, "alpha": alpha, "log_scale": log_scale}


CASES = [
    pytest.param({"q_out": PointMass([1.0, 0.0], 1)}, dirichlet([2.0, 1.0], -np.log(2.0)), id="observed-k2"),
    pytest.param({"q_out": PointMass([0.0, 1.0, 0.0], 1)}, dirichlet([1.0, 2.0, 1.0], -np.log(6.0)), id="observed-k3"),
    pytest.param({"q_out": PointMass([0.0, 0.0, 0.0, 1.0], 1)}, dirichlet([1.0, 1.0, 1.0, 2.0], -np.log(24.0)),
                 id="observed-k4"),
    pytest.param({"q_out": PointMass([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]], 1)},
                 dirichlet([[2.0, 1.0, 1.0], [1.0, 1.0, 2.0]], -np.log(6.0)), id="observed-batched"),
    pytest.param({"q_out": Categorical([0.2, 0.3, 0.5])}, dirichlet([1.2, 1.3, 1.5]), id="mf"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_p(inputs, expected):
    assert_message(message(CategoricalNode, "p", inputs), expected)


@pytest.mark.parametrize("k", [0, 1])
def test_observed_against_integration_k2(k):
    """log_scale = log ∫_0^1 p_k du with p = (u, 1 - u); exp(log_scale) Dir(p) = p_k pointwise."""
    x = np.eye(2)[k]
    result = message(CategoricalNode, "p", {"q_out": PointMass(x, 1)})
    integral, _ = integrate.quad(lambda u: [u, 1.0 - u][k], 0.0, 1.0)
    np.testing.assert_allclose(result.log_scale, np.log(integral), rtol=1e-10)
    u = np.linspace(0.05, 0.95, 7)
    points = np.stack([u, 1.0 - u], axis=-1)
    np.testing.assert_allclose(np.exp(result.log_scale + result.logpdf(points)), points[:, k], rtol=1e-12)


@pytest.mark.parametrize("k", [0, 1, 2])
def test_observed_against_integration_k3(k):
    """log_scale = log ∫∫_{p1 + p2 <= 1} p_k dp1 dp2 = log(1/6)."""
    x = np.eye(3)[k]
    result = message(CategoricalNode, "p", {"q_out": PointMass(x, 1)})
    integral, _ = integrate.dblquad(lambda p2, p1: [p1, p2, 1.0 - p1 - p2][k], 0.0, 1.0, 0.0, lambda p1: 1.0 - p1)
    np.testing.assert_allclose(result.log_scale, np.log(integral), rtol=1e-10)
    point = np.array([0.2, 0.5, 0.3])
    np.testing.assert_allclose(np.exp(result.log_scale + result.logpdf(point)), point[k], rtol=1e-12)
