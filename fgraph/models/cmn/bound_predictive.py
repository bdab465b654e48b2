"""The predictive of the authors' code: each layer's Pólya-Gamma bound, normalised (a forward pass, no sampling).

The authors' implementation of CAVI-CMN (VersesTech/cavi-cmn, ``Sequential.predict``) does not integrate the
posterior: it passes x0 forward through each layer's *variational* message and normalises the bounds it
meets. In the notation of :mod:`fgraph.models.cmn.predictive` (R restarts, K experts, L classes, latent h,
x̃0 = [x0; 1], D = d + 1), for one restart:

* **The gate** (``MultinomialRegression.log_forward`` of a known input): for each expert k, the
  Jaakkola–Jordan bound of E_q[log p(z = k | x0, β0)] at its optimal tilts,

      g_k = Σ_j [κ_kj E[ψ_j] − b_kj log(2 cosh(c_j / 2))],   ψ_j = β0_jᵀx̃0,   c_j = √E[ψ_j²],

  with b_kj = 1 where stick j is reached on the way to k (j ≤ k) and κ_kj = [j = k] − b_kj / 2.
* **The experts** (``LinearMNG.variational_forward``): x1 | z = k receives exp E_q[log N(x1; A_k x̃0, Λ_k⁻¹)],
  the Gaussian N(M_k x̃0, E[Λ_k]⁻¹) times exp(r_k) with

      r_k = ½ Σ_i (ψ(a_k) − log a_k) − ½ h x̃0ᵀV_k x̃0      (up to a constant shared by the experts),

  the log normaliser of the message (E[log λ] − log E[λ] per row, and the coefficients' spread at x0).
* **The weights of the experts**: log w_k = g_k + r_k, normalised over k (``log_pz`` of
  ``MultinomialRegression.log_forward`` of a mixture message).
* **The output given expert k** (``MultinomialRegression.joint``, four iterations): for each class y, the
  local variational problem q(x1) ∝ N(x1; M_k x̃0, E[Λ_k]⁻¹) · exp(Σ_l [κ_yl ψ1_l − b_yl E[ω_l] ψ1_l² / 2])
  with ψ1_l = β1_lᵀ[x1; 1], solved by alternating E[ω_l] = b_yl tanh(c_l/2) / (2 c_l) and q(x1), from
  c = 10⁻⁶; its value

      o_ky = Σ_l [κ_yl E[ψ1_l] − b_yl log(2 cosh(c_l / 2))] − KL(q(x1) ‖ N(M_k x̃0, E[Λ_k]⁻¹)),

  a lower bound of log ∫ p(y | x1) N(x1; …) dx1, normalised over y.
* **The predictive**: log p(y | x0) = logsumexp_k (log w_k + o_ky − logsumexp_y' o_ky').

This is what the authors' ``cavi_cmn_waic_uci.py`` scores (:func:`bound_predictive_log_proba`, in float64
here, theirs in float32); :func:`fgraph.models.cmn.predictive.predictive_log_proba` is the posterior
predictive proper (exact in the coefficients, quasi-Monte Carlo in x1).
"""
from __future__ import annotations

import numpy as np
from scipy.special import digamma, logsumexp

from fgraph.models.cmn.predictive import augmented_inputs, check_count, posterior_sizes

__all__ = ["bound_predictive_log_proba", "BOUND_ITERATIONS"]

#: the local iterations of the output's bound (the authors' ``MultinomialRegression.forward``: ``iters=4``)
BOUND_ITERATIONS = 4
#: the tilts' starting value (theirs)
_START = 1e-6


def _stick_counts(classes: int) -> tuple:
    """(b, κ) of each class of ``classes``, (classes, classes − 1): b_yj = 1 where stick j is reached on the way
    to class y (j ≤ y), κ_yj = [j = y] − b_yj / 2."""
    sticks = classes - 1
    reached = (np.arange(sticks)[None, :] <= np.arange(classes)[:, None]).astype(float)
    taken = np.eye(classes)[:, :sticks]
    return reached, taken - 0.5 * reached


def _log_two_cosh(c) -> np.ndarray:
    """log(2 cosh(c / 2)) = softplus(c) − c / 2, for c ≥ 0."""
    return np.logaddexp(0.0, c) - 0.5 * c


def _gate_bounds(gate_mean, gate_cov, xt) -> np.ndarray:
    """g (R, N, K): the gate's bound per expert (module docstring); zeros for one expert."""
    R, J, _ = gate_mean.shape
    if J == 0:
        return np.zeros((R, len(xt), 1))
    mean = np.einsum("rjd,nd->rnj", gate_mean, xt)
    second = mean ** 2 + np.einsum("nd,rjde,ne->rnj", xt, gate_cov, xt)
    tilt = _log_two_cosh(np.sqrt(np.maximum(second, 0.0)))
    reached, kappa = _stick_counts(J + 1)
    return np.einsum("kj,rnj->rnk", kappa, mean) - np.einsum("kj,rnj->rnk", reached, tilt)


