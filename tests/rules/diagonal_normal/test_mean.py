"""Table test of the DiagonalNormal rules towards ``mean`` (the factor is symmetric in out and mean), with the
sum-product message checked by numerical integration."""
import numpy as np
import pytest
from scipy import integrate
from scipy.stats import multivariate_normal

from fgraph.families import MvNormalMeanCovariance, PointMass
from fgraph.families.gaussian_process import MvNormalDiagonal
from fgraph.nodes.diagonal_normal import DiagonalNormalNode
from tests.rules.tables import assert_message, message

V = PointMass([0.5, 2.0], 1)

CASES = [
    # observed out: Π N(y_n | mean_n, v_n) = N(mean | y, diag v), log-scale 0
    pytest.param({"q_out": PointMass([1.0, -3.0], 1), "q_variances": V},
                 {"family": MvNormalDiagonal, "mean": [1.0, -3.0], "var": [0.5, 2.0]}, id="observed-out"),
    pytest.param({"q_out": PointMass([[1.0, -3.0], [0.0, 2.0]], 1), "q_variances": V},
                 {"family": MvNormalDiagonal, "mean": [[1.0, -3.0], [0.0, 2.0]], "var": [[0.5, 2.0]] * 2},
                 id="observed-out-batched"),
    # sum-product: variances add to the incoming covariance's diagonal
    pytest.param({"m_out": MvNormalDiagonal([1.0, 2.0], [1.0, 1.0]), "q_variances": V},
                 {"family": MvNormalDiagonal, "mean": [1.0, 2.0], "var": [1.5, 3.0]}, id="sp-diagonal"),
    pytest.param({"m_out": MvNormalMeanCovariance([1.0, 2.0], [[1.0, 0.3], [0.3, 1.0]]), "q_variances": V},
                 {"family": MvNormalMeanCovariance, "mean": [1.0, 2.0], "cov": [[1.5, 0.3], [0.3, 3.0]]},
                 id="sp-dense"),
    # mean field: N(mean | E[out], diag v)
    pytest.param({"q_out": MvNormalMeanCovariance([4.0, 5.0], [[1.0, 0.3], [0.3, 1.0]]), "q_variances": V},
                 {"family": MvNormalDiagonal, "mean": [4.0, 5.0], "var": [0.5, 2.0]}, id="mf"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_mean(inputs, expected):
    assert_message(message(DiagonalNormalNode, "mean", inputs), expected)


@pytest.mark.parametrize("point", [(0.0, 0.0), (1.5, -1.0)])
def test_sum_product_is_the_integral_over_out(point):
    incoming = MvNormalMeanCovariance([0.5, 1.0], [[1.0, 0.4], [0.4, 2.0]])
    result = message(DiagonalNormalNode, "mean", {"m_out": incoming, "q_variances": V})
    factor = multivariate_normal([0.0, 0.0], np.diag([0.5, 2.0]))
    value, _ = integrate.dblquad(
        lambda b, a: factor.pdf(np.array([a, b]) - point) * np.exp(incoming.logpdf(np.array([a, b]))),
        -12, 12, -14, 16, epsabs=1e-13, epsrel=1e-10)
    np.testing.assert_allclose(np.exp(result.log_scale + result.logpdf(np.array(point))), value, rtol=1e-7)
