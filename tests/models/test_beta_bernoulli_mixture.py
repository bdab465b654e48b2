"""Plain VMP on a switch between two Beta-distributed success probabilities feeding a Bernoulli plate.

    m ~ Categorical(π),  t_k ~ Beta(a_k, b_k),  θ = t_m,  x_n ~ Bernoulli(θ), n = 1..N.

With ``algorithm="vmp"`` the mixture node keeps sum-product between θ and the
t_k (its structured factorisation) and a variational switch; the Bernoulli
plate is mean-field, so its average energy reads ``E_q[log θ]`` and
``E_q[log(1 − θ)]`` of the *mixture* marginal of θ.

With s = Σ_n x_n successes, sub-model k has evidence
``Z_k = B(a_k + s, b_k + N − s) / B(a_k, b_k)`` and conditional posterior
``Beta(a_k + s, b_k + N − s)``. For a fixed π the structured approximation is
exact: ``q(m = k) ∝ π_k Z_k`` and ``F = −log Σ_k π_k Z_k``. With a Dirichlet
prior ρ ~ Dir(α) on the switch probabilities, coordinate ascent (CAVI) on
``q(ρ) q(m)`` is

    q(ρ) = Dir(α + q(m)),   q(m = k) ∝ exp(E[log ρ_k]) Z_k,
    F = KL(q(ρ) ‖ Dir(α)) + Σ_k q_k (log q_k − E[log ρ_k] − log Z_k),

written out below in numpy and compared with the engine sweep by sweep.
"""
import numpy as np
from scipy.special import betaln, digamma, gammaln, logsumexp

import fgraph as fg
from fgraph.nodes import Bernoulli, Beta, Categorical, Dirichlet, Mixture

DATA = np.array([1, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1])
A, B = np.array([2.0, 5.0]), np.array([5.0, 2.0])
N, S = DATA.size, DATA.sum()
LOG_Z = betaln(A + S, B + N - S) - betaln(A, B)  # log evidence of each sub-model


def switched_model(switch_prior):
    with fg.Model() as model:
        m = switch_prior()
        t1 = Beta("t1", a=A[0], b=B[0])
        t2 = Beta("t2", a=A[1], b=B[1])
        theta = Mixture("theta", switch=m, inputs=[t1, t2])
        Bernoulli("x", p=theta, observed=DATA)
    return model


def check_beliefs_given_switch(result, q_switch):
    """Sub-model posteriors, and the mixture marginal of θ with its expectations summed by hand."""
    posterior_a, posterior_b = A + S, B + N - S
    for k in range(2):
        t = result.marginal(f"t{k + 1}")
        np.testing.assert_allclose([t.a, t.b], [posterior_a[k], posterior_b[k]], rtol=1e-12)
    theta = result.marginal("theta")
    np.testing.assert_allclose(theta.weights, q_switch, rtol=1e-12)
    total = posterior_a + posterior_b
    np.testing.assert_allclose(theta.mean_log, np.sum(q_switch * (digamma(posterior_a) - digamma(total))), rtol=1e-12)
    np.testing.assert_allclose(theta.mean_log1m, np.sum(q_switch * (digamma(posterior_b) - digamma(total))), rtol=1e-12)
    np.testing.assert_allclose(theta.mean, np.sum(q_switch * posterior_a / total), rtol=1e-12)


def test_fixed_switch_prior_vmp_is_exact():
    prior = np.array([0.3, 0.7])
    model = switched_model(lambda: Categorical("m", p=prior))
    result = fg.infer(model, algorithm="vmp", iterations=5)
    log_evidence = logsumexp(np.log(prior) + LOG_Z)
    np.testing.assert_allclose(result.free_energy, -log_evidence, rtol=0, atol=1e-12)  # every sweep
    q_switch = np.exp(np.log(prior) + LOG_Z - log_evidence)
    np.testing.assert_allclose(result.marginal("m").probabilities, q_switch, rtol=1e-12)
    check_beliefs_given_switch(result, q_switch)
    # and the same number by exact sum-product on this tree
    np.testing.assert_allclose(fg.infer(model, algorithm="bp").log_evidence, log_evidence, rtol=0, atol=1e-12)


def cavi_reference(alpha, q_switch, sweeps):
    """The coordinate ascent written out: (F after every sweep, final q(m), final Dirichlet parameters)."""

    def log_multivariate_beta(concentrations):
        return gammaln(concentrations).sum() - gammaln(concentrations.sum())

    trace = []
    for _ in range(sweeps):
        posterior = alpha + q_switch
        expected_log_rho = digamma(posterior) - digamma(posterior.sum())
        log_q = expected_log_rho + LOG_Z
        q_switch = np.exp(log_q - logsumexp(log_q))
        kl = (log_multivariate_beta(alpha) - log_multivariate_beta(posterior)
              + np.sum((posterior - alpha) * expected_log_rho))
        trace.append(kl + np.sum(q_switch * (np.log(q_switch) - expected_log_rho - LOG_Z)))
    return np.array(trace), q_switch, posterior


def test_dirichlet_switch_prior_follows_hand_written_cavi():
    alpha = np.array([1.5, 0.7])

    def switch_prior():
        rho = Dirichlet("rho", alpha=alpha)
        return Categorical("m", p=rho)

    model = switched_model(switch_prior)
    start = np.array([0.5, 0.5])
    result = fg.infer(model, algorithm="vmp", iterations=12, init={"m": fg.Categorical(start)})
    trace, q_switch, posterior = cavi_reference(alpha, start, 12)
    free_energy = np.asarray(result.free_energy)
    np.testing.assert_allclose(free_energy, trace, rtol=0, atol=1e-12)
    assert np.all(np.diff(free_energy) <= 1e-12), "the free energy increased"
    assert free_energy[0] - free_energy[-1] > 1e-2  # it did have something to do
    np.testing.assert_allclose(result.marginal("rho").alpha, posterior, rtol=1e-12)
    np.testing.assert_allclose(result.marginal("m").probabilities, q_switch, rtol=1e-12)
    check_beliefs_given_switch(result, q_switch)
