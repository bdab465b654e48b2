"""VMP on the Normal-Gamma model against the textbook CAVI fixed point.

Model: mu ~ N(m0, v0), tau ~ Gamma(a0, b0), y_i ~ N(mu, 1/tau), i = 1..N, with
q(mu) q(tau). The reference below iterates the closed-form CAVI updates
(Bishop 2006, §10.1.3, with an independent prior on mu) by hand.
"""
import numpy as np
import pytest
from scipy.special import digamma, gammaln

import fgraph as fg
from fgraph.nodes import Gamma, Normal

M0, V0, A0, B0 = 0.5, 4.0, 2.0, 3.0


def data(n=40, seed=1):
    return np.random.default_rng(seed).normal(1.3, 0.7, size=n)


def build(y, power=1.0):
    with fg.Model() as model:
        mu = Normal("mu", mean=M0, var=V0)
        tau = Gamma("tau", shape=A0, rate=B0)
        Normal("y", mean=mu, precision=tau, observed=y, power=power)
    return model


def reference_cavi(y, power=1.0, iterations=500):
    """Closed-form CAVI for the tempered likelihood p(y | mu, tau)^power; returns (m, v, a, b, elbo)."""
    n, s1 = len(y), y.sum()
    a, b = A0, B0  # the same initial q(tau) as the engine gets
    for _ in range(iterations):
        e_tau = a / b
        precision = 1.0 / V0 + power * n * e_tau
        v = 1.0 / precision
        m = v * (M0 / V0 + power * e_tau * s1)
        a = A0 + power * n / 2.0
        b = B0 + power * 0.5 * (np.sum((y - m) ** 2) + n * v)
    e_tau, e_log_tau = a / b, digamma(a) - np.log(b)
    expected_sq = np.sum((y - m) ** 2) + n * v
    log_lik = power * (0.5 * n * (e_log_tau - np.log(2 * np.pi)) - 0.5 * e_tau * expected_sq)
    log_prior_mu = -0.5 * np.log(2 * np.pi * V0) - 0.5 * ((m - M0) ** 2 + v) / V0
    log_prior_tau = A0 * np.log(B0) - gammaln(A0) + (A0 - 1) * e_log_tau - B0 * e_tau
    entropy_mu = 0.5 * np.log(2 * np.pi * np.e * v)
    entropy_tau = a - np.log(b) + gammaln(a) + (1 - a) * digamma(a)
    elbo = log_lik + log_prior_mu + log_prior_tau + entropy_mu + entropy_tau
    return m, v, a, b, -elbo


@pytest.mark.parametrize("collapse", [True, False])
def test_fixed_point_equals_closed_form_cavi(collapse):
    y = data()
    plan = fg.compile(build(y), algorithm="vmp", init={"tau": fg.Gamma(A0, B0)}, collapse_plates=collapse)
    result = fg.run(plan, iterations=300)
    m, v, a, b, free_energy = reference_cavi(y)
    q_mu, q_tau = result.marginal("mu"), result.marginal("tau")
    assert q_mu.mean == pytest.approx(m, rel=1e-10)
    assert q_mu.var == pytest.approx(v, rel=1e-10)
    assert q_tau.shape == pytest.approx(a, rel=1e-10)
    assert q_tau.rate == pytest.approx(b, rel=1e-10)
    assert result.free_energy[-1] == pytest.approx(free_energy, rel=1e-10)


def test_free_energy_never_increases():
    y = data(n=25, seed=7)
    # a poor initialisation makes the first iterations move a lot
    result = fg.infer(build(y), algorithm="vmp", init={"tau": fg.Gamma(1.0, 50.0)}, iterations=30)
    trace = np.array(result.free_energy)
    assert trace[0] - trace[-1] > 1.0
    assert np.all(np.diff(trace) <= 1e-10 * np.abs(trace[1:]))


