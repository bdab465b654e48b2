"""A normal variance with an InverseGamma prior: VMP against hand-written CAVI, BP against the Student-t evidence.

Model: mu ~ N(M0, V0), v ~ InverseGamma(A0, B0), y_i ~ N(mu, v), i = 1..N. Under mean-field q(mu) q(v)
the coordinate updates are (with w = E[1/v] = a/b)

    q(mu) = N(m, s),  1/s = 1/V0 + N w,  m = s (M0/V0 + w Σ y_i),
    q(v)  = InverseGamma(A0 + N/2, B0 + ½ Σ ((y_i - m)² + s)),

written out by hand below, with the ELBO from the closed-form expectations
E[log v] = log b - ψ(a), E[1/v] = a/b.
"""
import numpy as np
import pytest
from scipy import integrate
from scipy.special import digamma, gammaln

import fgraph as fg
from fgraph.nodes import InverseGamma, Normal

M0, V0, A0, B0 = 0.5, 4.0, 2.0, 3.0
LOG_2PI = np.log(2.0 * np.pi)


def data(n=40, seed=1):
    return np.random.default_rng(seed).normal(1.3, 0.7, size=n)


def build(y, power=1.0):
    with fg.Model() as model:
        mu = Normal("mu", mean=M0, var=V0)
        v = InverseGamma("v", shape=A0, scale=B0)
        Normal("y", mean=mu, var=v, observed=y, power=power)
    return model


def inverse_gamma_expectations(a, b):
    """(E[log v], E[1/v]) and the entropy of InverseGamma(a, b)."""
    return np.log(b) - digamma(a), a / b, a + np.log(b) + gammaln(a) - (1.0 + a) * digamma(a)


def reference_cavi(y, power=1.0, iterations=500):
    """Closed-form CAVI for the tempered likelihood p(y | mu, v)^power; returns (m, s, a, b, free energy)."""
    n, total = len(y), y.sum()
    a, b = A0, B0  # the same initial q(v) as the engine gets
    for _ in range(iterations):
        w = a / b
        s = 1.0 / (1.0 / V0 + power * n * w)
        m = s * (M0 / V0 + power * w * total)
        a = A0 + power * n / 2.0
        b = B0 + power * 0.5 * (np.sum((y - m) ** 2) + n * s)
    mean_log_v, w, entropy_v = inverse_gamma_expectations(a, b)
    expected_squares = np.sum((y - m) ** 2) + n * s
    log_likelihood = power * (-0.5 * n * (LOG_2PI + mean_log_v) - 0.5 * w * expected_squares)
    log_prior_mu = -0.5 * np.log(2 * np.pi * V0) - 0.5 * ((m - M0) ** 2 + s) / V0
    log_prior_v = A0 * np.log(B0) - gammaln(A0) - (A0 + 1.0) * mean_log_v - B0 * w
    entropy_mu = 0.5 * np.log(2 * np.pi * np.e * s)
    elbo = log_likelihood + log_prior_mu + log_prior_v + entropy_mu + entropy_v
    return m, s, a, b, -elbo


@pytest.mark.parametrize("collapse", [True, False])
def test_vmp_fixed_point_equals_hand_written_cavi(collapse):
    y = data()
    plan = fg.compile(build(y), algorithm="vmp", init={"v": fg.InverseGamma(A0, B0)}, collapse_plates=collapse)
    result = fg.run(plan, iterations=300)
    m, s, a, b, free_energy = reference_cavi(y)
    q_mu, q_v = result.marginal("mu"), result.marginal("v")
    assert type(q_v) is fg.InverseGamma
    assert q_mu.mean == pytest.approx(m, rel=1e-10)
    assert q_mu.var == pytest.approx(s, rel=1e-10)
    assert q_v.shape == pytest.approx(a, rel=1e-12)
    assert q_v.scale == pytest.approx(b, rel=1e-10)
    assert result.free_energy[-1] == pytest.approx(free_energy, rel=1e-10)


def test_free_energy_never_increases():
    y = data(n=25, seed=7)
    # a poor initialisation (E[1/v] = 1/50) makes the first iterations move a lot
    result = fg.infer(build(y), algorithm="vmp", init={"v": fg.InverseGamma(1.0, 50.0)}, iterations=30)
    trace = np.array(result.free_energy)
    assert trace[0] - trace[-1] > 1.0
    assert np.all(np.diff(trace) <= 1e-10 * np.abs(trace[1:]))


@pytest.mark.parametrize("power", [0.3, 1.0])
def test_tempered_likelihood_matches_hand_derived_updates(power):
    y = data(n=20, seed=11)
    result = fg.infer(build(y, power=power), algorithm="vmp", init={"v": fg.InverseGamma(A0, B0)}, iterations=300)
    m, s, a, b, free_energy = reference_cavi(y, power=power)
    assert result.marginal("mu").mean == pytest.approx(m, rel=1e-9)
    assert result.marginal("v").scale == pytest.approx(b, rel=1e-9)
    assert result.free_energy[-1] == pytest.approx(free_energy, rel=1e-9)


# ------------------------------------------------------------------ known mean: BP is exact
def student_log_evidence(y, mean, a, b):
    """log ∫ IG(v | a, b) Π N(y_i | mean, v) dv = a log b - log Γ(a) - N/2 log 2π + log Γ(a + N/2) - (a + N/2) log(b + S/2)."""
    n, squares = len(y), np.sum((y - mean) ** 2)
    return a * np.log(b) - gammaln(a) - 0.5 * n * LOG_2PI + gammaln(a + 0.5 * n) - (a + 0.5 * n) * np.log(b + 0.5 * squares)


