"""Bayesian mixture linear regression as a graph (fgraph.models.mixtures.bmlr) against Algorithm 4 of the TVB paper written out
in numpy: every sweep, the ELBO of eq. (58)–(59) term by term, ω = 1 and ω < 1; the ELBO never decreases; a batch of
ω over copies equals separate fits; ω → 0 returns the (mean-field) prior; bad input is a named error."""
import numpy as np
import pytest
from scipy.special import digamma, gammaln, xlogy

from fgraph.errors import DataError, ModelError
from fgraph.models.mixtures import (BMLRPriors, build_bmlr, coefficient_sum, coefficient_sum_interval, fit_bmlr,
                                    random_responsibilities)

PRIORS = BMLRPriors(weight_concentration=0.7, shape=2.0, rate=0.5, noise_precision=2.5)


def data_sets(seed=0, N=30, J=12, p=3, K=3, noise=0.6):
    """N data sets of J rows from K regressions (labels drawn with weights 0.5, 0.3, 0.2 ...)."""
    rng = np.random.default_rng(seed)
    coefficients = rng.normal(scale=1.5, size=(K, p))
    labels = rng.choice(K, size=N, p=np.arange(K, 0, -1) / np.arange(K, 0, -1).sum())
    X = rng.normal(size=(N, J, p))
    y = np.einsum("njp,np->nj", X, coefficients[labels]) + noise * rng.normal(size=(N, J))
    return X, y


def algorithm_4(X, y, r0, priors: BMLRPriors, omega, sweeps, tau0):
    """Algorithm 4 written out, one sweep = steps 4, 5 (q(π), q(β) from r and q(τ)), step 2 (r, untempered), step 3
    (q(τ) from q(β)) — the paper's cyclic order entered at step 4 — and the ELBO of eq. (58) with the terms of (59)
    as the appendix writes them. Returns per sweep (posteriors, r, ELBO)."""
    J, p = X.shape[1:]
    alpha0 = np.broadcast_to(np.asarray(priors.weight_concentration, dtype=float), (r0.shape[1],))
    a0, b0, lam = priors.shape, priors.rate, priors.noise_precision
    gram = np.einsum("njp,njq->npq", X, X)  # X_nᵀX_n
    cross = np.einsum("njp,nj->np", X, y)  # X_nᵀy_n
    square = np.einsum("nj,nj->n", y, y)  # y_nᵀy_n
    r, (a, b) = r0, tau0
    out = []
    for _ in range(sweeps):
        # step 4, eq. (26): α_k = α₀ + ωN_k
        alpha = alpha0 + omega * r.sum(0)
        # step 5, eq. (27): S_k = (E[τ_k] I + ωλ Σ_n r_nk X_nᵀX_n)⁻¹, m_k = ωλ S_k Σ_n r_nk X_nᵀy_n
        S = np.linalg.inv((a / b)[:, None, None] * np.eye(p) + omega * lam * np.einsum("nk,npq->kpq", r, gram))
        m = omega * lam * np.einsum("kpq,kq->kp", S, r.T @ cross)
        # step 2, eq. (24): log ρ_nk = E[log π_k] − λ/2 E[(y_n − X_nβ_k)ᵀ(y_n − X_nβ_k)]
        e_log_pi = digamma(alpha) - digamma(alpha.sum())
        second = S + m[:, :, None] * m[:, None, :]
        e_residual = square[:, None] - 2.0 * cross @ m.T + np.einsum("npq,kpq->nk", gram, second)
        log_rho = e_log_pi - 0.5 * lam * e_residual
        r = np.exp(log_rho - np.logaddexp.reduce(log_rho, axis=1, keepdims=True))
        # step 3, eq. (25): a_k = p/2 + a₀, b_k = ½ E[β_kᵀβ_k] + b₀
        a = np.full(len(alpha), p / 2 + a0)
        b = 0.5 * (np.sum(m * m, axis=1) + np.trace(S, axis1=1, axis2=2)) + b0
        # the ELBO (58) at this state, each term of (59)
        e_log_tau = digamma(a) - np.log(b)
        e_lik = omega * np.sum(r * (-0.5 * J * np.log(2 * np.pi / lam) - 0.5 * lam * square[:, None]
                                    + lam * cross @ m.T - 0.5 * lam * np.einsum("npq,kqp->nk", gram, second)))
        e_z = omega * np.sum(r * e_log_pi)
        e_pi = gammaln(alpha0.sum()) - gammaln(alpha0).sum() + np.sum((alpha0 - 1) * e_log_pi)
        e_beta = np.sum(-p / 2 * np.log(2 * np.pi) + p / 2 * e_log_tau
                        - a / (2 * b) * (np.sum(m * m, axis=1) + np.trace(S, axis1=1, axis2=2)))
        e_tau = np.sum(a0 * np.log(b0) + (a0 - 1) * e_log_tau - b0 * a / b - gammaln(a0))
        e_qz = omega * np.sum(xlogy(r, r))
        e_qpi = gammaln(alpha.sum()) - gammaln(alpha).sum() + np.sum((alpha - 1) * e_log_pi)
        e_qbeta = np.sum(-0.5 * np.linalg.slogdet(S)[1] - p / 2 * np.log(2 * np.pi * np.e))
        e_qtau = np.sum(-gammaln(a) + np.log(b) + (a - 1) * digamma(a) - a)
        elbo = e_lik + e_z + e_pi + e_beta + e_tau - e_qz - e_qpi - e_qbeta - e_qtau
        out.append(({"alpha": alpha, "coefficient_mean": m, "coefficient_cov": S, "tau_shape": a, "tau_rate": b}, r,
                    elbo))
    return out


