"""A mixture offers every expectation of its component family, as the weight-averaged components' values.

``E[g(x)] = Σ_k w_k E_k[g(x)]``: each expected value below is worked out with
scipy from the weights and the component parameters (digamma for ``E[log x]``,
``rate / (shape − 1)`` for ``E[1/x]``, …), never by asking a component, and
compared with what the mixture returns. Unbatched mixtures, batched weights
over unbatched components, and batched components are covered, as is an
expectation whose rank differs from the event rank (``E[log |X|]`` of a
Wishart is a scalar per batch element).
"""
import numpy as np
import pytest
from scipy.special import digamma

from fgraph.families import (
    Bernoulli,
    Beta,
    Categorical,
    Dirichlet,
    Gamma,
    GammaShapeScale,
    InverseGamma,
    Mixture,
    MvNormalMeanCovariance,
    NormalMeanVariance,
    PointMass,
    Wishart,
)
from fgraph.families.base import expectation_names

W = np.array([0.25, 0.75])
W3 = np.array([0.2, 0.5, 0.3])


def mixture(weights, components):
    return Mixture.create(np.log(weights), components)


def test_mixture_of_beta_offers_the_beta_expectations():
    a, b = np.array([2.0, 7.0]), np.array([5.0, 1.5])
    q = mixture(W, [Beta(a[0], b[0]), Beta(a[1], b[1])])
    assert expectation_names(type(q)) == ("mean", "mean_log", "mean_log1m", "second_moment")
    np.testing.assert_allclose(q.mean_log, np.sum(W * (digamma(a) - digamma(a + b))), rtol=1e-14)
    np.testing.assert_allclose(q.mean_log1m, np.sum(W * (digamma(b) - digamma(a + b))), rtol=1e-14)
    np.testing.assert_allclose(q.mean, np.sum(W * a / (a + b)), rtol=1e-14)
    statistics = q.expected_statistics()
    np.testing.assert_allclose(statistics[0], np.sum(W * (digamma(a) - digamma(a + b))), rtol=1e-14)
    np.testing.assert_allclose(statistics[1], np.sum(W * (digamma(b) - digamma(a + b))), rtol=1e-14)


def test_mixture_of_gamma_in_both_parameterisations():
    """``E[log x]``, ``E[1/x]`` and ``E[x]``; a shape-scale component belongs to the same family."""
    shape, rate = np.array([3.0, 1.7, 6.0]), np.array([2.0, 0.5, 4.0])
    components = [Gamma(shape[0], rate[0]), GammaShapeScale(shape[1], 1.0 / rate[1]), Gamma(shape[2], rate[2])]
    q = mixture(W3, components)
    assert {"mean", "mean_log", "mean_inverse"} <= set(expectation_names(type(q)))
    np.testing.assert_allclose(q.mean_log, np.sum(W3 * (digamma(shape) - np.log(rate))), rtol=1e-14)
    np.testing.assert_allclose(q.mean_inverse, np.sum(W3 * rate / (shape - 1.0)), rtol=1e-14)
    np.testing.assert_allclose(q.mean, np.sum(W3 * shape / rate), rtol=1e-14)
    log_x, x = q.expected_statistics()
    np.testing.assert_allclose([log_x, x], [q.mean_log, q.mean], rtol=1e-14)


def test_mixture_of_inverse_gamma():
    """``E[log v] = log β − ψ(α)``, ``E[1/v] = α/β``, ``E[v] = β/(α − 1)``, ``E[v²] = β²/((α − 1)(α − 2))``."""
    shape, scale = np.array([3.0, 5.5]), np.array([2.0, 0.7])
    q = mixture(W, [InverseGamma(shape[0], scale[0]), InverseGamma(shape[1], scale[1])])
    assert {"mean", "mean_log", "mean_inverse", "second_moment"} <= set(expectation_names(type(q)))
    np.testing.assert_allclose(q.mean_log, np.sum(W * (np.log(scale) - digamma(shape))), rtol=1e-14)
    np.testing.assert_allclose(q.mean_inverse, np.sum(W * shape / scale), rtol=1e-14)
    np.testing.assert_allclose(q.mean, np.sum(W * scale / (shape - 1.0)), rtol=1e-14)
    np.testing.assert_allclose(q.second_moment, np.sum(W * scale**2 / ((shape - 1.0) * (shape - 2.0))), rtol=1e-14)


