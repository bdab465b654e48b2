"""Liu & Li's code for the TVB paper's §6.1 study (``GMM/tvb_gmm.R`` of JmL130169/Trustworthy-Variational-Bayes),
ported to numpy with its fits batched: what their code computes, to set beside the engine's fits.

Their ``vb_gmm(data, omega)`` is fractional VB for the K = 2 Bayesian GMM, started from k-means (25 starts), with
priors from the data it is given — α₀ = 1/K, m₀ = the data's mean, β₀ = 1, W₀ = the data's covariance, ν₀ = d + 2 —,
at most 199 sweeps (E-step, M-step, ELBO) stopping when the ELBO changed by less than 1e-4. Its M-step updates W_k by

    W_k⁻¹ = W₀⁻¹ + ω N_k S_k + β₀ N_k / (β₀ + N_k) (x̄_k − m₀)(x̄_k − m₀)ᵀ,

as the paper prints it; the normal–Wishart that is the prior times the likelihood raised to ω has
β₀ ω N_k / (β₀ + ω N_k) in the last term (``scale_update="derived"``; the engine's). ``priors_from="whole"`` takes
the priors of the whole data for every fit instead (as the engine's TVB table does). Grid-search TVB
(:func:`grid_coverages`: their ``boot_tvb`` at every ω, a new split and new resamples per ω, the tie to the largest
ω) and the sequential update (:func:`sequential_omega`: their ``update_omega_pi``) are ported as written.

Two things are not theirs: R's k-means is Hartigan–Wong, this port's Lloyd's from the same kind of starts
(:func:`fgraph.models.mixtures.kmeans.kmeans_centres`; with 25 starts on these data both find the same centres), and
the random numbers are numpy's. The fits of one ω (the split half and the B resamples) run as one batch of arrays;
the fits are independent, so each stops on its own sweep as theirs would.
"""
from __future__ import annotations

import numpy as np
from scipy.special import betaincinv, digamma, gammaln

from fgraph.models.mixtures.kmeans import kmeans_centres

__all__ = ["fit_vb_gmm", "interval", "grid_coverages", "sequential_omega", "SCALE_UPDATES", "PRIORS_FROM"]

SCALE_UPDATES = ("printed", "derived")
PRIORS_FROM = ("cell", "whole")
K = 2


def _priors(data: np.ndarray, whole: np.ndarray | None) -> tuple:
    """(m₀ (R, d), W₀ (R, d, d)) from every data set (R, n, d), or from ``whole`` (N, d) for all of them."""
    R, n, d = data.shape
    if whole is not None:
        return np.broadcast_to(whole.mean(0), (R, d)), np.broadcast_to(np.cov(whole.T), (R, d, d))
    centred = data - data.mean(1, keepdims=True)
    return data.mean(1), np.einsum("rni,rnj->rij", centred, centred) / (n - 1)


def _log_det(matrix: np.ndarray) -> np.ndarray:
    return np.linalg.slogdet(matrix)[1]


