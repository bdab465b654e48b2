"""A hand-written numpy variational Bayes for the Gaussian mixture (Bishop 2006, §10.2), for the GMM tests.

Written from the book's closed forms, independently of the engine: the M-step in the form of eqs. 10.51–10.53
and 10.58–10.63 (with N_k, x̄_k, S_k), the E-step eqs. 10.46–10.50 and 10.64–10.66, and the full ELBO
eqs. 10.70–10.77 with every constant.

The fractional variants (``omega`` ω): the M-step of Algorithm 3 of the TVB paper (every N_k, x̄_k term of the
update times ω; in W_k⁻¹ the last term is β₀ ωN_k / (β₀ + ωN_k) (x̄_k − m₀)(x̄_k − m₀)ᵀ, which is what its own
derivation, eq. 47, gives — the printed eqs. 20 and 48 leave that ω out, a misprint that ω = 1 hides), and
the ELBO ω E[log p(X | Z, θ)] + ω E[log p(Z | π)] + … − c E[log q(Z)] with ``z_entropy`` c: ω for the paper's
objective (16) (q^ω(Z)), 1 for a plain node power on the two factors. The E-step's responsibilities are
softmax(t log ρ) with ``temper`` t: 1 for Algorithm 3, ω for a plain node power.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import digamma, gammaln, multigammaln

LOG_2PI = np.log(2 * np.pi)


@dataclass
class Prior:
    alpha: np.ndarray  # (K,)
    mean: np.ndarray  # (d,)
    beta: float
    scale: np.ndarray  # W₀ (d, d)
    df: float


def log_c(alpha):
    return gammaln(alpha.sum()) - gammaln(alpha).sum()


def log_b(W, nu):
    d = W.shape[-1]
    return -0.5 * nu * np.linalg.slogdet(W)[1] - 0.5 * nu * d * np.log(2) - multigammaln(0.5 * nu, d)


def m_step(X, r, prior: Prior, omega=1.0) -> dict:
    Nk = r.sum(0)
    xbar = (r.T @ X) / Nk[:, None]
    K = r.shape[1]
    S = np.array([(r[:, k, None] * (X - xbar[k])).T @ (X - xbar[k]) / Nk[k] for k in range(K)])
    alpha = prior.alpha + omega * Nk
    beta = prior.beta + omega * Nk
    mean = (prior.beta * prior.mean + omega * Nk[:, None] * xbar) / beta[:, None]
    df = prior.df + omega * Nk
    shrink = prior.beta * omega * Nk / (prior.beta + omega * Nk)
    W_inv = np.array([np.linalg.inv(prior.scale) + omega * Nk[k] * S[k]
                      + shrink[k] * np.outer(xbar[k] - prior.mean, xbar[k] - prior.mean) for k in range(K)])
    return {"alpha": alpha, "precision_scale": beta, "mean": mean, "df": df, "scale": np.linalg.inv(W_inv)}


def expectations(q: dict) -> tuple:
    d = q["mean"].shape[1]
    log_pi = digamma(q["alpha"]) - digamma(q["alpha"].sum())
    log_lambda = (np.sum([digamma((q["df"] + 1 - i) / 2) for i in range(1, d + 1)], axis=0) + d * np.log(2)
                  + np.linalg.slogdet(q["scale"])[1])
    return log_pi, log_lambda


def log_rho(X, q: dict) -> np.ndarray:
    d = X.shape[1]
    log_pi, log_lambda = expectations(q)
    diff = X[:, None, :] - q["mean"][None]
    quadratic = d / q["precision_scale"] + q["df"] * np.einsum("nki,kij,nkj->nk", diff, q["scale"], diff)
    return log_pi + 0.5 * log_lambda - 0.5 * d * LOG_2PI - 0.5 * quadratic


def e_step(X, q: dict, temper=1.0) -> np.ndarray:
    logits = temper * log_rho(X, q)
    return np.exp(logits - np.logaddexp.reduce(logits, axis=1, keepdims=True))


def elbo(X, r, q: dict, prior: Prior, omega=1.0, z_entropy=1.0) -> float:
    N, d = X.shape
    K = r.shape[1]
    log_pi, log_lambda = expectations(q)
    beta, m, W, nu, alpha = q["precision_scale"], q["mean"], q["scale"], q["df"], q["alpha"]
    diff = X[:, None, :] - m[None]
    expected_log_normal = (0.5 * log_lambda - 0.5 * d * LOG_2PI
                           - 0.5 * (d / beta + nu * np.einsum("nki,kij,nkj->nk", diff, W, diff)))
    ell = np.sum(r * expected_log_normal)  # E[log p(X | Z, μ, Λ)]
    pz = np.sum(r * log_pi)  # E[log p(Z | π)]
    ppi = log_c(prior.alpha) + np.sum((prior.alpha - 1) * log_pi)
    dm = m - prior.mean
    W0_inv = np.linalg.inv(prior.scale)
    pth = np.sum(0.5 * (d * np.log(prior.beta / (2 * np.pi)) + log_lambda - d * prior.beta / beta
                        - prior.beta * nu * np.einsum("ki,kij,kj->k", dm, W, dm))
                 + log_b(prior.scale, prior.df) + 0.5 * (prior.df - d - 1) * log_lambda
                 - 0.5 * nu * np.einsum("ij,kji->k", W0_inv, W))
    with np.errstate(divide="ignore", invalid="ignore"):
        qz = np.sum(np.where(r > 0, r * np.log(r), 0.0))
    qpi = log_c(alpha) + np.sum((alpha - 1) * log_pi)
    entropy_lambda = -np.array([log_b(W[k], nu[k]) for k in range(K)]) - 0.5 * (nu - d - 1) * log_lambda \
        + 0.5 * nu * d
    qth = np.sum(0.5 * log_lambda + 0.5 * d * np.log(beta / (2 * np.pi)) - 0.5 * d - entropy_lambda)
    return float(omega * (ell + pz) + ppi + pth - z_entropy * qz - qpi - qth)


def run(X, r0, prior: Prior, sweeps: int, omega=1.0, temper=1.0, z_entropy=1.0) -> list:
    """Sweeps of (M-step, E-step) from r0, as the engine's schedule; per sweep (q(θ), r, ELBO of that state)."""
    r, states = r0, []
    for _ in range(sweeps):
        q = m_step(X, r, prior, omega)
        r = e_step(X, q, temper)
        states.append((q, r, elbo(X, r, q, prior, omega, z_entropy)))
    return states
