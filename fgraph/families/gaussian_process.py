"""Gaussian messages over the values of a function at N inputs, in the form Gaussian-process regression needs.

Three families, all multivariate normals over ``f ∈ R^N`` (event shape ``(N,)``, any batch shape):

:class:`MvNormalDiagonal`
    ``N(f | μ, diag(v))``: independent coordinates. The message of N independent observations
    ``ỹ_n ~ N(f_n, v_n)`` towards ``f`` (the pseudo-observations of a classifier, the noisy targets of a
    regression), stored as two vectors.
:class:`GaussianProcessPrior`
    ``N(f | m, K)`` with ``K = k(X, X)`` a kernel matrix: the message a Gaussian-process prior sends.
:class:`GaussianProcessPosterior`
    Their product, computed without ``K⁻¹`` (Rasmussen and Williams 2006, Algorithm 2.1). With
    ``S = K + V`` (V the observations' covariance) and ``S = L Lᵀ``:

        α = S⁻¹ (ỹ − m),                 μ = m + K α,
        Σ = K − K S⁻¹ K = K − Aᵀ A,      A = L⁻¹ K,
        log Z = log N(ỹ | m, S) = −½ (ỹ − m)ᵀ α − Σ_n log L_nn − N/2 log 2π.

    ``log Z`` is the log marginal likelihood of the observations, added to the log-scale, so the model
    evidence comes out of the product as for every other pair of messages. ``μ`` and ``log Z`` cost one
    Cholesky factorisation (N³/3) and two triangular solves; ``Σ`` (and its diagonal) needs ``A``, another
    N³ — it is computed when asked for, not before. Predictions at new inputs need only ``L`` and ``α``
    (:meth:`GaussianProcessPosterior.solve`).

A kernel matrix is positive semi-definite in exact arithmetic but often singular to rounding (close
inputs, long lengthscales). :func:`kernel_cholesky` factors it with the smallest jitter ``ε`` on the
diagonal, from a fixed ladder, that succeeds, and returns ``ε``; the families keep it (``.jitter``), a
positive jitter chosen automatically raises a :class:`~fgraph.errors.JitterWarning`, and a matrix that
fails at the largest jitter is an error naming it.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from fgraph.errors import JitterWarning, ModelError
from fgraph.families.base import as_float_array, broadcast_params
from fgraph.families.mvnormal import LOG_2PI, MultivariateNormal, MvNormalMeanCovariance

__all__ = [
    "MvNormalDiagonal", "GaussianProcessPrior", "GaussianProcessPosterior", "kernel_cholesky", "condition", "widened",
    "solve_triangular",
    "JITTER_LADDER",
]

#: jitters tried by ``kernel_cholesky(..., jitter="auto")``, relative to the mean of the diagonal
JITTER_LADDER = (0.0, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6)


def kernel_cholesky(matrix: np.ndarray, name: str, jitter="auto") -> tuple:
    """The lower Cholesky factor of ``matrix + ε I`` (shape ``(N, N)``) and the jitter ``ε`` used.

    ``jitter="auto"`` tries ``ε = c · mean(diag(matrix))`` for c in :data:`JITTER_LADDER` and takes the
    first that factors, warning (:class:`~fgraph.errors.JitterWarning`) when it is positive; a number
    ``ε ≥ 0`` is used as given. A matrix that does not factor raises a ``ModelError`` naming ``name``.
    """
    scale = float(np.mean(np.diagonal(matrix)))
    if not math.isfinite(scale):
        raise ModelError(f"{name}: the matrix has values that are not finite; check the kernel's hyperparameters")
    if jitter == "auto":
        candidates = [c * abs(scale) for c in JITTER_LADDER]
    else:
        value = float(jitter)
        if not (math.isfinite(value) and value >= 0.0):
            raise ModelError(f"{name}: jitter must be a number ≥ 0 or 'auto', got {jitter!r}")
        candidates = [value]
    identity_diagonal = np.diag_indices(matrix.shape[-1])
    for epsilon in candidates:
        shifted = matrix
        if epsilon:
            shifted = matrix.copy()
            shifted[identity_diagonal] += epsilon
        try:
            factor = np.linalg.cholesky(shifted)
        except np.linalg.LinAlgError:
            continue
        if epsilon and jitter == "auto":
            warnings.warn(f"{name}: the matrix is not positive definite to rounding; factored with jitter "
                          f"{epsilon:.3g} added to its diagonal ({epsilon / abs(scale):.0e} of its mean)",
                          JitterWarning, stacklevel=3)
        return factor, epsilon
    raise ModelError(
        f"{name} is not positive definite even with jitter {candidates[-1]:.3g} on its diagonal: check the "
        "kernel's hyperparameters (a lengthscale far longer than the inputs' spread, a zero variance) or "
        "duplicated inputs without observation noise")


class MvNormalDiagonal(MultivariateNormal):
    """``N(f | μ, diag(v))``: ``mean`` and ``variances`` of shape ``batch_shape + (N,)``, variances > 0."""

    def __init__(self, mean, variances, log_scale=None, check=True):
        mean = as_float_array(mean, "mean")
        variances = as_float_array(variances, "variances")
        if check:
            if np.ndim(mean) < 1 or np.shape(variances)[-1:] != np.shape(mean)[-1:]:
                raise ModelError(f"MvNormalDiagonal: mean and variances must be vectors of the same length, "
                                 f"got shapes {np.shape(mean)} and {np.shape(variances)}")
            if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(variances)) and np.all(variances > 0.0)):
                raise ModelError("MvNormalDiagonal: the mean must be finite and the variances positive and finite")
        self._batch_shape, (self._mean, self._variances) = broadcast_params((mean, variances), (1, 1))
        self._event_shape = np.shape(mean)[-1:]
        self._set_log_scale(log_scale)

    @property
    def mean(self):
        return self._mean

    def checked_parameters(self):
        return (self._mean, self._variances)

    @property
    def variances(self):
        """``v``, shape ``batch_shape + (N,)``."""
        return self._variances

    @property
    def var(self):
        return self._variances

    @property
    def cov(self):
        return self.derived("_derived_cov", lambda: self._variances[..., :, None] * np.eye(self.dim))

    @property
    def precision(self):
        return self.derived("_derived_precision", lambda: np.eye(self.dim) / self._variances[..., :, None])

    @property
    def weighted_mean(self):
        return self._mean / self._variances

    @property
    def second_moment(self):
        return self.cov + self._mean[..., :, None] * self._mean[..., None, :]

    def log_det_cov(self):
        return np.sum(np.log(self._variances), axis=-1)

    def _mahalanobis(self, centred):
        return np.sum(centred**2 / self._variances, axis=-1)

    def _colour(self, white):
        return white * np.sqrt(self._variances)


class GaussianProcessPrior(MvNormalMeanCovariance):
    """``N(f | m, K)``: ``mean`` ``batch_shape + (N,)``, ``cov`` the kernel matrix ``batch_shape + (N, N)``.

    ``jitter`` is the one its own factorisation (densities, samples) adds to the diagonal of ``K``
    (:func:`kernel_cholesky`); the product with observations factors ``K + V`` instead.
    """

    def __init__(self, mean, cov, log_scale=None, jitter="auto", name: str = "the kernel matrix"):
        super().__init__(mean, cov, log_scale=log_scale, check=False)
        self._jitter_setting = jitter
        self._name = name

    def checked_parameters(self):
        # the moments themselves: the natural parameters would need K⁻¹, which nothing else asks for
        return (self._mean, self._cov)

    @property
    def jitter_setting(self):
        """The jitter asked for (a number or ``"auto"``): the product with observations uses it too."""
        return self._jitter_setting

    @property
    def name(self) -> str:
        return self._name

    def _factor(self):
        flat = self._cov.reshape((-1,) + self._cov.shape[-2:])
        results = [kernel_cholesky(matrix, self._name, self._jitter_setting) for matrix in flat]
        factor = np.stack([r[0] for r in results]).reshape(self._cov.shape)
        return factor, max(r[1] for r in results)

    @property
    def _cov_cholesky(self):
        return self.derived("_derived_factor", self._factor)[0]

    @property
    def jitter(self) -> float:
        """The jitter added to the diagonal of ``K`` to factor it (the largest over the batch)."""
        return self.derived("_derived_factor", self._factor)[1]


class GaussianProcessPosterior(MultivariateNormal):
    """The product of a :class:`GaussianProcessPrior` ``N(m, K)`` and observations ``N(ỹ | f, V)`` (module docstring).

    Built by :func:`condition`; stores ``K``, ``L = chol(K + V)`` and ``α``, computes ``μ`` at once and
    ``Σ`` on demand. Batch axes (e.g. one latent function per class) are handled matrix by matrix.
    """

    def __init__(self, prior_mean, prior_cov, factor, weights, jitter, log_scale=None):
        self._batch_shape = np.shape(weights)[:-1]
        self._event_shape = np.shape(weights)[-1:]
        self._prior_mean = np.broadcast_to(prior_mean, np.shape(weights))
        self._prior_cov = np.broadcast_to(prior_cov, self._batch_shape + np.shape(prior_cov)[-2:])
        self._factor_of_sum = factor
        self._weights = weights
        self._jitter = jitter
        self._set_log_scale(log_scale)

    def checked_parameters(self):
        return (self._weights, self._factor_of_sum)

    @property
    def jitter(self) -> float:
        """The jitter added to the diagonal of ``K + V`` to factor it (0 unless V is near zero somewhere)."""
        return self._jitter

    @property
    def weights(self) -> np.ndarray:
        """``α = (K + V)⁻¹ (ỹ − m)``, shape ``batch_shape + (N,)``: the predictive mean at new inputs is
        ``m* + K*ᵀ α``."""
        return self._weights

    def log_det_evidence_cov(self) -> np.ndarray:
        """``log|K + V|``, shape ``batch_shape``: the covariance of the observations under the prior."""
        return 2.0 * np.sum(np.log(np.diagonal(self._factor_of_sum, axis1=-2, axis2=-1)), axis=-1)

    def solve(self, right_hand_side: np.ndarray) -> np.ndarray:
        """``(K + V)⁻¹ B`` for ``B`` of shape ``batch_shape + (N, M)``, by two triangular solves."""
        return _batched(lambda L, B: _cho_solve(L, B), self._factor_of_sum, right_hand_side)

    def whiten(self, right_hand_side: np.ndarray) -> np.ndarray:
        """``L⁻¹ B`` with ``K + V = L Lᵀ``, for ``B`` of shape ``batch_shape + (N, M)``.

        The predictive variance at new inputs is ``k(x*, x*) − ‖L⁻¹ K(X, x*)‖²``.
        """
        return _batched(lambda L, B: solve_triangular(L, B, lower=True),
                        self._factor_of_sum, right_hand_side)

    @property
    def mean(self):
        return self.derived("_derived_mean", lambda: self._prior_mean + np.einsum(
            "...ij,...j->...i", self._prior_cov, self._weights))

    def _whitened_prior(self):
        return self.whiten(self._prior_cov)  # A = L⁻¹ K

    @property
    def cov(self):
        def compute():
            whitened = self.derived("_derived_whitened", self._whitened_prior)
            cov = self._prior_cov - np.swapaxes(whitened, -1, -2) @ whitened
            return 0.5 * (cov + np.swapaxes(cov, -1, -2))
        return self.derived("_derived_cov", compute)

    @property
    def var(self):
        """The marginal variances ``diag(K) − Σ_i A_in²``, shape ``batch_shape + (N,)``, without forming ``Σ``."""
        def compute():
            whitened = self.derived("_derived_whitened", self._whitened_prior)
            return np.diagonal(self._prior_cov, axis1=-2, axis2=-1) - np.sum(whitened**2, axis=-2)
        return self.derived("_derived_var", compute)

    @property
    def _cov_cholesky(self):
        return self.derived("_derived_cov_factor", lambda: kernel_cholesky(self.cov, "the posterior covariance")[0])

    @property
    def weighted_mean(self):
        return self.derived("_derived_weighted_mean", lambda: _batched(_cho_solve, self._cov_cholesky,
                                                                        self.mean[..., None])[..., 0])

    def log_det_cov(self):
        return 2.0 * np.sum(np.log(np.diagonal(self._cov_cholesky, axis1=-2, axis2=-1)), axis=-1)

    def _mahalanobis(self, centred):
        whitened = _batched(lambda L, b: solve_triangular(L, b, lower=True),
                            self._cov_cholesky, centred[..., None])[..., 0]
        return np.sum(whitened**2, axis=-1)

    def _colour(self, white):
        return np.einsum("...ij,...j->...i", self._cov_cholesky, white)


def solve_triangular(factor: np.ndarray, right_hand_side: np.ndarray, **options) -> np.ndarray:
    """scipy's triangular solve (LAPACK trtrs), imported on first use: ``import fgraph`` does not load scipy."""
    from scipy.linalg import solve_triangular as solve

    return solve(factor, right_hand_side, check_finite=False, **options)