def build_known_mean(y, mean=1.0):
    with fg.Model() as model:
        v = InverseGamma("v", shape=A0, scale=B0)
        Normal("y", mean=mean, var=v, observed=y)
    return model


def test_student_evidence_closed_form_against_quadrature():
    y = np.array([0.3, 1.9, 1.2])

    def integrand(v):  # InverseGamma(v | A0, B0) Π N(y_i | 1, v), written out
        log_prior = A0 * np.log(B0) - gammaln(A0) - (A0 + 1.0) * np.log(v) - B0 / v
        return np.exp(log_prior - 0.5 * len(y) * np.log(2.0 * np.pi * v) - 0.5 * np.sum((y - 1.0) ** 2) / v)

    evidence, _ = integrate.quad(integrand, 0.0, np.inf, epsabs=0.0, epsrel=1e-12, limit=200)
    np.testing.assert_allclose(student_log_evidence(y, 1.0, A0, B0), np.log(evidence), rtol=1e-10)


@pytest.mark.parametrize("n", [1, 2, 30])
@pytest.mark.parametrize("collapse", [True, False])
def test_bp_evidence_and_posterior_match_the_conjugate_closed_form(n, collapse):
    """One or two observations give non-integrable likelihoods of v; the product with the prior is exact anyway."""
    y = data(n=n, seed=n)
    result = fg.run(fg.compile(build_known_mean(y), algorithm="bp", collapse_plates=collapse))
    assert result.plan.exact
    np.testing.assert_allclose(result.log_evidence, student_log_evidence(y, 1.0, A0, B0), rtol=0.0, atol=1e-10)
    q_v = result.marginal("v")
    np.testing.assert_allclose([q_v.shape, q_v.scale], [A0 + n / 2.0, B0 + 0.5 * np.sum((y - 1.0) ** 2)], rtol=1e-12)
    for value in result.evidence_per_variable().values():
        np.testing.assert_allclose(value, result.log_evidence, atol=1e-10)


def test_vmp_is_exact_with_a_known_mean():
    """A single latent variable with its exact (conjugate) family: -F is the log evidence."""
    y = data(n=12, seed=5)
    result = fg.infer(build_known_mean(y), algorithm="vmp", iterations=3)
    np.testing.assert_allclose(-np.array(result.free_energy), student_log_evidence(y, 1.0, A0, B0), rtol=0.0, atol=1e-10)


# ------------------------------------------------------------------ structured q(x, z) q(v)
A, B, V_X, V_Y = 2.0, 1.0, 10.0, 1.0


def reference_structured(y, iterations=400):
    """Hand-written CAVI with q(x_i, z_i) joint Gaussian and q(v) InverseGamma, for z_i ~ N(x_i, v)."""
    count = len(y)
    a, b = A, B
    for _ in range(iterations):
        w = a / b
        precision = np.array([[1 / V_X + w, -w], [-w, w + 1 / V_Y]])
        cov = np.linalg.inv(precision)
        means = np.stack([np.zeros(count), y / V_Y], axis=1) @ cov  # cov is symmetric
        diff_sq = np.sum((means[:, 1] - means[:, 0]) ** 2) + count * (cov[0, 0] - 2 * cov[0, 1] + cov[1, 1])
        a, b = A + count / 2, B + 0.5 * diff_sq
    mean_log_v, w, entropy_v = inverse_gamma_expectations(a, b)
    second_x = means[:, 0] ** 2 + cov[0, 0]
    second_z = means[:, 1] ** 2 + cov[1, 1]
    elbo = (
        np.sum(-0.5 * np.log(2 * np.pi * V_X) - 0.5 * second_x / V_X)
        - 0.5 * count * (LOG_2PI + mean_log_v) - 0.5 * w * diff_sq
        + np.sum(-0.5 * np.log(2 * np.pi * V_Y) - 0.5 * (y**2 - 2 * y * means[:, 1] + second_z) / V_Y)
        + A * np.log(B) - gammaln(A) - (A + 1.0) * mean_log_v - B * w
        + count * 0.5 * np.log(np.linalg.det(2 * np.pi * np.e * cov))
        + entropy_v
    )
    return means, cov, a, b, -elbo


def build_structured(y):
    with fg.Model() as model:
        x = Normal("x", mean=0.0, var=V_X, batch_shape=(len(y),))
        v = InverseGamma("v", shape=A, scale=B)
        z = Normal("z", mean=x, var=v)
        Normal("y", mean=z, var=V_Y, observed=y)
    return model


def test_structured_cluster_matches_hand_written_structured_cavi():
    y = np.random.default_rng(42).normal(0.0, 2.0, size=5)
    result = fg.infer(build_structured(y), algorithm="vmp", iterations=400, init={"v": fg.InverseGamma(A, B)},
                      constraints={"factorization": {"z": [("out", "mean"), ("var",)]}})
    means, cov, a, b, free_energy = reference_structured(y)
    np.testing.assert_allclose(result.marginal("x").mean, means[:, 0], rtol=1e-9)
    np.testing.assert_allclose(result.marginal("z").mean, means[:, 1], rtol=1e-9)
    np.testing.assert_allclose(result.marginal("x").var, cov[0, 0], rtol=1e-9)
    assert result.marginal("v").scale == pytest.approx(b, rel=1e-9)
    assert result.free_energy[-1] == pytest.approx(free_energy, rel=1e-9)
    assert np.all(np.diff(result.free_energy) <= 1e-10 * np.abs(result.free_energy[1:]))
