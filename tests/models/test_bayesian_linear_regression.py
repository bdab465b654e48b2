"""Bayesian linear regression by message passing, against the closed form and hand-written CAVI.

    w ~ N(μ₀, Σ₀),   f_n = x_nᵀ w (Dot),   y_n ~ N(f_n, v),   n = 1..N.

Each observation sends w a rank-one Gaussian likelihood; the equality node of w
multiplies them with the prior. Sum-product is exact: the posterior
N(μ, Σ), Σ⁻¹ = Σ₀⁻¹ + XᵀX/v, μ = Σ(Σ₀⁻¹μ₀ + Xᵀy/v), and the evidence
y ~ N(Xμ₀, XΣ₀Xᵀ + vI).
"""
import numpy as np
import pytest
from scipy.stats import multivariate_normal

import fgraph as fg
from fgraph.nodes import Gamma, MvNormal, Normal
from fgraph.nodes.dot import Dot

RNG = np.random.default_rng(11)
PRIOR_MEAN = np.array([0.5, 0.0, -0.5])
PRIOR_COV = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 3.0]])
NOISE_VAR = 0.4


def data(count):
    features = RNG.normal(size=(count, 3))
    targets = features @ np.array([1.0, -2.0, 0.5]) + RNG.normal(0.0, np.sqrt(NOISE_VAR), count)
    return features, targets


def regression(features, targets):
    with fg.Model() as model:
        w = MvNormal("w", mean=PRIOR_MEAN, cov=PRIOR_COV)
        f = Dot("f", features, w)
        Normal("y", mean=f, var=NOISE_VAR, observed=targets)
    return model


def closed_form(features, targets):
    precision = np.linalg.inv(PRIOR_COV) + features.T @ features / NOISE_VAR
    cov = np.linalg.inv(precision)
    mean = cov @ (np.linalg.solve(PRIOR_COV, PRIOR_MEAN) + features.T @ targets / NOISE_VAR)
    evidence = multivariate_normal(features @ PRIOR_MEAN,
                                   features @ PRIOR_COV @ features.T + NOISE_VAR * np.eye(len(targets))).logpdf(targets)
    return mean, cov, evidence


@pytest.mark.parametrize("count", [1, 2, 25], ids=["fewer-rows-than-dimensions", "still-fewer", "more"])
def test_sum_product_equals_the_closed_form(count):
    features, targets = data(count)
    result = fg.infer(regression(features, targets), free_energy=True)
    mean, cov, evidence = closed_form(features, targets)
    np.testing.assert_allclose(result.marginal("w").mean, mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(result.marginal("w").cov, cov, rtol=1e-10, atol=1e-12)
    assert result.log_evidence == pytest.approx(evidence, rel=1e-11)
    assert result.free_energy[-1] == pytest.approx(-evidence, rel=1e-11)
    for name, value in result.evidence_per_variable().items():  # a tree: the same evidence on every edge
        np.testing.assert_allclose(value, evidence, rtol=1e-11, err_msg=name)
    # the posterior of each f_n is the push-forward of q(w)
    np.testing.assert_allclose(result.marginal("f").mean, features @ mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(result.marginal("f").var, np.einsum("nd,de,ne->n", features, cov, features), rtol=1e-10)


def test_unknown_noise_precision_by_hybrid_bp_and_vmp_equals_hand_written_cavi():
    """τ ~ Gamma(a, b) on the noise precision, mean-field q(w) q(τ); the Dot and prior stay sum-product."""
    features, targets = data(30)
    shape, rate = 2.0, 1.0
    with fg.Model() as model:
        w = MvNormal("w", mean=PRIOR_MEAN, cov=PRIOR_COV)
        tau = Gamma("tau", shape=shape, rate=rate)
        Normal("y", mean=Dot("f", features, w), precision=tau, observed=targets)
    # the first sweep needs q(τ) and q(f); start from the prior and a broad q(f) (both runs converge to one point)
    init = {"tau": fg.families.Gamma(shape, rate), "f": fg.families.NormalMeanVariance(features @ PRIOR_MEAN, 100.0)}
    result = fg.infer(model, algorithm="vmp", constraints={"factorization": {"f": "bp", "w": "bp"}},
                      init=init, iterations=100, free_energy=True)
    # CAVI: q(w) = N(μ, Σ), Σ⁻¹ = Σ₀⁻¹ + E[τ] XᵀX; q(τ) = Gamma(a + N/2, b + ½ E‖y − Xw‖²)
    expected_tau = shape / rate
    for _ in range(100):
        cov = np.linalg.inv(np.linalg.inv(PRIOR_COV) + expected_tau * features.T @ features)
        mean = cov @ (np.linalg.solve(PRIOR_COV, PRIOR_MEAN) + expected_tau * features.T @ targets)
        squares = np.sum((targets - features @ mean) ** 2) + np.trace(features.T @ features @ cov)
        q_shape, q_rate = shape + len(targets) / 2, rate + squares / 2
        expected_tau = q_shape / q_rate
    np.testing.assert_allclose(result.marginal("w").mean, mean, rtol=1e-9)
    np.testing.assert_allclose(result.marginal("w").cov, cov, rtol=1e-9)
    assert float(result.marginal("tau").shape) == pytest.approx(q_shape, rel=1e-12)
    assert float(result.marginal("tau").rate) == pytest.approx(q_rate, rel=1e-9)
    trace = np.array(result.free_energy)
    assert np.all(np.diff(trace) <= 1e-9 * np.abs(trace[1:])), "the free energy increased"