def _cho_solve(factor: np.ndarray, right_hand_side: np.ndarray) -> np.ndarray:
    forward = solve_triangular(factor, right_hand_side, lower=True)
    return solve_triangular(factor, forward, lower=True, trans="T")


def _batched(function, factors: np.ndarray, right_hand_side: np.ndarray) -> np.ndarray:
    """``function(L, B)`` for each matrix of a batch of factors ``(..., N, N)`` and right-hand sides ``(..., N, M)``."""
    batch = factors.shape[:-2]
    if not batch:
        return function(factors, right_hand_side)
    right_hand_side = np.broadcast_to(right_hand_side, batch + right_hand_side.shape[-2:])
    result = np.empty(batch + right_hand_side.shape[-2:])
    for index in np.ndindex(*batch):
        result[index] = function(factors[index], right_hand_side[index])
    return result


def condition(prior: GaussianProcessPrior, observations: MultivariateNormal) -> GaussianProcessPosterior:
    """The normalised product ``N(f | m, K) N(f | ỹ, V) / Z`` with ``log Z = log N(ỹ | m, K + V)`` (module docstring).

    ``observations`` is any proper multivariate normal message (a :class:`MvNormalDiagonal` adds its
    variances to the diagonal without forming ``V``). The result's log-scale is the sum of both log-scales
    and ``log Z``.
    """
    targets = observations.mean
    batch = np.broadcast_shapes(prior.batch_shape, observations.batch_shape)
    size = prior.event_shape[0]
    if observations.event_shape != prior.event_shape:
        raise ModelError(f"{prior.name}: observations of {observations.event_shape[0]} values for a process at "
                         f"{size} inputs")
    prior_mean = np.broadcast_to(prior.mean, batch + (size,))
    prior_cov = np.broadcast_to(prior.cov, batch + (size, size))
    residual = np.broadcast_to(targets, batch + (size,)) - prior_mean
    diagonal = isinstance(observations, MvNormalDiagonal)
    noise = np.broadcast_to(observations.variances if diagonal else observations.cov,
                            batch + ((size,) if diagonal else (size, size)))
    factors = np.empty(batch + (size, size))
    weights = np.empty(batch + (size,))
    log_z = np.empty(batch)
    jitter = 0.0
    for index in np.ndindex(*batch):
        if diagonal:
            total = prior_cov[index].copy()
            total[np.diag_indices(size)] += noise[index]
        else:
            total = prior_cov[index] + noise[index]
        factor, used = kernel_cholesky(total, f"{prior.name} plus the observations' covariance", prior.jitter_setting)
        jitter = max(jitter, used)
        weights[index] = _cho_solve(factor, residual[index])
        log_z[index] = (-0.5 * residual[index] @ weights[index] - np.sum(np.log(np.diagonal(factor)))
                        - 0.5 * size * LOG_2PI)
        factors[index] = factor
    log_scale = prior.log_scale + observations.log_scale + (log_z if batch else log_z[()])
    return GaussianProcessPosterior(prior_mean, prior_cov, factors if batch else factors[()],
                                    weights if batch else weights[()], jitter, log_scale)


def widened(message: MultivariateNormal, variances) -> MultivariateNormal:
    """``N(μ, Σ + diag(v))``: a message with independent noise of variances ``v`` (shape ``(..., N)``) added."""
    if isinstance(message, MvNormalDiagonal):
        return MvNormalDiagonal(message.mean, message.variances + variances, check=False)
    cov = np.array(message.cov, dtype=float)
    size = cov.shape[-1]
    cov[..., range(size), range(size)] += variances
    return MvNormalMeanCovariance(message.mean, cov, check=False)
