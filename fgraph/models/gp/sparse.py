"""Sparse variational GP regression with a known noise variance per point (Titsias 2009), for N beyond a few
thousand: M inducing inputs ``Z`` (M, d), cost O(N M²) and memory O(N M) instead of O(N³) and O(N²).

With ``Q = K_fu K_uu⁻¹ K_uf`` (the Nyström approximation of ``K = K_ff``), ``V = diag(ṽ)`` and ``r = ỹ − m 1``,
the collapsed bound on the log evidence is

    𝓕 = log N(r | 0, Q + V) − ½ Σ_n (K_nn − Q_nn) / ṽ_n  ≤  log N(r | 0, K + V),

with equality when ``Z = X`` (then ``Q = K``; the exact regression on the graph,
:func:`~fgraph.models.gp.regression.gp_posterior`, is its oracle). Through ``K_uu = L Lᵀ``, ``A = L⁻¹ K_uf`` (M, N),
``D = V⁻¹`` and ``B = I + A D Aᵀ = L_B L_Bᵀ`` (M, M), with ``c = L_B⁻¹ A D r``:

    log N(r | 0, AᵀA + V) = −½ (N log 2π + Σ log ṽ_n) − Σ log (L_B)_ii − ½ (rᵀ D r − cᵀ c).

Predictions at ``x*`` (``a* = L⁻¹ K_u*``): ``μ* = m + a*ᵀ L_B⁻ᵀ c``, ``σ*² = k** − ‖a*‖² + ‖L_B⁻¹ a*‖²``.

**Gradients.** With ``β = (Q + V)⁻¹ r = D r − D Aᵀ B⁻¹ A D r`` (Woodbury), the derivative of 𝓕 in the symmetric
``Q`` is ``G = ½ (ββᵀ − (Q + V)⁻¹ + D)``, and ``Q = K_fu K_uu⁻¹ K_uf`` turns it into weights on the kernel
matrices that stay O(N M):

    ∂𝓕/∂K_uf = L⁻ᵀ [ (Aβ) βᵀ + (I − B⁻¹) A D ]                     (M, N)
    ∂𝓕/∂K_uu = −½ L⁻ᵀ [ (Aβ)(Aβ)ᵀ + (I − B⁻¹)(B − I) ] L⁻¹          (M, M)
    ∂𝓕/∂K_nn = −½ / ṽ_n,     ∂𝓕/∂m = 1ᵀβ,     ∂𝓕/∂ỹ = −β,
    ∂𝓕/∂ṽ_n = ½ (β_n² − [(Q + V)⁻¹]_nn) + ½ (K_nn − Q_nn) / ṽ_n²,

contracted with the kernel's gradients (:meth:`~fgraph.families.kernels.Kernel.contract_gradients`), and with its
gradients in the inputs for the inducing inputs ``Z``: ``∂𝓕/∂Z = Σ_n (∂𝓕/∂K_uf) ∂K_uf/∂Z + 2 Σ (∂𝓕/∂K_uu) ∂_1 K_uu/∂Z``
(:meth:`~fgraph.families.kernels.Kernel.contract_input_gradients`; ``K_uu`` is symmetric). Several
functions (a batch of B, e.g. one per class) share the kernel and ``Z``; their bounds and gradients add.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fgraph.errors import DataError, ModelError
from fgraph.families.gaussian_process import kernel_cholesky, solve_triangular
from fgraph.families.kernels import Kernel, check_inputs
from fgraph.families.mvnormal import LOG_2PI
from fgraph.models.gp.regression import EvidenceGradients, check_observations

__all__ = ["SparseGPPosterior", "sparse_gp_posterior", "sparse_log_evidence_gradients", "kmeans_inducing_inputs"]


@dataclass(frozen=True)
class SparseGPPosterior:
    """The sparse regression (module docstring): ``log_evidences`` (B,) are the collapsed bounds 𝓕_b, and
    :meth:`predict` has the signature of :meth:`fgraph.models.gp.regression.GPPosterior.predict`."""

    kernel: Kernel
    inputs: np.ndarray
    inducing: np.ndarray
    targets: np.ndarray
    variances: np.ndarray
    means: np.ndarray
    log_evidences: np.ndarray
    jitter: float
    _leftover: np.ndarray        # K_nn − Q_nn, (N,): the trace term's, read again by the gradient
    _factor: np.ndarray          # L, chol(K_uu + jitter I), (M, M)
    _projected: np.ndarray       # A = L⁻¹ K_uf, (M, N)
    _inner_factors: np.ndarray   # L_B, (B, M, M)
    _whitened: np.ndarray        # c, (B, M)

    @property
    def log_evidence(self) -> float:
        """The bound 𝓕 summed over the B functions (a lower bound on the exact log evidence)."""
        return float(np.sum(self.log_evidences))

    def predict(self, X, full_cov: bool = False) -> tuple:
        """The latent predictive at new inputs ``X`` (M*, d): means (B, M*) and variances (B, M*) (or covariances
        (B, M*, M*) with ``full_cov``)."""
        X = check_inputs(X, "X", self.inputs.shape[1])
        projected = solve_triangular(self._factor, self.kernel(self.inducing, X), lower=True)  # a*, (M, M*)
        means, spreads = [], []
        for factor, whitened, mean in zip(self._inner_factors, self._whitened, self.means):
            weights = solve_triangular(factor, whitened, lower=True, trans="T")
            means.append(mean + projected.T @ weights)
            spreads.append(solve_triangular(factor, projected, lower=True))
        spreads = np.array(spreads)
        if full_cov:
            cov = self.kernel(X) - projected.T @ projected
            return np.array(means), cov + np.swapaxes(spreads, -1, -2) @ spreads
        variance = self.kernel.diagonal(X) - np.sum(projected**2, axis=0) + np.sum(spreads**2, axis=-2)
        return np.array(means), np.maximum(variance, 0.0)


def kmeans_inducing_inputs(X, count: int, random_state=None) -> np.ndarray:
    """``count`` inducing inputs: the centres of k-means on ``X`` (scikit-learn's ``KMeans``, one start)."""
    from sklearn.cluster import KMeans

    X = check_inputs(X, "X")
    if not isinstance(count, (int, np.integer)) or isinstance(count, bool) or count < 1:
        raise ModelError(f"the number of inducing inputs must be a whole number ≥ 1, got {count!r}")
    if count > X.shape[0]:
        raise ModelError(f"{count} inducing inputs for {X.shape[0]} points: use at most N = {X.shape[0]} "
                         "(with M = N the exact GP costs the same)")
    if count == X.shape[0]:
        return X.copy()
    return KMeans(count, n_init=1, random_state=random_state).fit(X).cluster_centers_


def sparse_gp_posterior(X, targets, variances, kernel: Kernel, inducing, mean=0.0, jitter="auto"
                        ) -> SparseGPPosterior:
    """The collapsed sparse regression (module docstring). ``X`` (N, d); ``inducing`` Z (M, d) with M ≤ N;
    ``targets``, ``variances`` (N,) or (B, N); ``mean`` a number or (B,)."""
    if not isinstance(kernel, Kernel):
        raise ModelError(f"kernel must be a kernel of fgraph.families.kernels, got {type(kernel).__name__}")
    X = check_inputs(X, "X", kernel.input_dimension)
    Z = check_inputs(inducing, "the inducing inputs", X.shape[1])
    if Z.shape[0] > X.shape[0]:
        raise DataError(f"{Z.shape[0]} inducing inputs for {X.shape[0]} points: use at most N")
    targets, variances = check_observations(targets, variances, X.shape[0])
    count, size = targets.shape
    means = np.broadcast_to(np.asarray(mean, dtype=float), (count,)).copy()
    factor, jitter_used = kernel_cholesky(kernel(Z), "the inducing inputs' kernel matrix", jitter)
    projected = solve_triangular(factor, kernel(Z, X), lower=True)  # A, (M, N)
    diagonal = kernel.diagonal(X)
    leftover = diagonal - np.sum(projected**2, axis=0)  # K_nn − Q_nn ≥ 0 up to rounding
    inner_factors, whitened, bounds = [], [], []
    identity = np.eye(Z.shape[0])
    for b in range(count):
        precision = 1.0 / variances[b]
        residual = targets[b] - means[b]
        scaled = projected * np.sqrt(precision)  # A D^½: the product with its own transpose is one syrk
        inner = identity + scaled @ scaled.T
        inner_factor, _ = kernel_cholesky(inner, "I + A V⁻¹ Aᵀ", 0.0)
        c = solve_triangular(inner_factor, projected @ (precision * residual), lower=True)
        log_normal = (-0.5 * (size * LOG_2PI + np.sum(np.log(variances[b]))) - np.sum(np.log(np.diag(inner_factor)))
                      - 0.5 * (residual @ (precision * residual) - c @ c))
        bounds.append(log_normal - 0.5 * np.sum(leftover * precision))
        inner_factors.append(inner_factor)
        whitened.append(c)
    return SparseGPPosterior(kernel, X, Z, targets, variances, means, np.array(bounds), jitter_used, leftover, factor,
                             projected, np.array(inner_factors), np.array(whitened))


def sparse_log_evidence_gradients(posterior: SparseGPPosterior, inducing: bool = False) -> EvidenceGradients:
    """The gradients of ``posterior.log_evidence`` (module docstring), O(B N M²); the one in the inducing inputs
    (another pass over the N × M kernel matrix) only if ``inducing``."""
    factor, projected = posterior._factor, posterior._projected
    size = projected.shape[0]
    identity = np.eye(size)
    weights_uf = np.zeros(projected.shape)
    weights_uu = np.zeros((size, size))
    weights_diagonal = np.zeros(projected.shape[1])
    mean_gradient, target_gradient, variance_gradient = [], [], []
    leftover = posterior._leftover
    for b, inner_factor in enumerate(posterior._inner_factors):
        precision = 1.0 / posterior.variances[b]
        residual = posterior.targets[b] - posterior.means[b]
        weighted = projected * precision  # A D, (M, N)
        half_solved = solve_triangular(inner_factor, weighted, lower=True)  # L_B⁻¹ A D
        solved = solve_triangular(inner_factor, half_solved, lower=True, trans="T")  # B⁻¹ A D
        beta = precision * residual - solved.T @ (weighted @ residual)
        projected_beta = projected @ beta  # Aβ, (M,)
        weights_uf += np.outer(projected_beta, beta) + weighted - solved  # (Aβ)βᵀ + (I − B⁻¹) A D
        inner = inner_factor @ inner_factor.T  # B, (M, M)
        inner_inverse = solve_triangular(inner_factor, solve_triangular(inner_factor, identity, lower=True),
                                         lower=True, trans="T")
        weights_uu -= 0.5 * (np.outer(projected_beta, projected_beta)
                             + (identity - inner_inverse) @ (inner - identity))
        weights_diagonal += -0.5 * precision
        inverse_diagonal = precision - np.sum(half_solved**2, axis=0)  # diag (Q + V)⁻¹ = d − diag(D Aᵀ B⁻¹ A D)
        variance_gradient.append(0.5 * (beta**2 - inverse_diagonal) + 0.5 * leftover * precision**2)
        mean_gradient.append(np.sum(beta))
        target_gradient.append(-beta)
    # back from the whitened A = L⁻¹ K_uf to the kernel matrices: multiply by L⁻ᵀ on the left (and L⁻¹ on the right)
    weights_uf = solve_triangular(factor, weights_uf, lower=True, trans="T")
    weights_uu = solve_triangular(factor, solve_triangular(factor, weights_uu, lower=True, trans="T").T,
                                  lower=True, trans="T").T
    kernel, X, Z = posterior.kernel, posterior.inputs, posterior.inducing
    kernel_gradient = (kernel.contract_gradients(Z, X, weights_uf) + kernel.contract_gradients(Z, None, weights_uu)
                       + kernel.contract_diagonal_gradients(X, weights_diagonal))
    inducing_gradient = None
    if inducing:
        inducing_gradient = (kernel.contract_input_gradients(Z, X, weights_uf)
                             + 2.0 * kernel.contract_input_gradients(Z, None, weights_uu))
    return EvidenceGradients(kernel_gradient, np.array(mean_gradient), np.array(target_gradient),
                             np.array(variance_gradient), inducing_gradient)