def _expert_residuals(a, V, xt, h: int) -> np.ndarray:
    """r (R, N, K): the experts' log normalisers at x0 (module docstring), a constant shared by the experts left out."""
    return (0.5 * h * (digamma(a) - np.log(a)))[:, None, :] - 0.5 * h * np.einsum("nd,rkde,ne->rnk", xt, V, xt)


def _output_bounds(center, precision, out_mean, out_second, iterations: int) -> np.ndarray:
    """o (…, L): the output's bound per class for x1 ~ N(center, diag(precision)⁻¹) (…, h) (module docstring).

    ``out_mean`` (…, L−1, H) and ``out_second`` (…, L−1, H, H) are E[β1_l] and E[β1_l β1_lᵀ], broadcast against
    the leading axes of ``center``.
    """
    h = center.shape[-1]
    L = out_mean.shape[-2] + 1
    reached, kappa = _stick_counts(L)  # (L, L−1)
    prior_precision = precision[..., None, :, None] * np.eye(h)  # (…, 1, h, h): one per class below
    prior_linear = (precision * center)[..., None, :]  # (…, 1, h)
    beta_x = out_mean[..., :h]  # (…, L−1, h)
    cross = 0.5 * (out_second[..., :h, h] + out_second[..., h, :h])  # (…, L−1, h)
    block = out_second[..., :h, :h]  # (…, L−1, h, h)

    def second_moment(mean, cov):  # E[ψ1_l²] for x1 ~ N(mean, cov) per class: (…, L, L−1)
        outer = cov + mean[..., :, None] * mean[..., None, :]
        quadratic = np.einsum("...yij,...lij->...yl", outer, block)
        return quadratic + 2.0 * np.einsum("...yi,...li->...yl", mean, cross) + out_second[..., None, :, h, h]

    c = np.full(center.shape[:-1] + (L, L - 1), _START)
    linear = prior_linear + np.einsum("yl,...li->...yi", kappa, beta_x)  # (…, L, h): the κ part is fixed
    for _ in range(iterations):
        omega = reached * np.tanh(0.5 * c) / (2.0 * c)  # E[ω_yl] (…, L, L−1)
        q_precision = prior_precision + np.einsum("...yl,...lij->...yij", omega, block)
        q_linear = linear - np.einsum("...yl,...li->...yi", omega, cross)
        q_cov = np.linalg.inv(q_precision)
        q_mean = np.einsum("...yij,...yj->...yi", q_cov, q_linear)
        c = np.sqrt(np.maximum(second_moment(q_mean, q_cov), 0.0))
    psi = np.einsum("...yi,...li->...yl", q_mean, beta_x) + out_mean[..., None, :, h]  # E[ψ1_l] (…, L, L−1)
    bound = np.sum(kappa * psi - reached * _log_two_cosh(c), axis=-1)
    difference = q_mean - center[..., None, :]
    _, q_logdet = np.linalg.slogdet(q_cov)
    kl = 0.5 * (np.einsum("...i,...yii->...y", precision, q_cov)
                + np.einsum("...i,...yi->...y", precision, difference ** 2)
                - h - np.sum(np.log(precision), axis=-1)[..., None] - q_logdet)
    return bound - kl


def bound_predictive_log_proba(posteriors, X, iterations: int = BOUND_ITERATIONS) -> np.ndarray:
    """log p(y | x0) per restart, (R, N*, L), under the authors' predictive (module docstring), for inputs ``X``
    (N*, d); ``posteriors`` as :func:`fgraph.models.cmn.graph.posteriors` returns (the stick-breaking output)."""
    R, K, L, h, D = posterior_sizes(posteriors)
    iterations = check_count("iterations", iterations)
    xt = augmented_inputs(X, D)
    gate_mean, gate_cov = np.asarray(posteriors["gate_mean"], float), np.asarray(posteriors["gate_cov"], float)
    M, V = np.asarray(posteriors["M"], float), np.asarray(posteriors["V"], float)
    a, b = np.asarray(posteriors["a"], float), np.asarray(posteriors["b"], float)
    out_mean, out_cov = np.asarray(posteriors["out_mean"], float), np.asarray(posteriors["out_cov"], float)
    out_second = out_cov + out_mean[..., :, None] * out_mean[..., None, :]  # (R, L−1, H, H)
    log_weights = _gate_bounds(gate_mean, gate_cov, xt) + _expert_residuals(a, V, xt, h)
    log_weights = log_weights - logsumexp(log_weights, axis=-1, keepdims=True)  # (R, N, K)
    center = np.einsum("rkid,nd->rnki", M, xt)  # (R, N, K, h)
    precision = np.broadcast_to((a[:, :, None] / b)[:, None], center.shape)  # E[Λ_k] (diagonal)
    bounds = _output_bounds(center, precision, out_mean[:, None, None], out_second[:, None, None], iterations)
    log_output = bounds - logsumexp(bounds, axis=-1, keepdims=True)  # (R, N, K, L)
    return logsumexp(log_weights[..., None] + log_output, axis=2)
