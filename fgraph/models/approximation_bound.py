"""Choosing α_ε by the exact model's evidence lower bound (Appendix B of Bui, "Likelihood approximations via
Gaussian approximate inference").

A Gaussian likelihood approximation with prior shapes α_ε, β_ε gives Bayesian logistic regression a Gaussian
posterior in closed form, q(β; α_ε, β_ε) = N(μ, Σ): that of linear regression of the labels' pseudo-observations
(:func:`fgraph.families.basis_matching.logistic_pseudo_observations`). Instead of treating the approximate model
as the model, Appendix B treats this q as a *variational family of the exact model*, parameterised by α_ε (and
β_ε) alone, and chooses them by the exact model's bound

    L(α_ε, β_ε) = Σ_n E_q[log σ(s_n ψ_n)] − KL(q ‖ N(0, σ₀² I)),      ψ_n = βᵀx̃_n,  s_n = 2y_n − 1,

where under q the logit ψ_n is N(μᵀx̃_n, x̃_nᵀΣx̃_n) and E_q[log σ(s ψ)] is a one-dimensional Gaussian integral
(:func:`fgraph.families.basis_matching.expected_log_sigmoid`, ~1e-13). L is a lower bound on log p(y) for every
α_ε; maximising it over log α_ε (one dimension with β_ε = α_ε, or two) picks the approximation whose posterior
the exact model prefers. The same bound compares it with Pólya-Gamma VB's Gaussian q, which maximises a looser
(Jaakkola–Jordan) bound: :func:`exact_bound` evaluates L for any Gaussian q.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fgraph.errors import ModelError
from fgraph.families.basis_matching import METHODS, expected_log_sigmoid, logistic_pseudo_observations
from fgraph.models.linear_gaussian_update import observe_linear

__all__ = ["BoundChoice", "exact_bound", "approximate_posterior", "choose_epsilon"]

#: Where α_ε (and β_ε) are searched: log-uniformly in this interval.
EPSILON_BOUNDS = (1e-3, 1e3)


def exact_bound(mean: np.ndarray, cov: np.ndarray, rows: np.ndarray, labels: np.ndarray, prior_var: float) -> float:
    """``Σ_n E_q[log σ(s_n ψ_n)] − KL(N(mean, cov) ‖ N(0, prior_var I))`` for the Gaussian q(β) = N(mean, cov),
    rows x̃_n ``(N, D)``, labels 0/1 ``(N,)``: the exact logistic model's evidence lower bound (module docstring)."""
    signs = 2.0 * np.asarray(labels, dtype=float) - 1.0
    logit_mean = rows @ mean
    logit_std = np.sqrt(np.maximum(np.einsum("ni,ij,nj->n", rows, cov, rows), 0.0))
    expected = np.sum(expected_log_sigmoid(signs * logit_mean, logit_std))
    dimension = len(mean)
    _, log_det = np.linalg.slogdet(cov)
    kl = 0.5 * (np.trace(cov) / prior_var + mean @ mean / prior_var - dimension
                + dimension * np.log(prior_var) - log_det)
    return float(expected - kl)


def approximate_posterior(rows, labels, prior_var: float, method: str, alpha_epsilon: float,
                          beta_epsilon: float | None = None) -> tuple:
    """q(β) = N(μ, Σ) of the approximate model: linear regression of the pseudo-observations on ``rows``."""
    targets, variances = logistic_pseudo_observations(labels, alpha_epsilon, beta_epsilon, method)
    dimension = rows.shape[1]
    return observe_linear(np.zeros(dimension), prior_var * np.eye(dimension), rows, targets, variances)


@dataclass(frozen=True)
class BoundChoice:
    """The α_ε (β_ε) maximising the exact bound for one method, the bound there, and q(β) there."""

    method: str
    alpha_epsilon: float
    beta_epsilon: float
    bound: float
    mean: np.ndarray
    cov: np.ndarray


def choose_epsilon(rows, labels, prior_var: float, method: str, separate_beta: bool = False,
                   bounds: tuple = EPSILON_BOUNDS) -> BoundChoice:
    """Maximise :func:`exact_bound` of q(β; α_ε, β_ε) over log α_ε (β_ε = α_ε), or over (log α_ε, log β_ε) with
    ``separate_beta``, within ``bounds``; scipy's bounded scalar search (resp. L-BFGS-B from the scalar optimum).

    ``rows`` (N, D) are the inputs with their bias column, ``labels`` 0/1.
    """
    from scipy.optimize import minimize, minimize_scalar

    if method not in METHODS:
        raise ModelError(f"choose_epsilon: unknown method {method!r}; known methods are {', '.join(METHODS)}")
    low, high = (float(np.log(b)) for b in bounds)
    if not low < high:
        raise ModelError(f"choose_epsilon: bounds must be 0 < low < high, got {bounds}")
    rows, labels = np.asarray(rows, dtype=float), np.asarray(labels, dtype=float)

    def negative(log_alpha, log_beta=None):
        posterior = approximate_posterior(rows, labels, prior_var, method, float(np.exp(log_alpha)),
                                          None if log_beta is None else float(np.exp(log_beta)))
        return -exact_bound(*posterior, rows, labels, prior_var)

    scalar = minimize_scalar(negative, bounds=(low, high), method="bounded", options={"xatol": 1e-6})
    log_alpha, log_beta = float(scalar.x), float(scalar.x)
    if separate_beta:
        joint = minimize(lambda v: negative(v[0], v[1]), x0=[log_alpha, log_beta], method="L-BFGS-B",
                         bounds=[(low, high), (low, high)])
        if joint.fun < scalar.fun:
            log_alpha, log_beta = (float(v) for v in joint.x)
    alpha, beta = float(np.exp(log_alpha)), float(np.exp(log_beta))
    mean, cov = approximate_posterior(rows, labels, prior_var, method, alpha, beta)
    return BoundChoice(method, alpha, beta, exact_bound(mean, cov, rows, labels, prior_var), mean, cov)