def recorded_fit(network, r0, sweeps, tau=None):
    """The fit and the posteriors after every sweep (copy 0)."""
    states = []

    def record(iteration, result):
        q_beta, q_tau = result.marginal("beta"), result.marginal("tau")
        K, p = network.n_components, network.dimension
        states.append(({"alpha": np.ravel(result.marginal("pi").alpha)[:K],
                        "coefficient_mean": np.reshape(q_beta.mean, (-1, K, p))[0],
                        "coefficient_cov": np.reshape(q_beta.cov, (-1, K, p, p))[0],
                        "tau_shape": np.reshape(np.broadcast_to(q_tau.shape, q_tau.batch_shape), (-1, K))[0],
                        "tau_rate": np.reshape(q_tau.rate, (-1, K))[0]},
                       np.reshape(result.marginal("z").probabilities, (-1, network.n_data_sets, K))[0]))

    fit = fit_bmlr(network, r0, iterations=sweeps, tol=None, tau=tau, callback=record)
    return fit, states


@pytest.mark.parametrize("omega", [1.0, 0.3, 0.01])
def test_every_sweep_is_algorithm_4_and_the_elbo_is_eq_58(omega):
    """Posteriors, responsibilities and the ELBO after every sweep equal Algorithm 4 written out by hand (ELBO to
    1e-9 relative), from random responsibilities and a starting q(τ) that is not the prior."""
    X, y = data_sets(1)
    K = 3
    r0 = random_responsibilities(len(y), K, random_state=3)[0]
    tau0 = (np.array([1.5, 3.0, 0.8]), np.array([0.7, 2.0, 1.1]))
    network = build_bmlr(X, y, K, PRIORS, power=omega)
    fit, states = recorded_fit(network, r0, 25, tau=tau0)
    expected = algorithm_4(X, y, r0, PRIORS, omega, 25, tau0)
    assert len(states) == len(expected) == fit.elbo.shape[0] == 25
    for (q, r), (q_expected, r_expected, elbo), value in zip(states, expected, fit.elbo[:, 0]):
        for key, array in q_expected.items():
            np.testing.assert_allclose(q[key], array, rtol=1e-9, atol=1e-12, err_msg=key)
        np.testing.assert_allclose(r, r_expected, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(value, elbo, rtol=1e-9)
    final = {key: value[0] for key, value in fit.posteriors().items()}
    for key, array in expected[-1][0].items():
        np.testing.assert_allclose(final[key], array, rtol=1e-9, atol=1e-12, err_msg=key)
    np.testing.assert_allclose(final["responsibilities"], expected[-1][1], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("seed", [2, 3])
def test_the_elbo_never_decreases(seed):
    """For ω from 1 down to 0.001 (copies of one graph) and random starts, the ELBO never falls between sweeps and
    settles (tol)."""
    X, y = data_sets(seed, N=40, J=8, p=2, K=3, noise=1.0)
    omegas = np.array([1.0, 0.5, 0.1, 0.001])
    starts = random_responsibilities(len(y), 3, random_state=seed, n_copies=len(omegas))
    fit = fit_bmlr(build_bmlr(X, y, 3, PRIORS, n_copies=len(omegas), power=omegas), starts, iterations=300,
                   tol=1e-10)
    assert fit.converged
    scale = np.abs(fit.elbo).max(axis=0)
    assert np.all(np.diff(fit.elbo, axis=0) >= -1e-10 * scale), np.diff(fit.elbo, axis=0).min(axis=0)


def test_a_batch_of_omegas_equals_separate_fits():
    """power = an array over the copies (fg.per_copy, the entropy weight too): each copy equals its ω fitted alone,
    sweep by sweep, and Algorithm 4 for that ω."""
    X, y = data_sets(4)
    K = 3
    omegas = np.array([1.0, 0.4, 0.05])
    r0 = random_responsibilities(len(y), K, random_state=5)[0]
    together = fit_bmlr(build_bmlr(X, y, K, PRIORS, n_copies=len(omegas), power=omegas), r0, iterations=20, tol=None)
    for c, omega in enumerate(omegas):
        alone = fit_bmlr(build_bmlr(X, y, K, PRIORS, power=float(omega)), r0, iterations=20, tol=None)
        np.testing.assert_allclose(together.elbo[:, c], alone.elbo[:, 0], rtol=1e-12)
        for key, value in together.posteriors().items():
            np.testing.assert_allclose(value[c], alone.posteriors()[key][0], rtol=1e-10, atol=1e-12, err_msg=key)
        expected = algorithm_4(X, y, r0, PRIORS, omega, 20, (np.full(K, PRIORS.shape), np.full(K, PRIORS.rate)))
        np.testing.assert_allclose(together.elbo[:, c], [state[2] for state in expected], rtol=1e-9)


def test_resamples_and_powers_per_copy_equal_separate_fits():
    """A data set per copy (bootstrap resamples of the N data sets: X (R, N, J, p), y (R, N, J)) and a power per copy
    in one graph: each copy equals its own fit alone (the layout of a TVB table)."""
    X, y = data_sets(6, N=25, J=6, p=2, K=2)
    R, K = 3, 2
    rng = np.random.default_rng(0)
    index = rng.integers(0, len(y), size=(R, len(y)))
    omegas = np.array([1.0, 0.2, 0.6])
    starts = random_responsibilities(len(y), K, random_state=1, n_copies=R)
    together = fit_bmlr(build_bmlr(X[index], y[index], K, PRIORS, n_copies=R, power=omegas), starts, iterations=15,
                        tol=None)
    for c in range(R):
        alone = fit_bmlr(build_bmlr(X[index[c]], y[index[c]], K, PRIORS, power=float(omegas[c])), starts[c],
                         iterations=15, tol=None)
        np.testing.assert_allclose(together.elbo[:, c], alone.elbo[:, 0], rtol=1e-12)
        for key, value in together.posteriors().items():
            np.testing.assert_allclose(value[c], alone.posteriors()[key][0], rtol=1e-10, atol=1e-12, err_msg=key)


def test_omega_to_zero_returns_the_prior():
    """ω → 0: q(π) → Dir(α₀) and q(β) q(τ) → the mean-field approximation of p(β | τ) p(τ) alone: m_k = 0,
    S_k = (b₀/a₀) I (E[τ_k] = a₀/b₀, the prior mean), a_k = a₀ + p/2, b_k = b₀ (a₀ + p/2)/a₀ — the fixed point of
    a_k = a₀ + p/2, b_k = b₀ + ½ tr S_k, S_k = (b_k/a_k) I. The ELBO tends to −KL(q ‖ p(β, τ)) of that
    approximation, computed here in closed form."""
    X, y = data_sets(7, p=2)
    K, p = 3, 2
    fit = fit_bmlr(build_bmlr(X, y, K, PRIORS, power=1e-10), random_responsibilities(len(y), K, 0)[0],
                   iterations=400, tol=1e-13)
    q = {key: value[0] for key, value in fit.posteriors().items()}
    a0, b0 = PRIORS.shape, PRIORS.rate
    np.testing.assert_allclose(q["alpha"], PRIORS.weight_concentration, rtol=1e-8)
    np.testing.assert_allclose(q["coefficient_mean"], 0.0, atol=1e-7)
    np.testing.assert_allclose(q["coefficient_cov"], np.broadcast_to(b0 / a0 * np.eye(p), (K, p, p)), rtol=1e-7,
                               atol=1e-8)
    np.testing.assert_allclose(q["tau_shape"], a0 + p / 2, rtol=1e-12)
    np.testing.assert_allclose(q["tau_rate"], b0 * (a0 + p / 2) / a0, rtol=1e-7)
    # −KL(q(β) q(τ) ‖ p(β | τ) p(τ)) per component at that point, with E[τ] = a₀/b₀ and E[βᵀβ] = p b₀/a₀
    a, b = a0 + p / 2, b0 * (a0 + p / 2) / a0
    e_log_tau = digamma(a) - np.log(b)
    e_log_p = (-p / 2 * np.log(2 * np.pi) + p / 2 * e_log_tau - 0.5 * (a / b) * p * b0 / a0
               + a0 * np.log(b0) - gammaln(a0) + (a0 - 1) * e_log_tau - b0 * a / b)
    entropy = (p / 2 * np.log(2 * np.pi * np.e * b0 / a0)) + (a - np.log(b) + gammaln(a) + (1 - a) * digamma(a))
    np.testing.assert_allclose(fit.elbo[-1, 0], K * (e_log_p + entropy), rtol=1e-6)


def test_the_interval_of_the_coefficient_sum_is_the_gaussian_of_q():
    """Σ_k Σ_j β_kj (and Σ_j β_kj of one component) under q: mean, variance and the 95 % interval against draws of
    q(β) = Π_k N(m_k, S_k); the same for every copy of a batch."""
    X, y = data_sets(8, p=2, K=2)
    fit = fit_bmlr(build_bmlr(X, y, 2, PRIORS, n_copies=2, power=np.array([1.0, 0.1])),
                   random_responsibilities(len(y), 2, 2)[0], iterations=200, tol=1e-10)
    q = fit.posteriors()
    rng = np.random.default_rng(0)
    for c in range(2):
        draws = np.stack([rng.multivariate_normal(q["coefficient_mean"][c, k], q["coefficient_cov"][c, k], 400_000)
                          for k in range(2)], axis=1)  # (S, K, p)
        for components, h in ((None, draws.sum(axis=(1, 2))), (1, draws[:, 1].sum(axis=1))):
            mean, variance = coefficient_sum(q, components)
            lower, upper = coefficient_sum_interval(q, 0.95, components)
            np.testing.assert_allclose(mean[c], h.mean(), atol=5 * h.std() / np.sqrt(h.size))
            np.testing.assert_allclose(variance[c], h.var(), rtol=0.01)
            np.testing.assert_allclose([lower[c], upper[c]], np.quantile(h, [0.025, 0.975]), atol=0.02 * h.std())
            np.testing.assert_allclose(upper[c] - lower[c], 2 * 1.959963984540054 * np.sqrt(variance[c]), rtol=1e-12)
    assert np.all(np.diff(coefficient_sum_interval(q, 0.95), axis=0) > 0)
    with pytest.raises(ModelError, match="level"):
        coefficient_sum_interval(q, 1.5)
    with pytest.raises(ModelError, match="components"):
        coefficient_sum(q, 5)


@pytest.mark.parametrize("call, error, message", [
    (lambda X, y: build_bmlr(X, y, 0), ModelError, "n_components"),
    (lambda X, y: build_bmlr(X, y, 2.5), ModelError, "n_components"),
    (lambda X, y: build_bmlr(X[:2], y[:2], 3), DataError, "N = 2 data sets cannot fill K = 3"),
    (lambda X, y: build_bmlr(np.where(np.arange(X.size).reshape(X.shape) == 40, np.nan, X), y, 2), DataError,
     r"X has NaN or infinite values in 1 data sets \(first at index \(4,\)\)"),
    (lambda X, y: build_bmlr(X, np.where(np.arange(y.size).reshape(y.shape) == 12, np.inf, y), 2), DataError,
     r"y has NaN or infinite values .*index \(2,\)"),
    (lambda X, y: build_bmlr(X, y[:, :-1], 2), DataError, "X and y do not match"),
    (lambda X, y: build_bmlr(X[:-1], y, 2), DataError, "X and y do not match"),
    (lambda X, y: build_bmlr(X[:, 0], y, 2), DataError, r"shape \(N, J, p\)"),
    (lambda X, y: build_bmlr(X, y[:, 0], 2), DataError, r"shape \(N, J\)"),
    (lambda X, y: build_bmlr(np.stack([X, X]), y, 2, n_copies=3), DataError, "R = n_copies = 3"),
    (lambda X, y: build_bmlr(X, y, 2, BMLRPriors(shape=0.0)), ModelError, "shape a₀"),
    (lambda X, y: build_bmlr(X, y, 2, BMLRPriors(rate=-1.0)), ModelError, "rate b₀"),
    (lambda X, y: build_bmlr(X, y, 2, BMLRPriors(noise_precision=np.nan)), ModelError, "noise precision λ"),
    (lambda X, y: build_bmlr(X, y, 2, BMLRPriors(weight_concentration=[1.0, 2.0, 3.0])), ModelError, "α₀"),
    (lambda X, y: build_bmlr(X, y, 2, power=0.0), ModelError, r"power ω must lie in \(0, 1\]"),
    (lambda X, y: build_bmlr(X, y, 2, n_copies=2, power=[1.0, 1.5]), ModelError, "power per copy"),
    (lambda X, y: build_bmlr(X, y, 2, priors={"shape": 1.0}), ModelError, "BMLRPriors"),
    (lambda X, y: fit_bmlr(build_bmlr(X, y, 2), np.ones((len(y), 3)) / 3), DataError, "starting responsibilities"),
    (lambda X, y: fit_bmlr(build_bmlr(X, y, 2), np.ones((len(y), 2))), DataError, "probabilities"),
    (lambda X, y: fit_bmlr(build_bmlr(X, y, 2), np.full((len(y), 2), 0.5), tau=(1.0, 0.0)), DataError, "q\\(τ\\)"),
])
def test_bad_input_is_a_named_error(call, error, message):
    X, y = data_sets(9, N=6, J=5, p=2, K=2)
    with pytest.raises(error, match=message):
        call(X, y)
