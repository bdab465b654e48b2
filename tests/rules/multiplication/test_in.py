"""Table test of the multiplication rules towards ``in``: m(a in) = N(in | μ/a, v/a²) / |a| (log-scale -log|a|),
m(A in) for a gain of full column rank, and a GaussianLikelihood (flat along the null space) otherwise."""
import numpy as np
import pytest

from scipy.stats import multivariate_normal

from fgraph.families import GaussianLikelihood, MvNormalMeanCovariance, NormalMeanVariance, PointMass
from fgraph.families.normal import LOG_2PI
from fgraph.nodes.multiplication import Multiplication, MvMultiplication
from tests.rules.tables import assert_message, message, mv_normal, normal, point_mass

SQUARE = np.array([[2.0, 1.0], [0.0, 1.0]])  # det 2, inverse [[1/2, -1/2], [0, 1]]
TALL = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])

CASES = [
    pytest.param(Multiplication, 3.0, {"m_out": NormalMeanVariance(6.0, 18.0)}, normal(2.0, 2.0, -np.log(3.0)), id="scalar"),
    pytest.param(Multiplication, -2.0, {"m_out": NormalMeanVariance(4.0, 8.0)}, normal(-2.0, 2.0, -np.log(2.0)), id="negative"),
    pytest.param(Multiplication, 0.5, {"m_out": NormalMeanVariance([1.0, 2.0], 1.0)},
                 normal([2.0, 4.0], [4.0, 4.0], np.log(2.0)), id="batched"),
    # observed out = 6: δ(6 - 3 in) = δ(in - 2) / 3
    pytest.param(Multiplication, 3.0, {"q_out": PointMass(6.0)}, point_mass(2.0, -np.log(3.0)), id="observed-out"),
    # mean A^-1 (3, 1) = (1, 1); covariance A^-1 diag(2, 1) A^-T = [[3/4, -1/2], [-1/2, 1]]; log-scale -log 2
    pytest.param(MvMultiplication, SQUARE, {"m_out": MvNormalMeanCovariance([3.0, 1.0], np.diag([2.0, 1.0]))},
                 mv_normal([1.0, 1.0], [[0.75, -0.5], [-0.5, 1.0]], -np.log(2.0)), id="square"),
    # P = A^T A = [[2, 1], [1, 2]], ξ = A^T (1, 2, 4) = (5, 6), mean P^-1 ξ = (4/3, 7/3), covariance P^-1;
    # residual r = (1, 2, 4) - A (4/3, 7/3) = (-1/3, -1/3, 1/3), r^T r = 1/3;
    # log-scale (2 - 3)/2 log 2π - ½ log|I| - ½ log|P| - ½ r^T r = -½ log 2π - ½ log 3 - 1/6
    pytest.param(MvMultiplication, TALL, {"m_out": MvNormalMeanCovariance([1.0, 2.0, 4.0], np.eye(3))},
                 mv_normal([4.0 / 3.0, 7.0 / 3.0], np.array([[2.0, -1.0], [-1.0, 2.0]]) / 3.0,
                           -0.5 * LOG_2PI - 0.5 * np.log(3.0) - 1.0 / 6.0), id="tall"),
    pytest.param(MvMultiplication, SQUARE, {"q_out": PointMass([3.0, 1.0], 1)}, point_mass([1.0, 1.0], -np.log(2.0)),
                 id="mv-observed-out"),
]


@pytest.mark.parametrize("node_type, gain, inputs, expected", CASES)
def test_in(node_type, gain, inputs, expected):
    assert_message(message(node_type, "in", inputs, gain=gain), expected)


@pytest.mark.parametrize("gain", [np.array([[1.0, 1.0]]), np.array([[1.0, 1.0], [2.0, 2.0]])], ids=["wide", "singular"])
def test_gain_without_full_column_rank_sends_a_gaussian_likelihood(gain):
    """m(A in) is flat along the null space of A: a GaussianLikelihood equal to N(A in | μ, V) at every point."""
    rows = gain.shape[0]
    m_out = MvNormalMeanCovariance(np.arange(1.0, rows + 1.0), np.eye(rows) + 0.5, log_scale=0.3)
    result = message(MvMultiplication, "in", {"m_out": m_out}, gain=gain)
    assert isinstance(result, GaussianLikelihood)
    points = np.array([[0.0, 0.0], [1.0, -2.0], [0.3, 0.7], [5.0, 5.0]])
    expected = multivariate_normal(m_out.mean, m_out.cov).logpdf(points @ gain.T)  # written without the rule's algebra
    np.testing.assert_allclose(result.log_value(points), expected, rtol=1e-12)  # the engine adds the 0.3 itself
    with pytest.raises(ValueError, match="no mean"):
        result.mean


def test_observed_out_needs_square_invertible_gain():
    with pytest.raises(ValueError, match="square invertible"):
        message(MvMultiplication, "in", {"q_out": PointMass([1.0, 2.0, 3.0], 1)}, gain=TALL)
