"""Bernoulli distributions over ``{0, 1}``.

The probability mass is ``p(x) = p**x (1 - p)**(1 - x)``. The natural
parameterisation is deliberately *non-minimal*: ``eta = (log p, log(1 - p))``
with sufficient statistics ``T(x) = (x, 1 - x)``, log-partition
``A(eta) = logaddexp(eta_0, eta_1)`` and base measure ``h(x) = 1``. The
minimal form (a single log-odds) is infinite at ``p = 0`` and ``p = 1`` and
its products then meet ``inf - inf``; here a certain outcome is just a
``-inf`` entry, which sums and ``logaddexp`` handle exactly.
"""
from __future__ import annotations

import numpy as np

from fgraph.errors import ModelError
from fgraph.families.base import ExponentialFamily, as_float_array, broadcast_params, check_finite, expectation
from fgraph.families.special import entr


class Bernoulli(ExponentialFamily):
    """Distribution (a family of messages and marginals): Bernoulli with success probability ``p`` in ``[0, 1]``, shape ``batch_shape``."""

    event_ndim = 0
    natural_event_ndims = (0, 0)

    def __init__(self, p, log_scale=None, check=True):
        p = as_float_array(p, "p")
        if check:
            check_finite(p, "p")
            if np.any((p < 0.0) | (p > 1.0)):
                raise ModelError(
                    f"p must be a probability in [0, 1], got values from {np.min(p)!r} to {np.max(p)!r}"
                )
        self._batch_shape, (self._p,) = broadcast_params((p,), (0,))
        self._event_shape = ()
        self._set_log_scale(log_scale)

    # ---- parameters ----
    @property
    def p(self):
        """Success probability ``P(x = 1)``, shape ``batch_shape``."""
        return self._p

    @expectation
    def probabilities(self):
        """``(P(x = 0), P(x = 1))`` stacked on a last axis, shape ``batch_shape + (2,)``."""
        return np.stack([1.0 - self.p, self.p], axis=-1)

    # ---- moments ----
    @expectation
    def mean(self):
        return self.p

    @property
    def var(self):
        return self.p * (1.0 - self.p)

    @property
    def mode(self):
        """1 where ``p > 1/2``, else 0 (a tie goes to 0)."""
        return (self.p > 0.5).astype(float)

    # ---- exponential family ----
    def natural_parameters(self):
        with np.errstate(divide="ignore"):
            return (np.log(self.p), np.log1p(-self.p))

    @classmethod
    def from_natural(cls, eta, log_scale=None):
        log_p, log_1m_p = eta
        return Bernoulli(np.exp(log_p - np.logaddexp(log_p, log_1m_p)), log_scale=log_scale, check=False)

    @classmethod
    def log_partition_of(cls, eta):
        log_p, log_1m_p = eta
        return np.logaddexp(log_p, log_1m_p)

    @classmethod
    def log_base_measure_of(cls, eta):
        return 0.0

    @classmethod
    def inner(cls, eta, statistics):
        """``<eta, T>`` with the convention ``0 * log 0 = 0``.

        An outcome of probability zero has ``eta_k = -inf``; where it also has
        zero weight in ``T`` it must contribute nothing, not NaN.
        """
        total = 0.0
        for eta_k, stat_k in zip(eta, statistics):
            with np.errstate(invalid="ignore"):
                total = total + np.where(stat_k == 0.0, 0.0, eta_k * stat_k)
        return total

    def expected_statistics(self):
        return (self.p, 1.0 - self.p)

    # ---- densities ----
    def entropy(self):
        return entr(self.p) + entr(1.0 - self.p)

    def logpdf(self, x):
        """Log probability of ``x`` (broadcast against ``batch_shape``); ``-inf`` unless ``x`` is 0 or 1."""
        x = np.asarray(x, dtype=float)
        with np.errstate(divide="ignore"):
            return np.where(x == 1.0, np.log(self.p), np.where(x == 0.0, np.log1p(-self.p), -np.inf))

    def sample(self, rng, size=()):
        size = (size,) if np.isscalar(size) else tuple(size)
        return (rng.random(size + self.batch_shape) < self.p).astype(float)

    def __repr__(self):
        if self.batch_shape == ():
            return f"Bernoulli(p={float(self.p):.6g})"
        return f"Bernoulli(batch_shape={self.batch_shape})"