def test_batched_weights_over_unbatched_components():
    weights = np.array([[0.1, 0.9], [0.6, 0.4], [0.5, 0.5]])  # batch (3,)
    a, b = np.array([2.0, 7.0]), np.array([5.0, 1.5])
    q = mixture(weights, [Beta(a[0], b[0]), Beta(a[1], b[1])])
    assert q.batch_shape == (3,)
    np.testing.assert_allclose(q.mean_log, weights @ (digamma(a) - digamma(a + b)), rtol=1e-14)
    np.testing.assert_allclose(q.mean_log1m, weights @ (digamma(b) - digamma(a + b)), rtol=1e-14)


def test_batched_components_of_vectors():
    """Dirichlet components with batch (2,): ``E[log p]`` keeps its event axis, weighted per batch element."""
    alpha = [np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 4.0]]), np.array([[6.0, 1.0, 1.0], [2.0, 2.0, 2.0]])]
    weights = np.array([[0.3, 0.7], [0.8, 0.2]])
    q = mixture(weights, [Dirichlet(alpha[0]), Dirichlet(alpha[1])])
    per_component = [digamma(al) - digamma(al.sum(axis=-1, keepdims=True)) for al in alpha]
    expected = weights[:, 0, None] * per_component[0] + weights[:, 1, None] * per_component[1]
    assert q.mean_log.shape == (2, 3)
    np.testing.assert_allclose(q.mean_log, expected, rtol=1e-14)
    np.testing.assert_allclose(
        q.mean, weights[:, 0, None] * alpha[0] / alpha[0].sum(-1, keepdims=True)
        + weights[:, 1, None] * alpha[1] / alpha[1].sum(-1, keepdims=True), rtol=1e-14,
    )


def test_expectations_of_another_rank_than_the_event():
    """Wishart: ``E[log |X|]`` is a scalar, ``E[X⁻¹]`` a matrix, batched over two elements."""
    d = 2
    df = [np.array([5.0, 7.0]), np.array([4.0, 9.0])]
    scale = [np.array([[[1.0, 0.2], [0.2, 0.5]], [[2.0, 0.0], [0.0, 1.0]]]),
             np.array([[[0.3, -0.1], [-0.1, 0.8]], [[1.0, 0.5], [0.5, 1.0]]])]
    weights = np.array([[0.4, 0.6], [0.9, 0.1]])
    q = mixture(weights, [Wishart(df[0], scale[0]), Wishart(df[1], scale[1])])

    def mean_logdet(nu, s):  # Σ_i ψ((ν + 1 − i)/2) + d log 2 + log|S|
        return sum(digamma((nu + 1.0 - i) / 2.0) for i in range(1, d + 1)) + d * np.log(2.0) + np.log(np.linalg.det(s))

    def mean_inverse(nu, s):  # S⁻¹ / (ν − d − 1)
        return np.linalg.inv(s) / (nu - d - 1.0)[:, None, None]

    expected_logdet = weights[:, 0] * mean_logdet(df[0], scale[0]) + weights[:, 1] * mean_logdet(df[1], scale[1])
    expected_inverse = (weights[:, 0, None, None] * mean_inverse(df[0], scale[0])
                        + weights[:, 1, None, None] * mean_inverse(df[1], scale[1]))
    assert q.mean_logdet.shape == (2,)
    np.testing.assert_allclose(q.mean_logdet, expected_logdet, rtol=1e-13)
    np.testing.assert_allclose(q.mean_inverse, expected_inverse, rtol=1e-13)


