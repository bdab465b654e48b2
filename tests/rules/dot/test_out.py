"""Table test of the inner-product rules towards ``out``: N(out | xᵀμ, xᵀΣx), log-scale 0.

Each Gaussian case is also checked against numerical integration of the
factor: ∫ δ(f − xᵀw) N(w | μ, Σ) dw, taken along the line xᵀw = f
(w = f x/|x|² + t u with u ⊥ x, |u| = 1, Jacobian 1/|x|).
"""
import numpy as np
import pytest
from scipy import integrate
from scipy.stats import multivariate_normal

from fgraph.families import MvNormalMeanCovariance, PointMass
from fgraph.nodes.dot import DotProduct
from tests.rules.tables import assert_message, message, normal, point_mass

COVARIANCE = np.array([[2.0, 0.5], [0.5, 1.0]])
CASES = [
    # x = (1, 2): mean 1·1 + 2·(−1) = −1; variance 2 + 2·2·0.5 + 4·1 = 8
    pytest.param({"m_in": MvNormalMeanCovariance([1.0, -1.0], COVARIANCE), "q_x": PointMass([1.0, 2.0], 1)},
                 normal(-1.0, 8.0), id="two-dimensional"),
    # x = (0, 3): mean −3; variance 9·1
    pytest.param({"m_in": MvNormalMeanCovariance([1.0, -1.0], COVARIANCE), "q_x": PointMass([0.0, 3.0], 1)},
                 normal(-3.0, 9.0), id="one-coordinate"),
    # a plate of two rows against one w
    pytest.param({"m_in": MvNormalMeanCovariance([1.0, -1.0], COVARIANCE), "q_x": PointMass([[1.0, 2.0], [0.0, 3.0]], 1)},
                 normal([-1.0, -3.0], [8.0, 9.0]), id="plate"),
    pytest.param({"q_in": PointMass([1.0, -1.0], 1), "q_x": PointMass([2.0, 0.5], 1)}, point_mass(1.5), id="known-in"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_out(inputs, expected):
    assert_message(message(DotProduct, "out", inputs), expected)


@pytest.mark.parametrize("x", [[1.0, 2.0], [0.0, 3.0], [-0.5, 0.2]])
def test_out_against_numerical_integration(x):
    x = np.asarray(x)
    prior = multivariate_normal([1.0, -1.0], COVARIANCE)
    result = message(DotProduct, "out", {"m_in": MvNormalMeanCovariance([1.0, -1.0], COVARIANCE), "q_x": PointMass(x, 1)})
    length = np.linalg.norm(x)
    orthogonal = np.array([-x[1], x[0]]) / length
    for f in (-4.0, -1.0, 0.5, 3.0):
        density, _ = integrate.quad(lambda t: prior.pdf(f * x / length**2 + t * orthogonal), -np.inf, np.inf)
        np.testing.assert_allclose(result.logpdf(f) + result.log_scale, np.log(density / length), rtol=1e-9)
