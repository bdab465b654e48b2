"""Table test of the inner-product rule towards ``in``: N(xᵀ in | m, v) as a function of ``in``.

For d ≥ 2 it is a rank-one GaussianLikelihood, checked point by point against
the normal density of xᵀ in (scipy); for d = 1 it is the proper
N(in | m/x, v/x²) / |x|.
"""
import numpy as np
import pytest
from scipy.stats import norm

from fgraph.families import GaussianLikelihood, NormalMeanVariance, PointMass, product
from fgraph.families.mvnormal import MvNormalMeanCovariance
from fgraph.nodes.dot import DotProduct
from tests.rules.tables import assert_message, message, mv_normal

POINTS = np.array([[0.0, 0.0], [1.0, -2.0], [0.3, 0.7], [5.0, 5.0], [-3.0, 1.0]])


@pytest.mark.parametrize("x, mean, var", [([1.0, 2.0], 0.5, 2.0), ([0.0, 3.0], -1.0, 0.25), ([-0.5, 0.2], 4.0, 1.0)])
def test_in_is_the_likelihood_of_the_inner_product(x, mean, var):
    x = np.asarray(x)
    result = message(DotProduct, "in", {"m_out": NormalMeanVariance(mean, var, log_scale=0.4), "q_x": PointMass(x, 1)})
    assert isinstance(result, GaussianLikelihood)
    # the rule's own log-scale only: the engine adds the incoming 0.4
    np.testing.assert_allclose(result.log_value(POINTS), norm.logpdf(POINTS @ x, mean, np.sqrt(var)), rtol=1e-12)


def test_in_of_dimension_one_is_proper():
    """x = (2): N(2 in | 3, 4) = N(in | 3/2, 1) / 2."""
    result = message(DotProduct, "in", {"m_out": NormalMeanVariance(3.0, 4.0), "q_x": PointMass([2.0], 1)})
    assert_message(result, mv_normal([1.5], [[1.0]], -np.log(2.0)))


def test_in_batched_over_a_plate_of_rows():
    x = np.array([[1.0, 2.0], [0.0, 3.0]])
    result = message(DotProduct, "in", {"m_out": NormalMeanVariance([0.5, -1.0], [2.0, 0.25]), "q_x": PointMass(x, 1)})
    assert result.batch_shape == (2,)
    for n, (mean, var) in enumerate([(0.5, 2.0), (-1.0, 0.25)]):
        np.testing.assert_allclose(result[n].log_value(POINTS), norm.logpdf(POINTS @ x[n], mean, np.sqrt(var)), rtol=1e-12)


def test_likelihood_times_prior_is_the_conjugate_posterior_with_the_evidence():
    """N(xᵀw | m, v) N(w | μ, Σ): posterior by the usual update, log-scale log N(m | xᵀμ, xᵀΣx + v)."""
    x, m, v = np.array([1.0, 2.0]), 0.5, 2.0
    prior = MvNormalMeanCovariance([1.0, -1.0], [[2.0, 0.5], [0.5, 1.0]])
    likelihood = message(DotProduct, "in", {"m_out": NormalMeanVariance(m, v), "q_x": PointMass(x, 1)})
    posterior = product(likelihood, prior)
    gain = prior.cov @ x / (x @ prior.cov @ x + v)
    np.testing.assert_allclose(posterior.mean, prior.mean + gain * (m - x @ prior.mean), rtol=1e-12)
    np.testing.assert_allclose(posterior.cov, prior.cov - np.outer(gain, x @ prior.cov), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(posterior.log_scale, norm.logpdf(m, x @ prior.mean, np.sqrt(x @ prior.cov @ x + v)), rtol=1e-12)


def test_a_plate_of_rows_gives_the_sums_its_variable_reads():
    """Over a plate the shared ``in`` reads Σ ξ_n = Xᵀ(m/v) and Σ W_n = Xᵀ diag(1/v) X: equal to the sums of
    the elements, which are the likelihoods of each row."""
    rng = np.random.default_rng(3)
    x, mean, var = rng.normal(size=(7, 3)), rng.normal(size=7), rng.uniform(0.2, 2.0, size=7)
    result = message(DotProduct, "in", {"m_out": NormalMeanVariance(mean, var), "q_x": PointMass(x, 1)})
    weighted_mean_total, minus_half_precision_total = result.natural_parameter_totals()
    np.testing.assert_allclose(weighted_mean_total, x.T @ (mean / var), rtol=1e-12)
    np.testing.assert_allclose(minus_half_precision_total, -0.5 * (x.T / var) @ x, rtol=1e-12)
    elements = result.natural_parameters()
    np.testing.assert_allclose(elements[0].sum(axis=0), weighted_mean_total, rtol=1e-12)
    np.testing.assert_allclose(elements[1].sum(axis=0), minus_half_precision_total, rtol=1e-12)
    points = rng.normal(size=(5, 3))
    for n in range(7):
        np.testing.assert_allclose(result[n].log_value(points), norm.logpdf(points @ x[n], mean[n], np.sqrt(var[n])),
                                   rtol=1e-12)
