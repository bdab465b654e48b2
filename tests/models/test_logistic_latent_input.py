"""The logistic node with a latent input, and with latent labels, by VMP against hand-written numpy CAVI.

A latent input: q(β) Π_n q(x_n) Π_n q(ω_n),

    β ~ N(0, 4I),  x_n ~ N(m_n, S_n),  y_n ~ Bernoulli(σ(βᵀ[x_n; 1])).

This is how a logistic layer sits on top of a latent representation (the
output layer of a conditional mixture network). The engine's sweep updates
q(β), then every q(x_n), then the tilts ξ_n (its printed schedule); the
reference does the same in numpy, with the messages written from the
augmented factor ½ e^{κψ − ωψ²/2} (E[ω] = tanh(ξ/2)/(2ξ)), and its free
energy KL(q(β) ‖ p(β)) + Σ KL(q(x_n) ‖ p(x_n)) + Σ_n U_n with the node's
energy U_n = −(κE[ψ] − log 2 − log cosh(ξ/2) − E[ω](E[ψ²] − ξ²)/2).

Latent labels (points without a label, sharing β with labelled ones): q(u_m)
is Bernoulli with log-odds E[ψ_m] and κ_m = E[u_m] − ½ in the message to β;
the free energy adds −H[q(u_m)].
"""
import numpy as np
import pytest
from scipy.special import expit

import fgraph as fg
from fgraph.families import Bernoulli, MvNormalMeanCovariance, PointMass
from fgraph.nodes import MvNormal
from fgraph.nodes.logistic import Logistic

PRIOR_MEANS = np.array([[-1.0, 0.3], [0.5, 0.0], [2.0, -1.0], [0.0, 0.4], [1.2, 1.1], [-0.3, -0.8]])
PRIOR_COVS = np.array([[[0.5, 0.1], [0.1, 0.3]]] * 3 + [[[1.0, -0.2], [-0.2, 0.6]]] * 3)
LABELS = np.array([0.0, 1.0, 1.0, 0.0, 1.0, 0.0])
BETA_VAR = 4.0


def kl_gaussian(mean, cov, prior_mean, prior_cov):
    dimension = len(mean)
    solve = np.linalg.solve(prior_cov, np.column_stack([cov, mean - prior_mean]))
    return 0.5 * (np.trace(solve[:, :dimension]) + (mean - prior_mean) @ solve[:, dimension] - dimension
                  + np.linalg.slogdet(prior_cov)[1] - np.linalg.slogdet(cov)[1])


def numpy_cavi(iterations):
    count, d = PRIOR_MEANS.shape
    kappa = LABELS - 0.5
    x_means, x_covs = PRIOR_MEANS.copy(), PRIOR_COVS.copy()
    xi = np.zeros(count)
    trace = []
    for _ in range(iterations):
        omega = np.where(xi > 0, np.tanh(xi / 2) / (2 * np.where(xi > 0, xi, 1.0)), 0.25)
        # q(β): Σ_n (κ_n E[x̃_n], ω_n E[x̃_n x̃_nᵀ]) with the prior
        rows = np.column_stack([x_means, np.ones(count)])
        seconds = np.einsum("ni,nj->nij", rows, rows)
        seconds[:, :d, :d] += x_covs
        beta_cov = np.linalg.inv(np.eye(d + 1) / BETA_VAR + np.einsum("n,nij->ij", omega, seconds))
        beta_mean = beta_cov @ (rows.T @ kappa)
        beta_second = beta_cov + np.outer(beta_mean, beta_mean)
        w, w_second, w_bias = beta_mean[:d], beta_second[:d, :d], beta_second[:d, d]
        # q(x_n): ψ = wᵀx + β₀, so the message is exp((κE[w] − ωE[wβ₀])ᵀx − ½ω xᵀE[wwᵀ]x)
        for n in range(count):
            prior_precision = np.linalg.inv(PRIOR_COVS[n])
            x_covs[n] = np.linalg.inv(prior_precision + omega[n] * w_second)
            x_means[n] = x_covs[n] @ (prior_precision @ PRIOR_MEANS[n] + kappa[n] * w - omega[n] * w_bias)
        # ξ_n = sqrt(E[ψ_n²]) over both marginals
        rows = np.column_stack([x_means, np.ones(count)])
        seconds = np.einsum("ni,nj->nij", rows, rows)
        seconds[:, :d, :d] += x_covs
        xi = np.sqrt(np.einsum("ij,nij->n", beta_second, seconds))
        log_cosh = np.logaddexp(xi / 2, -xi / 2) - np.log(2)
        energy = -np.sum(kappa * (rows @ beta_mean) - np.log(2) - log_cosh)  # E[ψ²] = ξ²: no slack
        free_energy = (energy + kl_gaussian(beta_mean, beta_cov, np.zeros(d + 1), BETA_VAR * np.eye(d + 1))
                       + sum(kl_gaussian(x_means[n], x_covs[n], PRIOR_MEANS[n], PRIOR_COVS[n]) for n in range(count)))
        trace.append((beta_mean, beta_cov, x_means.copy(), x_covs.copy(), free_energy))
    return trace


