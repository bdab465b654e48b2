"""to_scipy(): each family as the frozen scipy.stats distribution with the same density and moments."""
import numpy as np
import pytest

from fgraph.errors import ModelError
from fgraph.families import (
    Bernoulli, Beta, Categorical, Dirichlet, Gamma, GammaShapeScale, GaussianLikelihood, InverseGamma, Mixture,
    MvNormalMeanCovariance, MvNormalMeanPrecision, NormalMeanPrecision, NormalMeanVariance, PointMass, Wishart,
)

UNIVARIATE = [
    pytest.param(NormalMeanVariance([0.5, -1.0], [2.0, 0.25]), np.array([[0.1, -2.0], [3.0, 0.0]]), id="normal"),
    pytest.param(NormalMeanPrecision(1.5, 4.0), np.array([1.0, 2.0]), id="normal-precision"),
    pytest.param(Gamma([2.0, 0.7], [3.0, 0.5]), np.array([[0.3, 1.5], [2.0, 0.01]]), id="gamma"),
    pytest.param(GammaShapeScale(3.0, 2.0), np.array([0.5, 7.0]), id="gamma-scale"),
    pytest.param(InverseGamma(3.0, 2.0), np.array([0.2, 1.0, 5.0]), id="inverse-gamma"),
    pytest.param(Beta([2.0, 0.5], [3.0, 0.5]), np.array([[0.2, 0.9], [0.5, 0.01]]), id="beta"),
]


@pytest.mark.parametrize("q, points", UNIVARIATE)
def test_univariate_families_keep_their_batch(q, points):
    frozen = q.to_scipy()
    np.testing.assert_allclose(frozen.logpdf(points), q.logpdf(points), rtol=1e-12)
    np.testing.assert_allclose(frozen.mean(), q.mean, rtol=1e-12)
    np.testing.assert_allclose(frozen.var(), q.var, rtol=1e-12)
    np.testing.assert_allclose(frozen.entropy(), q.entropy(), rtol=1e-11)


def test_bernoulli_and_categorical_probabilities():
    np.testing.assert_allclose(Bernoulli([0.2, 0.9]).to_scipy().pmf(1), [0.2, 0.9], rtol=1e-15)
    frozen = Categorical([0.1, 0.6, 0.3]).to_scipy()
    np.testing.assert_allclose(frozen.pmf([0, 1, 2]), [0.1, 0.6, 0.3], rtol=1e-15)


@pytest.mark.parametrize("q, point", [
    pytest.param(MvNormalMeanCovariance([1.0, -1.0], [[2.0, 0.3], [0.3, 1.0]]), np.array([0.5, 0.0]), id="mvnormal"),
    pytest.param(MvNormalMeanPrecision([0.0, 2.0], [[1.0, -0.2], [-0.2, 0.5]]), np.array([1.0, 1.0]),
                 id="mvnormal-precision"),
    pytest.param(Dirichlet([2.0, 3.0, 0.5]), np.array([0.2, 0.5, 0.3]), id="dirichlet"),
    pytest.param(Wishart(5.0, [[1.0, 0.2], [0.2, 0.5]]), np.array([[3.0, 0.4], [0.4, 2.0]]), id="wishart"),
])
def test_multivariate_families(q, point):
    np.testing.assert_allclose(q.to_scipy().logpdf(point), q.logpdf(point), rtol=1e-11)


def test_what_scipy_cannot_hold_is_refused_with_the_way_out():
    with pytest.raises(ModelError, match=r"select one element first, e.g. q\[0\]"):
        MvNormalMeanCovariance(np.zeros((3, 2)), np.eye(2)).to_scipy()
    with pytest.raises(ModelError, match="multiply it with a prior"):
        GaussianLikelihood(np.ones(2), np.array([[1.0, 0.0], [0.0, 0.0]])).to_scipy()
    with pytest.raises(ModelError, match="no scipy.stats counterpart"):
        PointMass(1.0).to_scipy()
    with pytest.raises(ModelError, match="no scipy.stats counterpart"):
        Mixture(np.log([0.5, 0.5]), [NormalMeanVariance(0.0, 1.0), NormalMeanVariance(2.0, 1.0)]).to_scipy()
