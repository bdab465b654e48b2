"""The posterior of Gaussian coefficients after Gaussian observations of linear functions of them (a Kalman
measurement update), for streaming Bayesian regression.

Prior ``β ~ N(μ, Σ)`` (dimension D) and observations ``t_n ~ N(x_nᵀβ, v_n)``, n = 1..B (rows ``X`` (B, D)):
the posterior is Gaussian with

    Σ' = (Σ⁻¹ + Xᵀ V⁻¹ X)⁻¹,      μ' = Σ' (Σ⁻¹ μ + Xᵀ V⁻¹ t),      V = diag(v).

Conjugacy makes the order and grouping of the observations irrelevant: B updates of one observation give the
posterior of one update with all B (to rounding). This is what makes a Gaussian likelihood approximation of a
classifier (:mod:`fgraph.families.basis_matching`) an online learner at the cost of a few small matrix products
per observation.

For B ≤ D the update is done in the observations' space (Woodbury), with the B × B innovation covariance
``S = V + XΣXᵀ`` and gain ``K = ΣXᵀS⁻¹``: ``μ' = μ + K(t − Xμ)``, ``Σ' = Σ − K X Σ``; for one observation
(B = 1) S is a number and this is the Sherman–Morrison update, O(D²). For B > D it is done in the coefficients'
space, from the precision ``Σ⁻¹ + XᵀV⁻¹X`` (one D × D Cholesky factorisation). Both forms are exact; the choice
is the cheaper one.
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve

__all__ = ["observe_linear", "observe_one"]


def observe_one(mean: np.ndarray, cov: np.ndarray, row: np.ndarray, target: float, variance: float) -> tuple:
    """The posterior ``(μ', Σ')`` after one observation ``target ~ N(rowᵀβ, variance)`` (Sherman–Morrison).

    ``mean`` (D,), ``cov`` (D, D), ``row`` (D,); returns new arrays of the same shapes. O(D²): one
    matrix–vector product and one rank-one update.
    """
    shared = cov @ row  # Σx
    innovation = variance + row @ shared  # s = v + xᵀΣx > 0
    gain = shared / innovation
    new_mean = mean + gain * (target - row @ mean)
    new_cov = cov - np.outer(gain, shared)
    return new_mean, new_cov


def observe_linear(mean: np.ndarray, cov: np.ndarray, rows: np.ndarray, targets: np.ndarray,
                   variances: np.ndarray) -> tuple:
    """The posterior ``(μ', Σ')`` after the observations ``targets[n] ~ N(rows[n]ᵀβ, variances[n])``.

    ``mean`` (D,), ``cov`` (D, D) (symmetric positive definite), ``rows`` (B, D), ``targets`` and ``variances``
    (B,) (variances > 0). Woodbury for B ≤ D, the precision form for B > D (module docstring). The returned
    covariance is symmetrised (the two triangles of a computed update differ by rounding).
    """
    rows = np.atleast_2d(np.asarray(rows, dtype=float))
    targets = np.atleast_1d(np.asarray(targets, dtype=float))
    variances = np.atleast_1d(np.asarray(variances, dtype=float))
    if rows.shape[0] == 1:
        new_mean, new_cov = observe_one(mean, cov, rows[0], float(targets[0]), float(variances[0]))
    elif rows.shape[0] <= rows.shape[1]:
        shared = rows @ cov  # XΣ, (B, D)
        innovation = shared @ rows.T
        innovation[np.diag_indices_from(innovation)] += variances  # S = V + XΣXᵀ
        factor = cho_factor(innovation, lower=True, check_finite=False)
        gain_t = cho_solve(factor, shared, check_finite=False)  # S⁻¹XΣ = Kᵀ
        new_mean = mean + gain_t.T @ (targets - rows @ mean)
        new_cov = cov - shared.T @ gain_t
    else:
        prior_factor = cho_factor(cov, lower=True, check_finite=False)
        precision = cho_solve(prior_factor, np.eye(len(mean)), check_finite=False)
        weighted = rows / variances[:, None]
        precision += rows.T @ weighted
        factor = cho_factor(precision, lower=True, check_finite=False)
        new_cov = cho_solve(factor, np.eye(len(mean)), check_finite=False)
        new_mean = new_cov @ (cho_solve(prior_factor, mean, check_finite=False) + weighted.T @ targets)
    return new_mean, 0.5 * (new_cov + new_cov.T)