def test_latent_inputs_by_vmp_equal_hand_written_cavi():
    with fg.Model() as model:
        beta = MvNormal("beta", mean=np.zeros(3), cov=BETA_VAR * np.eye(3))
        x = MvNormal("x", mean=PRIOR_MEANS, cov=PRIOR_COVS)
        Logistic("y", beta, x, observed=LABELS)
    init = {"y_xi": PointMass(0.0), "x": MvNormalMeanCovariance(PRIOR_MEANS, PRIOR_COVS)}
    result = fg.infer(model, algorithm="vmp", iterations=30, init=init)
    assert [(step.node.name, step.interface) for step in result.schedule.steps] == [
        ("beta", "out"), ("y", "coefficients"), ("x", "out"), ("y", "input"), ("y", "xi")]
    reference = numpy_cavi(30)
    np.testing.assert_allclose(result.free_energy, [step[-1] for step in reference], rtol=1e-10)
    beta_mean, beta_cov, x_means, x_covs, _ = reference[-1]
    np.testing.assert_allclose(result.marginal("beta").mean, beta_mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(result.marginal("beta").cov, beta_cov, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(result.marginal("x").mean, x_means, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(result.marginal("x").cov, x_covs, rtol=1e-10, atol=1e-12)
    assert np.all(np.diff(result.free_energy) <= 1e-12 * np.abs(result.free_energy[1:]))  # to rounding


def test_latent_labels_by_vmp_equal_hand_written_cavi():
    rng = np.random.default_rng(2)
    labelled, unlabelled = rng.normal(size=(12, 1)), rng.normal(size=(4, 1))
    labels = (labelled[:, 0] + 0.3 * rng.normal(size=12) > 0).astype(float)
    with fg.Model() as model:
        beta = MvNormal("beta", mean=np.zeros(2), cov=BETA_VAR * np.eye(2))
        Logistic("y", beta, labelled, observed=labels)
        Logistic("u", beta, unlabelled)
    init = {"y_xi": PointMass(0.0), "u_xi": PointMass(0.0), "u": Bernoulli(np.full(4, 0.5))}
    result = fg.infer(model, algorithm="vmp", iterations=20, init=init)
    assert [(step.node.name, step.interface) for step in result.schedule.steps] == [
        ("beta", "out"), ("y", "coefficients"), ("u", "coefficients"), ("y", "xi"), ("u", "xi"), ("u", "out")]
    # the same sweep in numpy
    rows_y, rows_u = (np.column_stack([x, np.ones(len(x))]) for x in (labelled, unlabelled))
    xi_y, xi_u, p_u = np.zeros(12), np.zeros(4), np.full(4, 0.5)

    def omega(xi):
        return np.where(xi > 0, np.tanh(xi / 2) / (2 * np.where(xi > 0, xi, 1.0)), 0.25)

    for iteration in range(20):
        precision = (np.eye(2) / BETA_VAR + (rows_y.T * omega(xi_y)) @ rows_y + (rows_u.T * omega(xi_u)) @ rows_u)
        cov = np.linalg.inv(precision)
        mean = cov @ (rows_y.T @ (labels - 0.5) + rows_u.T @ (p_u - 0.5))
        second = cov + np.outer(mean, mean)
        xi_y = np.sqrt(np.einsum("ni,ij,nj->n", rows_y, second, rows_y))
        xi_u = np.sqrt(np.einsum("ni,ij,nj->n", rows_u, second, rows_u))
        p_u = expit(rows_u @ mean)  # log-odds E[ψ]

        def energy(kappa, rows, xi):
            return -np.sum(kappa * (rows @ mean) - np.log(2) - (np.logaddexp(xi / 2, -xi / 2) - np.log(2)))

        entropy = -np.sum(p_u * np.log(p_u) + (1 - p_u) * np.log1p(-p_u))
        free_energy = (energy(labels - 0.5, rows_y, xi_y) + energy(p_u - 0.5, rows_u, xi_u) - entropy
                       + kl_gaussian(mean, cov, np.zeros(2), BETA_VAR * np.eye(2)))
        assert result.free_energy[iteration] == pytest.approx(free_energy, rel=1e-10), iteration
    np.testing.assert_allclose(result.marginal("beta").mean, mean, rtol=1e-10)
    np.testing.assert_allclose(result.marginal("u").p, p_u, rtol=1e-10)
    assert np.all(np.diff(result.free_energy) <= 1e-12 * np.abs(result.free_energy[1:]))