def fit_vb_gmm(data, omega, seeds, scale_update: str = "printed", whole=None, max_iter: int = 200,
               tol: float = 1e-4) -> dict:
    """``vb_gmm`` on each of R data sets ``data`` (R, n, d) at powers ``omega`` (R,) (one number: all), k-means
    seeded per data set by ``seeds``: the Dirichlet ``lambda`` (R, K) with the larger weight first (their
    label-switch fix), the sweeps run (R,), and the means ``rho`` (R, K, d), ``beta``, ``nu``, ``Phi`` (W)."""
    if scale_update not in SCALE_UPDATES:
        raise ValueError(f"scale_update must be one of {SCALE_UPDATES}, got {scale_update!r}")
    data = np.asarray(data, dtype=float)
    R, n, d = data.shape
    omega = np.broadcast_to(np.asarray(omega, dtype=float), (R,))
    lambda0, beta0, nu0 = 1.0 / K, 1.0, d + 2.0
    rho0, Phi0 = _priors(data, whole)
    Phi0_inv = np.linalg.inv(Phi0)
    rho = np.swapaxes(kmeans_centres(data, K, 25, seeds), 1, 2)  # (R, d, K), as t(kmeans(...)$centers)
    lam = np.full((R, K), lambda0)
    beta = np.full((R, K), beta0)
    nu = np.full((R, K), nu0)
    Phi = np.broadcast_to(Phi0[:, None], (R, K, d, d)).copy()
    dims = np.arange(1, d + 1)

    def expectations(lam, nu, Phi):
        log_pi = digamma(lam) - digamma(lam.sum(1, keepdims=True))
        log_Lambda = digamma((nu[..., None] + 1 - dims) / 2).sum(-1) + d * np.log(2) + _log_det(Phi)
        return log_pi, log_Lambda

    log_pi, log_Lambda = expectations(lam, nu, Phi)
    L_previous = np.full(R, -np.inf)
    sweeps = np.zeros(R, dtype=int)
    active = np.arange(R)  # the fits still running; a stopped fit keeps its state
    for i in range(2, max_iter + 1):
        a = active
        X, w = data[a], omega[a]
        # E-step: log ρ_nk (their ω ... / ω cancels)
        diff = X[:, :, None, :] - np.swapaxes(rho[a], 1, 2)[:, None, :, :]  # (A, n, K, d)
        quad = np.einsum("rnkj,rnkj->rnk", np.einsum("rnki,rkij->rnkj", diff, Phi[a]), diff)
        log_rho = (log_pi[a][:, None] + 0.5 * log_Lambda[a][:, None] - 0.5 * d / beta[a][:, None]
                   - 0.5 * nu[a][:, None] * quad)
        Z = np.logaddexp.reduce(log_rho, axis=2, keepdims=True)
        log_r = log_rho - Z
        r = np.exp(log_r)
        # M-step
        N_k = r.sum(1) + 1e-10  # (A, K)
        x_bar = np.einsum("rnk,rnd->rkd", r, X) / N_k[..., None]
        centred = X[:, :, None, :] - x_bar[:, None]
        S = np.einsum("rnki,rnkj->rkij", r[..., None] * centred, centred) / N_k[..., None, None]
        wN = w[:, None] * N_k
        lam[a] = lambda0 + wN
        beta[a] = beta0 + wN
        nu[a] = nu0 + wN
        new_rho = (beta0 * rho0[a][:, None, :] + wN[..., None] * x_bar) / beta[a][..., None]  # (A, K, d)
        rho[a] = np.swapaxes(new_rho, 1, 2)
        shrink = beta0 * N_k / (beta0 + N_k) if scale_update == "printed" else beta0 * wN / (beta0 + wN)
        offset = x_bar - rho0[a][:, None, :]
        Phi_inv = (Phi0_inv[a][:, None] + wN[..., None, None] * S
                   + shrink[..., None, None] * offset[..., :, None] * offset[..., None, :])
        Phi[a] = np.linalg.inv(Phi_inv)
        log_pi[a], log_Lambda[a] = expectations(lam[a], nu[a], Phi[a])
        L = _elbo(w, r, log_r, N_k, x_bar, S, log_pi[a], log_Lambda[a], lam[a], new_rho, beta[a], nu[a], Phi[a],
                  rho0[a], Phi0[a], Phi0_inv[a], lambda0, beta0, nu0)
        sweeps[a] += 1
        settled = np.abs(L - L_previous[a]) < tol if i > 2 else np.zeros(a.size, dtype=bool)
        L_previous[a] = L
        active = a[~settled]
        if active.size == 0:
            break
    # their label-switch fix: the larger weight first
    first_small = lam[:, 0] < lam[:, 1]
    lam = np.where(first_small[:, None], lam[:, ::-1], lam)
    return {"lambda": lam, "sweeps": sweeps, "rho": np.swapaxes(rho, 1, 2), "beta": beta, "nu": nu, "Phi": Phi}


def _log_B(W: np.ndarray, nu: np.ndarray) -> np.ndarray:
    d = W.shape[-1]
    return (-0.5 * nu * _log_det(W) - (0.5 * nu * d * np.log(2) + 0.25 * d * (d - 1) * np.log(np.pi)
                                        + gammaln(0.5 * (nu[..., None] + 1 - np.arange(1, d + 1))).sum(-1)))


