"""Wishart distributions over symmetric positive-definite ``d x d`` matrices.

The density with ``df`` degrees of freedom (> d - 1) and scale matrix ``S``
(SPD) is

    p(X) = |X|**((df - d - 1) / 2) exp(-tr(S^{-1} X) / 2)
           / (2**(df d / 2) |S|**(df / 2) Gamma_d(df / 2)),

with ``Gamma_d`` the multivariate gamma function. Natural parameters are
``eta = (-S^{-1} / 2, (df - d - 1) / 2)``, sufficient statistics
``T(X) = (X, log|X|)`` and base measure ``h(X) = 1``. In terms of ``eta``
the log-partition is ``A = -(df / 2) log|-eta_0| + log Gamma_d(df / 2)``
with ``df / 2 = eta_1 + (d + 1) / 2``.
"""
from __future__ import annotations

from functools import cached_property

import numpy as np

from fgraph.errors import ModelError
from fgraph.families.base import ExponentialFamily, as_float_array, broadcast_params, check_finite, expectation
from fgraph.families.linalg import (
    check_square,
    check_symmetric,
    cholesky,
    cholesky_inverse,
    cholesky_log_det,
    cholesky_solve,
)
from fgraph.families.special import digamma, gammaln

LOG_2 = float(np.log(2.0))
LOG_PI = float(np.log(np.pi))


def log_multivariate_gamma(a, dim: int):
    """``log Gamma_d(a) = d(d-1)/4 log(pi) + sum_{j<d} gammaln(a - j/2)``, elementwise in ``a``.

    ``scipy.special.multigammaln`` raises if any element of ``a`` is at or below
    ``(d - 1) / 2``, aborting a whole batch (including log-partitions probed
    outside the domain); this is the same function evaluated elementwise,
    with the domain left to the constructor's ``df`` check.
    """
    a = np.asarray(a, dtype=float)
    return 0.25 * dim * (dim - 1) * LOG_PI + gammaln(a[..., None] - 0.5 * np.arange(dim)).sum(axis=-1)


def multivariate_digamma(a, dim: int):
    """``d/da log Gamma_d(a) = sum_{j<d} digamma(a - j/2)``, elementwise in ``a``."""
    a = np.asarray(a, dtype=float)
    return digamma(a[..., None] - 0.5 * np.arange(dim)).sum(axis=-1)