def test_batched_multivariate_second_moment_and_covariance():
    """``E[x xᵀ]`` of a batch of bivariate mixtures: the weights broadcast over both matrix axes."""
    means = [np.array([[1.0, -0.5], [0.0, 2.0], [3.0, 1.0]]), np.array([[-0.7, 2.0], [1.0, 1.0], [0.0, -2.0]])]
    covs = [np.array([[1.2, 0.3], [0.3, 0.5]]), np.array([[0.4, -0.1], [-0.1, 2.0]])]
    weights = np.array([[0.35, 0.65], [0.5, 0.5], [0.9, 0.1]])
    q = mixture(weights, [MvNormalMeanCovariance(means[0], np.broadcast_to(covs[0], (3, 2, 2))),
                          MvNormalMeanCovariance(means[1], np.broadcast_to(covs[1], (3, 2, 2)))])
    second = sum(weights[:, k, None, None] * (covs[k] + means[k][:, :, None] * means[k][:, None, :]) for k in range(2))
    mean = sum(weights[:, k, None] * means[k] for k in range(2))
    np.testing.assert_allclose(q.second_moment, second, rtol=1e-13)
    np.testing.assert_allclose(q.cov, second - mean[:, :, None] * mean[:, None, :], rtol=1e-12, atol=1e-14)
    statistics = q.expected_statistics()
    np.testing.assert_allclose(statistics[0], mean, rtol=1e-13)
    np.testing.assert_allclose(statistics[1], second, rtol=1e-13)


def test_univariate_normal_expected_statistics():
    means, variances = np.array([-1.0, 0.5, 2.0]), np.array([0.3, 1.0, 2.5])
    q = mixture(W3, [NormalMeanVariance(m, v) for m, v in zip(means, variances)])
    x, x2 = q.expected_statistics()
    np.testing.assert_allclose(x, np.sum(W3 * means), rtol=1e-14)
    np.testing.assert_allclose(x2, np.sum(W3 * (variances + means**2)), rtol=1e-14)


def test_discrete_expectations_of_another_shape_than_the_value():
    """Bernoulli: ``probabilities`` is ``(P(0), P(1))`` though the value is a scalar; categorical one-hot means."""
    p = np.array([0.2, 0.9])
    q = mixture(W, [Bernoulli(p[0]), Bernoulli(p[1])])
    np.testing.assert_allclose(q.mean, np.sum(W * p), rtol=1e-14)
    np.testing.assert_allclose(q.probabilities, [np.sum(W * (1 - p)), np.sum(W * p)], rtol=1e-14)
    probabilities = [np.array([0.1, 0.2, 0.7]), np.array([0.5, 0.5, 0.0])]
    c = mixture(W, [Categorical(probabilities[0]), Categorical(probabilities[1])])
    np.testing.assert_allclose(c.probabilities, W[0] * probabilities[0] + W[1] * probabilities[1], rtol=1e-14)


def test_point_mass_components():
    """A mixture of constants offers the constants' expectations: ``Σ_k w_k log v_k`` and so on."""
    values = np.array([0.2, 0.6])
    q = mixture(W, [PointMass(values[0]), PointMass(values[1])])
    np.testing.assert_allclose(q.mean_log, np.sum(W * np.log(values)), rtol=1e-14)
    np.testing.assert_allclose(q.mean_log1m, np.sum(W * np.log1p(-values)), rtol=1e-14)
    np.testing.assert_allclose(q.mean_inverse, np.sum(W * 1.0 / values), rtol=1e-14)


@pytest.mark.parametrize("family, names", [
    (Beta, {"mean", "mean_log", "mean_log1m"}),
    (Gamma, {"mean", "mean_log", "mean_inverse"}),
    (Dirichlet, {"mean", "mean_log"}),
    (Wishart, {"mean", "mean_logdet", "mean_inverse"}),
])
def test_the_mixture_class_offers_what_its_family_offers(family, names):
    assert names <= set(expectation_names(family))
    assert set(expectation_names(family)) <= set(expectation_names(Mixture.of(family)))


def test_variances_and_modes_are_not_expectations():
    """Not linear in the distribution: a mixture must not average them (its var is the law of total variance)."""
    for family in (Beta, Gamma, NormalMeanVariance, Dirichlet, Wishart):
        assert not {"var", "cov", "mode", "precision", "std"} & set(expectation_names(family))