def _elbo(omega, r, log_r, N_k, x_bar, S, log_pi, log_Lambda, lam, rho, beta, nu, Phi, rho0, Phi0, Phi0_inv,
          lambda0, beta0, nu0) -> np.ndarray:
    """Their ELBO, term by term as ``vb_gmm`` writes it (it decides when a fit stops)."""
    d = rho.shape[-1]
    dx = x_bar - rho
    lb_px = (N_k * (log_Lambda - d / beta - nu * np.einsum("rkij,rkji->rk", S, Phi)
                    - nu * np.einsum("rki,rkij,rkj->rk", dx, Phi, dx) - d * np.log(2 * np.pi))).sum(1)
    dm = rho - rho0[:, None, :]
    lb_pml = (d * np.log(beta0 / (2 * np.pi)) + log_Lambda - d * beta0 / beta
              - beta0 * nu * np.einsum("rki,rkij,rkj->rk", dm, Phi, dm)).sum(1)
    lb_pml2 = (nu * np.einsum("rij,rkji->rk", Phi0_inv, Phi)).sum(1)
    lb_qml = (0.5 * log_Lambda + 0.5 * d * np.log(beta / (2 * np.pi)) - 0.5 * d
              - (-_log_B(Phi, nu) - 0.5 * (nu - d - 1) * log_Lambda + 0.5 * nu * d)).sum(1)
    lb_px = 0.5 * omega * lb_px
    lb_pml = 0.5 * lb_pml + K * _log_B(Phi0, np.full(len(Phi0), nu0)) + 0.5 * (nu0 - d - 1) * log_Lambda.sum(1) \
        - 0.5 * lb_pml2
    lb_pz = ((omega[:, None, None] * r) * log_pi[:, None, :]).sum((1, 2))
    lb_qz = (omega[:, None, None] * r * log_r).sum((1, 2))
    lb_pp = ((lambda0 - 1) * log_pi).sum(1) + gammaln(K * lambda0) - K * gammaln(lambda0)
    lb_qp = ((lam - 1) * log_pi).sum(1) + gammaln(lam.sum(1)) - gammaln(lam).sum(1)
    return lb_px + lb_pz + lb_pp + lb_pml - lb_qz - lb_qp - lb_qml


def interval(lam: np.ndarray, level: float = 0.95) -> tuple:
    """Their ``dir_beta_ci``: the equal-tailed Beta(λ₁, λ₂) interval of the larger weight (lower, upper)."""
    tail = 0.5 * (1 - level)
    return betaincinv(lam[..., 0], lam[..., 1], tail), betaincinv(lam[..., 0], lam[..., 1], 1 - tail)


def _split(rng: np.random.Generator, N: int, B: int) -> tuple:
    train = rng.choice(N, N // 2, replace=False)
    test = np.setdiff1d(np.arange(N), train)
    return train, test[rng.integers(0, test.size, size=(B, test.size))]


def _seeds(rng: np.random.Generator, count: int) -> list:
    return [int(seed) for seed in rng.integers(0, 2 ** 63, size=count)]


def _coverage(X, omega: float, rng, B: int, scale_update: str, whole, level: float) -> float:
    """One ``boot_tvb`` (or one iteration of ``update_omega_pi``): the fraction of the B resamples' intervals that
    contain the split half's estimate of the larger weight, strictly inside as theirs."""
    train, resamples = _split(rng, len(X), B)
    first = fit_vb_gmm(X[train][None], omega, _seeds(rng, 1), scale_update, whole)
    estimate = first["lambda"][0, 0] / first["lambda"][0].sum()
    fits = fit_vb_gmm(X[resamples], omega, _seeds(rng, B), scale_update, whole)
    lower, upper = interval(fits["lambda"], level)
    return float(np.mean((lower < estimate) & (estimate < upper)))


def grid_coverages(X, grid, rng: np.random.Generator, B: int = 500, scale_update: str = "printed",
                   priors_from: str = "cell", level: float = 0.95) -> np.ndarray:
    """Their dictionary: ``boot_tvb`` at every ω of ``grid`` (a new split and B new resamples per ω)."""
    whole = X if priors_from == "whole" else None
    return np.array([_coverage(X, float(omega), rng, B, scale_update, whole, level) for omega in grid])


def grid_choice(grid, coverages, level: float = 0.95) -> int:
    """Their choice on the dictionary: the largest ω among those of coverage closest to the level."""
    distance = np.abs(np.asarray(coverages) - level)
    return int(np.max(np.flatnonzero(distance == distance.min())))


def sequential_omega(X, rng: np.random.Generator, B: int = 500, scale_update: str = "printed",
                     priors_from: str = "cell", level: float = 0.95, max_iter: int = 100,
                     tolerance: float = 1e-3) -> tuple:
    """Their ``update_omega_pi``: (ω, whether it converged, the iterations): η = log ω from 0, a new split and B
    resamples every iteration, η ← η + (ĉ − level) (k + 1)^−0.51 until ĉ > level or |ĉ − level| < ε."""
    whole = X if priors_from == "whole" else None
    eta, k = 0.0, 0
    while k < max_iter:
        omega = float(np.exp(eta))
        coverage = _coverage(X, omega, rng, B, scale_update, whole, level)
        k += 1
        if coverage > level or abs(coverage - level) < tolerance:
            return omega, True, k
        eta += (coverage - level) * k ** -0.51  # (k + 1)^−0.51 with their k before the increment
    return omega, False, k