def test_collapsed_plate_equals_expanded_plate():
    y = data(n=30, seed=3)
    results = [
        fg.run(fg.compile(build(y), algorithm="vmp", init={"tau": fg.Gamma(A0, B0)}, collapse_plates=c), iterations=20)
        for c in (True, False)
    ]
    assert results[0].marginal("mu").mean == pytest.approx(results[1].marginal("mu").mean, rel=1e-12)
    assert results[0].marginal("tau").rate == pytest.approx(results[1].marginal("tau").rate, rel=1e-12)
    np.testing.assert_allclose(results[0].free_energy, results[1].free_energy, rtol=1e-11)


@pytest.mark.parametrize("power", [0.3, 0.5, 1.0])
def test_fractional_likelihood_matches_hand_derived_updates(power):
    """A node power ω scales the natural parameters of the likelihood's messages and its energy."""
    y = data(n=20, seed=11)
    result = fg.infer(build(y, power=power), algorithm="vmp", init={"tau": fg.Gamma(A0, B0)}, iterations=300)
    m, v, a, b, free_energy = reference_cavi(y, power=power)
    assert result.marginal("mu").mean == pytest.approx(m, rel=1e-9)
    assert result.marginal("mu").var == pytest.approx(v, rel=1e-9)
    assert result.marginal("tau").shape == pytest.approx(a, rel=1e-9)
    assert result.marginal("tau").rate == pytest.approx(b, rel=1e-9)
    assert result.free_energy[-1] == pytest.approx(free_energy, rel=1e-9)


def reference_trace(y, iterations, tau_first=False, mu_init=(0.0, 1.0)):
    """The free energy after every CAVI iteration (q(mu) then q(tau), or q(tau) first from an initial q(mu))."""
    n, s1 = len(y), y.sum()
    a, b = A0, B0
    m, v = mu_init
    trace = []
    for _ in range(iterations):
        for update in (("tau", "mu") if tau_first else ("mu", "tau")):
            if update == "mu":
                v = 1.0 / (1.0 / V0 + n * a / b)
                m = v * (M0 / V0 + (a / b) * s1)
            else:
                a, b = A0 + n / 2.0, B0 + 0.5 * (np.sum((y - m) ** 2) + n * v)
        e_tau, e_log_tau = a / b, digamma(a) - np.log(b)
        log_lik = 0.5 * n * (e_log_tau - np.log(2 * np.pi)) - 0.5 * e_tau * (np.sum((y - m) ** 2) + n * v)
        log_prior_mu = -0.5 * np.log(2 * np.pi * V0) - 0.5 * ((m - M0) ** 2 + v) / V0
        log_prior_tau = A0 * np.log(B0) - gammaln(A0) + (A0 - 1) * e_log_tau - B0 * e_tau
        entropy = 0.5 * np.log(2 * np.pi * np.e * v) + a - np.log(b) + gammaln(a) + (1 - a) * digamma(a)
        trace.append(-(log_lik + log_prior_mu + log_prior_tau + entropy))
    return np.array(trace)


@pytest.mark.parametrize("collapse", [True, False])
@pytest.mark.parametrize("tau_first", [False, True])
def test_free_energy_equals_the_reference_at_every_iteration(collapse, tau_first):
    """F after each sweep, not only at the fixed point: cached moments (the squared residual kept per marginal
    of mu, the free energy's inputs worked out once per run) must follow every change of q(mu) and q(tau),
    whichever is updated first, and a second run on the same plan with other data must not reuse the first's."""
    mu_init = (0.2, 0.5)
    init = {"tau": fg.Gamma(A0, B0), "mu": fg.NormalMeanVariance(*mu_init)}
    first = data(n=30, seed=3)
    plan = fg.compile(build(first), algorithm="vmp", init=init, collapse_plates=collapse)
    if tau_first:
        plan = fg.compile(build(first), algorithm="vmp", init=init, collapse_plates=collapse,
                          schedule=[("tau", "out"), ("y", "precision"), ("mu", "out"), ("y", "mean")])
    for y in (first, data(n=30, seed=4) * 3.0 + 1.0):
        result = fg.run(plan, data={"y": y}, iterations=12, free_energy=True)
        expected = reference_trace(y, 12, tau_first, mu_init)
        np.testing.assert_allclose(result.free_energy, expected, rtol=1e-12)
