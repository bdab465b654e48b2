"""Gaussian-process regression with a known noise variance per point, by belief propagation on the graph.

The model, for one or several latent functions (a batch of B, e.g. one per class, sharing the kernel)::

    f_b = f_b(X) ~ N(m_b 1, K),        K = k(X, X)             (GaussianProcess)
    ỹ_b        ~ N(f_b, diag(ṽ_b))                              (DiagonalNormal, observed)

Its two nodes form a tree, so one sweep of belief propagation gives the exact posterior of ``f_b`` at the
inputs and the exact log evidence ``Σ_b log N(ỹ_b | m_b 1, K + diag(ṽ_b))`` (the scale factor of the belief,
:mod:`fgraph.families.gaussian_process`). Everything else here reads that belief:

* predictions at new inputs ``X*``: ``μ* = m + K*ᵀ α``, ``σ*² = k(x*, x*) − ‖L⁻¹ K*‖²`` with ``α`` and ``L``
  (``K + V = L Lᵀ``) kept in the belief (Rasmussen and Williams 2006, Algorithm 2.1);
* the gradient of the log evidence ``𝓛`` for hyperparameter learning (R&W eq. 5.9), with
  ``W_b = ½ (α_b α_bᵀ − (K + V_b)⁻¹)``:

      ∂𝓛/∂θ_p   = Σ_b Σ_ij (W_b)_ij ∂K_ij/∂θ_p      (θ the kernel's log hyperparameters)
      ∂𝓛/∂m_b   = 1ᵀ α_b                               (a constant prior mean per function)
      ∂𝓛/∂ỹ_bn  = −α_bn,     ∂𝓛/∂ṽ_bn = (W_b)_nn       (the pseudo-observations, through α_ε)

Shapes: ``X`` (N, d); ``targets``, ``variances`` (N,) or (B, N); ``mean`` a number or (B,).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import fgraph as fg
from fgraph.errors import DataError, ModelError
from fgraph.families.gaussian_process import GaussianProcessPosterior
from fgraph.families.kernels import Kernel, check_inputs
from fgraph.nodes import DiagonalNormal, GaussianProcess

__all__ = ["GPPosterior", "gp_posterior", "log_evidence_gradients", "EvidenceGradients", "check_observations"]


def check_observations(targets, variances, size: int) -> tuple:
    """``(targets, variances)`` as float arrays of shape ``(B, N)`` (B = 1 for vectors), or a named error."""
    targets = np.asarray(targets, dtype=float)
    variances = np.asarray(variances, dtype=float)
    if targets.ndim == 1:
        targets = targets[None, :]
    if targets.ndim != 2 or targets.shape[-1] != size:
        raise DataError(f"targets must have shape (N,) or (B, N) with N = {size} inputs, got {targets.shape}")
    variances = np.broadcast_to(variances, targets.shape) if variances.ndim <= targets.ndim else variances
    if variances.shape != targets.shape:
        raise DataError(f"variances must broadcast to the targets' shape {targets.shape}, got {variances.shape}")
    if not np.all(np.isfinite(targets)):
        raise DataError("targets contain NaN or infinite values")
    if not (np.all(np.isfinite(variances)) and np.all(variances > 0.0)):
        raise DataError("variances must be positive and finite (the noise variance of each observation)")
    return targets, variances


@dataclass(frozen=True)
class GPPosterior:
    """The fitted regression: the belief of ``f`` at the inputs, its evidence, and what predictions need.

    ``targets``, ``variances`` (B, N) are the observations; ``belief`` is the
    :class:`~fgraph.families.gaussian_process.GaussianProcessPosterior` of shape ``(B,) + (N,)``;
    ``log_evidence`` the total over the B functions, ``log_evidences`` (B,) each one.
    """

    kernel: Kernel
    inputs: np.ndarray
    targets: np.ndarray
    variances: np.ndarray
    means: np.ndarray
    belief: GaussianProcessPosterior
    log_evidences: np.ndarray

    @property
    def log_evidence(self) -> float:
        return float(np.sum(self.log_evidences))

    def predict(self, X, full_cov: bool = False) -> tuple:
        """The latent predictive ``N(f* | μ*, σ*²)`` at new inputs ``X`` (M, d): ``μ*`` (B, M) and ``σ*²`` (B, M)
        (or the covariance (B, M, M) with ``full_cov``)."""
        X = check_inputs(X, "X", self.inputs.shape[1])
        cross = self.kernel(self.inputs, X)  # K(X, X*), (N, M)
        mean = self.means[:, None] + self.belief.weights @ cross
        whitened = self.belief.whiten(np.broadcast_to(cross, self.belief.batch_shape + cross.shape))
        if full_cov:
            return mean, self.kernel(X) - np.swapaxes(whitened, -1, -2) @ whitened
        variance = self.kernel.diagonal(X) - np.sum(whitened**2, axis=-2)
        return mean, np.maximum(variance, 0.0)


def gp_posterior(X, targets, variances, kernel: Kernel, mean=0.0, jitter="auto") -> GPPosterior:
    """Build the graph (module docstring), run belief propagation, and return the :class:`GPPosterior`.

    ``X`` (N, d); ``targets`` and ``variances`` (N,) or (B, N); ``mean`` a number or one per function (B,).
    """
    if not isinstance(kernel, Kernel):
        raise ModelError(f"kernel must be a kernel of fgraph.families.kernels, got {type(kernel).__name__}")
    X = check_inputs(X, "X", kernel.input_dimension)
    targets, variances = check_observations(targets, variances, X.shape[0])
    count = targets.shape[0]
    means = np.broadcast_to(np.asarray(mean, dtype=float), (count,)).copy()
    with fg.Model() as model:
        f = GaussianProcess("f", X, kernel, mean=np.repeat(means[:, None], X.shape[0], axis=1), jitter=jitter)
        DiagonalNormal("y", mean=f, variances=variances, observed=targets)
    result = fg.infer(model, algorithm="bp")
    belief = result.marginal("f")
    log_evidences = np.asarray(result.evidence_per_variable()["f"], dtype=float).reshape(count)
    return GPPosterior(kernel, X, targets, variances, means, belief, log_evidences)


@dataclass(frozen=True)
class EvidenceGradients:
    """The gradient of the log evidence (module docstring): ``kernel`` (P,) in the kernel's log hyperparameters,
    ``means`` (B,), ``targets`` and ``variances`` (B, N), and for the sparse GP ``inducing`` (M, d), in the
    inducing inputs."""

    kernel: np.ndarray
    means: np.ndarray
    targets: np.ndarray
    variances: np.ndarray
    inducing: np.ndarray | None = None


def log_evidence_gradients(posterior: GPPosterior) -> EvidenceGradients:
    """The gradients of ``posterior.log_evidence`` (module docstring). Cost: one ``(K + V_b)⁻¹`` per function (N³)."""
    belief = posterior.belief
    alpha = belief.weights  # (B, N)
    size = alpha.shape[-1]
    inverse = belief.solve(np.broadcast_to(np.eye(size), belief.batch_shape + (size, size)))
    weights = 0.5 * (alpha[:, :, None] * alpha[:, None, :] - inverse)  # W_b, (B, N, N)
    kernel_gradient = posterior.kernel.contract_gradients(posterior.inputs, None, weights.sum(axis=0))
    return EvidenceGradients(kernel_gradient, alpha.sum(axis=-1), -alpha,
                             np.diagonal(weights, axis1=-2, axis2=-1).copy())
