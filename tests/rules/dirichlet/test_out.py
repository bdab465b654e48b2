"""Dirichlet node rule towards ``out``: with alpha fixed the message is Dir(out | alpha), log-scale 0."""
import numpy as np
import pytest
from scipy import integrate

from fgraph.families import Dirichlet, PointMass
from fgraph.nodes.dirichlet import DirichletNode
from tests.rules.tables import assert_message, message

CASES = [
    pytest.param({"q_alpha": PointMass([1.0, 2.0, 3.0], 1)},
                 {"family": Dirichlet, "alpha": [1.0, 2.0, 3.0], "mean": [1 / 6, 2 / 6, 3 / 6]}, id="fixed"),
    pytest.param({"q_alpha": PointMass([[2.0, 2.0], [0.5, 1.5]], 1)},
                 {"family": Dirichlet, "alpha": [[2.0, 2.0], [0.5, 1.5]], "mean": [[0.5, 0.5], [0.25, 0.75]]},
                 id="batched"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_out(inputs, expected):
    assert_message(message(DirichletNode, "out", inputs), expected)


def test_out_is_the_factor_k2():
    """K = 2, alpha = (2, 3): Dir(p) = p1 (1 - p1)^2 / B(2, 3) = 12 p1 (1 - p1)^2; it integrates to one."""
    result = message(DirichletNode, "out", {"q_alpha": PointMass([2.0, 3.0], 1)})
    p1 = np.linspace(0.05, 0.95, 7)
    points = np.stack([p1, 1.0 - p1], axis=-1)
    np.testing.assert_allclose(np.exp(result.log_scale + result.logpdf(points)), 12.0 * p1 * (1.0 - p1) ** 2, rtol=1e-12)
    total, _ = integrate.quad(lambda u: np.exp(result.logpdf([u, 1.0 - u])), 0.0, 1.0)
    np.testing.assert_allclose(total, 1.0, rtol=1e-8)


def test_out_integrates_to_one_k3():
    result = message(DirichletNode, "out", {"q_alpha": PointMass([1.5, 2.0, 3.0], 1)})
    total, _ = integrate.dblquad(lambda p2, p1: np.exp(result.logpdf([p1, p2, 1.0 - p1 - p2])), 0.0, 1.0, 0.0, lambda p1: 1.0 - p1)
    np.testing.assert_allclose(np.log(total) + result.log_scale, 0.0, atol=1e-7)
