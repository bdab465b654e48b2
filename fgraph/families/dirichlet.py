"""Dirichlet distributions over the probability simplex.

The density over ``p`` in the ``(K - 1)``-simplex is
``prod_k p_k**(alpha_k - 1) / B(alpha)`` with
``log B(alpha) = sum_k gammaln(alpha_k) - gammaln(sum_k alpha_k)``; natural
parameters ``eta = alpha - 1``, sufficient statistics ``T(p) = log p`` and base
measure ``h(p) = 1`` (with respect to Lebesgue measure on the first ``K - 1``
coordinates).
"""
from __future__ import annotations

import numpy as np

from fgraph.errors import ModelError
from fgraph.families.base import (
    ExponentialFamily,
    as_float_array,
    broadcast_params,
    check_positive,
    expectation,
    logsumexp,
)
from fgraph.families.categorical import SIMPLEX_TOLERANCE
from fgraph.families.special import digamma, gammaln, xlogy


def log_multivariate_beta(alpha):
    """``log B(alpha)`` over the last axis, shape ``alpha.shape[:-1]``."""
    return gammaln(alpha).sum(axis=-1) - gammaln(alpha.sum(axis=-1))


class Dirichlet(ExponentialFamily):
    """Distribution (a family of messages and marginals): Dirichlet with concentrations ``alpha`` (> 0) of shape ``batch_shape + (K,)``."""

    event_ndim = 1
    natural_event_ndims = (1,)

    def __init__(self, alpha, log_scale=None, check=True):
        alpha = as_float_array(alpha, "alpha")
        if check:
            if alpha.ndim < 1 or alpha.shape[-1] == 0:
                raise ModelError(f"alpha must have a last axis of K >= 1 concentrations, got shape {alpha.shape}")
            check_positive(alpha, "alpha")
        self._batch_shape, (self._alpha,) = broadcast_params((alpha,), (1,))
        self._event_shape = alpha.shape[-1:]
        self._set_log_scale(log_scale)

    @property
    def alpha(self):
        return self._alpha

    @property
    def total_concentration(self):
        """``sum_k alpha_k``, shape ``batch_shape``."""
        return self._alpha.sum(axis=-1)

    # ---- moments ----
    @expectation
    def mean(self):
        return self._alpha / self.total_concentration[..., None]

    @property
    def var(self):
        total = self.total_concentration[..., None]
        return self._alpha * (total - self._alpha) / (total**2 * (total + 1.0))

    @property
    def cov(self):
        """``(diag(m) - m m^T) / (sum alpha + 1)`` with ``m`` the mean, shape ``batch_shape + (K, K)``."""
        mean = self.mean
        centred = mean[..., :, None] * (np.eye(self._event_shape[0]) - mean[..., None, :])
        return centred / (self.total_concentration[..., None, None] + 1.0)

    @property
    def mode(self):
        """``(alpha - 1) / (sum alpha - K)`` when every ``alpha_k > 1``; otherwise where the density diverges fastest.

        A component with ``alpha_k <= 1`` makes the density unbounded (or flat)
        as ``p_k -> 0``, so it is put at zero and the others share the mass in
        proportion to ``alpha_k - 1``. When every ``alpha_k <= 1`` the mode is
        the vertex of the largest concentration (the first on ties), except for
        the flat all-ones case, which returns its mean.
        """
        alpha = self._alpha
        excess = np.maximum(alpha - 1.0, 0.0)
        total_excess = excess.sum(axis=-1, keepdims=True)
        interior = excess / np.where(total_excess > 0.0, total_excess, 1.0)
        vertex = (np.argmax(alpha, axis=-1)[..., None] == np.arange(alpha.shape[-1])).astype(float)
        boundary = np.where(np.all(alpha == 1.0, axis=-1, keepdims=True), self.mean, vertex)
        return np.where(total_excess > 0.0, interior, boundary)

    @expectation
    def mean_log(self):
        """``E[log p_k] = digamma(alpha_k) - digamma(sum alpha)``, shape ``batch_shape + (K,)``."""
        return digamma(self._alpha) - digamma(self.total_concentration)[..., None]

    # ---- exponential family ----
    def natural_parameters(self):
        return (self._alpha - 1.0,)

    @classmethod
    def from_natural(cls, eta, log_scale=None):
        (alpha_minus_one,) = eta
        return Dirichlet(alpha_minus_one + 1.0, log_scale=log_scale, check=False)

    @classmethod
    def log_partition_of(cls, eta):
        (alpha_minus_one,) = eta
        return log_multivariate_beta(alpha_minus_one + 1.0)

    @classmethod
    def log_base_measure_of(cls, eta):
        return 0.0

    def expected_statistics(self):
        return (self.mean_log,)

    # ---- densities ----
    def entropy(self):
        alpha, total = self._alpha, self.total_concentration
        category_count = alpha.shape[-1]
        return (
            log_multivariate_beta(alpha)
            + (total - category_count) * digamma(total)
            - ((alpha - 1.0) * digamma(alpha)).sum(axis=-1)
        )

    def logpdf(self, x):
        """Log density at ``x`` (shape ``(..., K)``); ``-inf`` off the simplex (sum tolerance 1e-8)."""
        x = np.asarray(x, dtype=float)
        on_simplex = np.all(x >= 0.0, axis=-1) & (np.abs(x.sum(axis=-1) - 1.0) <= SIMPLEX_TOLERANCE)
        # xlogy gives the right limits on the faces of the simplex; negative
        # coordinates give NaN, which the where below replaces.
        with np.errstate(divide="ignore", invalid="ignore"):
            density = xlogy(self._alpha - 1.0, x).sum(axis=-1) - log_multivariate_beta(self._alpha)
        return np.where(on_simplex, density, -np.inf)

    def sample(self, rng, size=()):
        """Samples of shape ``size + batch_shape + (K,)``, by normalising independent gamma draws.

        The draws are made in log space with the boost ``G(alpha) = G(alpha + 1) U**(1 / alpha)``:
        for small ``alpha`` a direct gamma draw underflows to zero in every
        component, and the normalisation would give 0 / 0.
        """
        size = (size,) if np.isscalar(size) else tuple(size)
        shape = size + self._batch_shape + self._event_shape
        alpha = np.broadcast_to(self._alpha, shape)
        # 1 - U lies in (0, 1], so its logarithm is finite.
        log_gamma = np.log(rng.gamma(alpha + 1.0, 1.0, shape)) + np.log1p(-rng.random(shape)) / alpha
        return np.exp(log_gamma - logsumexp(log_gamma, axis=-1, keepdims=True))

    def __repr__(self):
        if self.batch_shape == () and self._event_shape[0] <= 8:
            return f"Dirichlet(alpha={np.array2string(self._alpha, precision=4, separator=', ')})"
        return f"Dirichlet(batch_shape={self.batch_shape}, event_shape={self.event_shape})"