class Wishart(ExponentialFamily):
    """Distribution (a family of messages and marginals): Wishart with ``df`` (shape ``batch_shape``, > d - 1) and ``scale`` (shape ``batch_shape + (d, d)``, SPD).

    ``mean = df * scale``.
    """

    event_ndim = 2
    natural_event_ndims = (2, 0)

    def __init__(self, df, scale, log_scale=None, check=True):
        df = as_float_array(df, "df")
        scale = as_float_array(scale, "scale")
        if check:
            check_square(scale, "scale")
            check_finite(scale, "scale")
            check_finite(df, "df")
            dim = scale.shape[-1]
            if np.any(df <= dim - 1):
                raise ModelError(
                    f"df must be greater than d - 1 = {dim - 1} for {dim}x{dim} matrices, got minimum {np.min(df)!r}"
                )
            check_symmetric(scale, "scale")
            factor = cholesky(scale, "scale")
        self._batch_shape, (self._df, self._scale) = broadcast_params((df, scale), (0, 2))
        self._event_shape = scale.shape[-2:]
        self._set_log_scale(log_scale)
        if check:
            # Keep the factor validation computed; it overrides the cached property.
            self._scale_cholesky = np.broadcast_to(factor, self._scale.shape)

    @property
    def dim(self) -> int:
        return self._event_shape[0]

    # ---- parameters ----
    @property
    def df(self):
        return self._df

    @property
    def scale(self):
        return self._scale

    @cached_property
    def _scale_cholesky(self):
        return np.linalg.cholesky(self._scale)

    @cached_property
    def inverse_scale(self):
        """``S^{-1}``, shape ``batch_shape + (d, d)``; it is (minus twice) a natural parameter."""
        return cholesky_inverse(self._scale_cholesky)

    def _log_det_scale(self):
        return cholesky_log_det(self._scale_cholesky)

    # ---- moments ----
    @expectation
    def mean(self):
        return self._df[..., None, None] * self._scale

    @property
    def var(self):
        """Elementwise variances ``df (S_ij**2 + S_ii S_jj)``, shape ``batch_shape + (d, d)``."""
        diagonal = np.diagonal(self._scale, axis1=-2, axis2=-1)
        return self._df[..., None, None] * (self._scale**2 + diagonal[..., :, None] * diagonal[..., None, :])

    @property
    def mode(self):
        """``(df - d - 1) S``; zero where ``df < d + 1``, as the density then diverges at singular matrices."""
        return np.maximum(self._df - self.dim - 1.0, 0.0)[..., None, None] * self._scale

    @expectation
    def mean_logdet(self):
        """``E[log|X|] = sum_{i=1}^d digamma((df + 1 - i) / 2) + d log 2 + log|S|``, shape ``batch_shape``."""
        return multivariate_digamma(0.5 * self._df, self.dim) + self.dim * LOG_2 + self._log_det_scale()

    @expectation
    def mean_inverse(self):
        """``E[X^{-1}] = S^{-1} / (df - d - 1)``; infinite where ``df <= d + 1``."""
        excess = self._df - self.dim - 1.0
        has_mean = (excess > 0.0)[..., None, None]
        # The inner where keeps the division away from zero so no warning is raised.
        divisor = np.where(has_mean, excess[..., None, None], 1.0)
        return np.where(has_mean, self.inverse_scale / divisor, np.inf)

    # ---- exponential family ----
    def natural_parameters(self):
        return (-0.5 * self.inverse_scale, 0.5 * (self._df - self.dim - 1.0))

    @classmethod
    def from_natural(cls, eta, log_scale=None):
        minus_half_inverse_scale, half_excess_df = eta
        dim = minus_half_inverse_scale.shape[-1]
        inverse_scale = -2.0 * minus_half_inverse_scale
        scale = cholesky_inverse(np.linalg.cholesky(inverse_scale))
        result = Wishart(2.0 * half_excess_df + dim + 1.0, scale, log_scale=log_scale, check=False)
        # The natural parameter already is the inverse scale; keeping it (it overrides
        # the cached property) saves an inversion and keeps round trips exact.
        result.inverse_scale = np.broadcast_to(inverse_scale, result.scale.shape)
        return result

    @classmethod
    def log_partition_of(cls, eta):
        minus_half_inverse_scale, half_excess_df = eta
        dim = minus_half_inverse_scale.shape[-1]
        half_df = half_excess_df + 0.5 * (dim + 1)
        log_det = cholesky_log_det(np.linalg.cholesky(-minus_half_inverse_scale))
        return -half_df * log_det + log_multivariate_gamma(half_df, dim)

    @classmethod
    def log_base_measure_of(cls, eta):
        return 0.0

    def expected_statistics(self):
        return (self.mean, self.mean_logdet)

    def _log_normaliser(self):
        """``log(2**(df d / 2) |S|**(df / 2) Gamma_d(df / 2))``, shape ``batch_shape``."""
        df, dim = self._df, self.dim
        return 0.5 * df * (dim * LOG_2 + self._log_det_scale()) + log_multivariate_gamma(0.5 * df, dim)

    # ---- densities ----
    def entropy(self):
        # -E[log p] with E[tr(S^{-1} X)] = df d and E[log|X|] = mean_logdet.
        df, dim = self._df, self.dim
        return self._log_normaliser() + 0.5 * df * dim - 0.5 * (df - dim - 1.0) * self.mean_logdet

    def logpdf(self, x):
        """Log density at ``x`` of shape ``(..., d, d)``; ``-inf`` where ``x`` is not positive definite.

        ``x`` is taken to be symmetric (only its lower triangle is read by the
        eigenvalue routine).
        """
        x = np.asarray(x, dtype=float)
        eigenvalues = np.linalg.eigvalsh(x)
        positive_definite = np.all(eigenvalues > 0.0, axis=-1)
        trace = np.trace(cholesky_solve(self._scale_cholesky, x), axis1=-2, axis2=-1)
        # Singular or indefinite x gives log|x| = -inf or NaN (and 0 * -inf when
        # df = d + 1); the where below replaces those entries.
        with np.errstate(divide="ignore", invalid="ignore"):
            log_det_x = np.sum(np.log(eigenvalues), axis=-1)
            density = 0.5 * (self._df - self.dim - 1.0) * log_det_x - 0.5 * trace - self._log_normaliser()
        return np.where(positive_definite, density, -np.inf)

    def sample(self, rng, size=()):
        """Samples of shape ``size + batch_shape + (d, d)`` by the Bartlett decomposition.

        ``X = (L A)(L A)^T`` with ``S = L L^T`` and ``A`` lower triangular,
        ``A_ii = sqrt(chi2(df - i))`` (``i = 0 .. d-1``) and ``A_ij`` standard
        normal below the diagonal; valid for real ``df > d - 1``.
        """
        size = (size,) if np.isscalar(size) else tuple(size)
        dim = self.dim
        shape = size + self._batch_shape
        chi_square = rng.chisquare(np.broadcast_to(self._df[..., None] - np.arange(dim), shape + (dim,)))
        below_diagonal = np.tril(rng.standard_normal(shape + (dim, dim)), k=-1)
        bartlett = below_diagonal + np.sqrt(chi_square)[..., None] * np.eye(dim)
        factor = self._scale_cholesky @ bartlett
        return factor @ np.swapaxes(factor, -1, -2)

    def __repr__(self):
        if self.batch_shape == ():
            return f"Wishart(df={float(self._df):.6g}, dim={self.dim})"
        return f"Wishart(batch_shape={self.batch_shape}, dim={self.dim})"
