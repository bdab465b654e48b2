"""Multinomial Bayesian logistic regression by stick-breaking Pólya-Gamma VMP.

    β_k ~ N(0, σ² I) (k = 0..K−2),   y_n ~ StickBreaking(σ(β_kᵀ[x_n; 1])),   n = 1..N,

built from K − 1 ``MvNormal`` priors and a
:func:`nodes.stick_breaking_logistic.StickBreakingLogistic` plate and run by
the engine. The posterior factorises over the sticks, q(β_k) = N(μ_k, Σ_k),
so for a new x the logits ψ_k* = β_kᵀx̃ are *independent* Gaussians
N(m_k, s_k²), m_k = μ_kᵀx̃, s_k² = x̃ᵀΣ_kx̃, and the predictive class
probabilities are products of one-dimensional integrals,

    p(y = j | x, data) ≈ E[σ(ψ_j)] Π_{k<j} E[σ(−ψ_k)]   (j < K − 1),      Π_{k<K−1} E[σ(−ψ_k)]   (j = K − 1),

each E[σ(±ψ_k)] computed by
:func:`fgraph.models.logistic_regression.predictive_log_probabilities`
(quadrature to ~1e-13, or the probit approximation if asked). The
probabilities sum to one exactly (E[σ(ψ)] + E[σ(−ψ)] = 1 for each stick, so
the classes telescope), and no point estimate is plugged in.
"""
from __future__ import annotations

import numpy as np

from fgraph.models.logistic_regression import predictive_log_probabilities

__all__ = ["stick_breaking_log_probabilities"]


def stick_breaking_log_probabilities(means, stds, method: str = "quadrature") -> np.ndarray:
    """``log p(y = j)`` for j = 0..K−1 under independent logits ψ_k ~ N(means[..., k], stds[..., k]²), k = 0..K−2.

    ``means`` and ``stds`` have shape ``(..., K−1)``; the result ``(..., K)``:
    ``log E[σ(ψ_j)] + Σ_{k<j} log E[σ(−ψ_k)]`` (the last class: the sum over every stick).
    """
    means, stds = np.broadcast_arrays(np.asarray(means, dtype=float), np.asarray(stds, dtype=float))
    log_break, log_pass = predictive_log_probabilities(means, stds, method=method)
    zero = np.zeros(means.shape[:-1] + (1,))
    passed_before = np.concatenate([zero, np.cumsum(log_pass, axis=-1)], axis=-1)
    return passed_before + np.concatenate([log_break, zero], axis=-1)
