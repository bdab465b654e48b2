"""Exact evidence of conjugate models whose only latent variable is a positive parameter (BP, one sweep).

With the data clamped, the message of each observation towards the parameter is the likelihood
itself; it must carry the likelihood's integral over the parameter as its log-scale, or the
evidence is wrong although the posterior is right. The closed forms are the Student-t (normal with
Gamma precision) and the compound Gamma (Gamma with Gamma rate) marginal likelihoods.
"""
import numpy as np
import pytest
from scipy.special import gammaln

import fgraph as fg
from fgraph.nodes import Gamma, MvNormal, Normal, Wishart

TOLERANCE = dict(rtol=1e-10, atol=1e-12)
DATA = np.array([0.3, -1.2, 2.1, 0.8, 1.7])


def normal_gamma_evidence(y, mean, shape, rate):
    """log ∫ Π N(y_i | mean, 1/τ) Gamma(τ | shape, rate) dτ."""
    count, squares = len(y), np.sum((y - mean) ** 2)
    return (-0.5 * count * np.log(2.0 * np.pi) + shape * np.log(rate) - gammaln(shape)
            + gammaln(shape + 0.5 * count) - (shape + 0.5 * count) * np.log(rate + 0.5 * squares))


@pytest.mark.parametrize("y", [DATA[:1], DATA], ids=["one", "plate"])
def test_normal_with_gamma_precision(y):
    with fg.Model() as model:
        tau = Gamma("tau", shape=2.0, rate=3.0)
        Normal("y", mean=0.5, precision=tau, observed=y if len(y) > 1 else y[0])
    result = fg.infer(model)
    assert result.plan.exact
    np.testing.assert_allclose(result.log_evidence, normal_gamma_evidence(y, 0.5, 2.0, 3.0), **TOLERANCE)
    np.testing.assert_allclose(result.marginal("tau").shape, 2.0 + 0.5 * len(y), **TOLERANCE)
    np.testing.assert_allclose(result.marginal("tau").rate, 3.0 + 0.5 * np.sum((y - 0.5) ** 2), **TOLERANCE)


def test_gamma_with_gamma_rate():
    """x_i ~ Gamma(α, β), β ~ Gamma(c, d): p(x) = Π x_i^(α-1) / Γ(α)^N · d^c Γ(c + Nα) / (Γ(c) (d + Σx)^(c + Nα))."""
    x, alpha, c, d = np.abs(DATA), 1.5, 2.0, 0.5
    with fg.Model() as model:
        beta = Gamma("beta", shape=c, rate=d)
        Gamma("x", shape=alpha, rate=beta, observed=x)
    result = fg.infer(model)
    count = len(x)
    expected = ((alpha - 1.0) * np.sum(np.log(x)) - count * gammaln(alpha) + c * np.log(d) + gammaln(c + count * alpha)
                - gammaln(c) - (c + count * alpha) * np.log(d + np.sum(x)))
    np.testing.assert_allclose(result.log_evidence, expected, **TOLERANCE)
    np.testing.assert_allclose(result.marginal("beta").shape, c + count * alpha, **TOLERANCE)
    np.testing.assert_allclose(result.marginal("beta").rate, d + np.sum(x), **TOLERANCE)


def test_one_dimensional_mvnormal_with_wishart_precision():
    """In one dimension Wishart(ν, s) is Gamma(ν/2, 1/(2s)): the evidence is the normal-Gamma one."""
    df, scale = 3.0, 0.4
    y = DATA[:, None]
    with fg.Model() as model:
        precision = Wishart("precision", df=df, scale=[[scale]])
        MvNormal("y", mean=[0.5], precision=precision, observed=y)
    result = fg.infer(model)
    assert result.plan.exact
    np.testing.assert_allclose(result.log_evidence, normal_gamma_evidence(DATA, 0.5, 0.5 * df, 0.5 / scale), **TOLERANCE)
    posterior = result.marginal("precision")
    np.testing.assert_allclose(posterior.df, df + len(DATA), **TOLERANCE)
    np.testing.assert_allclose(posterior.scale, [[1.0 / (1.0 / scale + np.sum((DATA - 0.5) ** 2))]], **TOLERANCE)


def test_two_dimensional_observation_towards_a_precision_is_reported():
    """With out and mean clamped in d = 2, one observation's likelihood in Λ is not a proper Wishart
    (rank-one statistic): the rule says so instead of producing NaNs."""
    with fg.Model() as model:
        precision = Wishart("precision", df=4.0, scale=np.eye(2))
        MvNormal("y", mean=np.zeros(2), precision=precision, observed=np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0]]))
    with pytest.raises(ValueError, match="not positive definite"):
        fg.infer(model)
