"""Beta distributions over the unit interval.

The density is ``p(x) = x**(a - 1) (1 - x)**(b - 1) / B(a, b)`` on ``[0, 1]``,
with natural parameters ``eta = (a - 1, b - 1)``, sufficient statistics
``T(x) = (log x, log(1 - x))`` and base measure ``h(x) = 1``.
"""
from __future__ import annotations

import numpy as np

from fgraph.families.base import (
    ExponentialFamily,
    as_float_array,
    broadcast_params,
    check_positive,
    expectation,
)
from fgraph.families.special import betaln, digamma, xlog1py, xlogy


class Beta(ExponentialFamily):
    """Distribution (a family of messages and marginals): Beta with shape parameters ``a`` (> 0) and ``b`` (> 0), each broadcast to ``batch_shape``."""

    event_ndim = 0
    natural_event_ndims = (0, 0)

    def __init__(self, a, b, log_scale=None, check=True):
        a = as_float_array(a, "a")
        b = as_float_array(b, "b")
        if check:
            check_positive(a, "a")
            check_positive(b, "b")
        self._batch_shape, (self._a, self._b) = broadcast_params((a, b), (0, 0))
        self._event_shape = ()
        self._set_log_scale(log_scale)

    # ---- parameters ----
    @property
    def a(self):
        return self._a

    @property
    def b(self):
        return self._b

    # ---- moments ----
    @expectation
    def mean(self):
        return self.a / (self.a + self.b)

    @property
    def var(self):
        total = self.a + self.b
        return self.a * self.b / (total**2 * (total + 1.0))

    @property
    def mode(self):
        """``(a - 1) / (a + b - 2)`` when ``a, b > 1``; otherwise where the density diverges fastest.

        A shape parameter at or below one makes the density unbounded (or flat)
        at its end of the interval: with only ``a <= 1`` the mode is 0, with
        only ``b <= 1`` it is 1, with both it is the end whose factor diverges
        faster (0 if ``a < b``, else 1), and the flat ``Beta(1, 1)`` returns
        its mean 0.5. This is :class:`Dirichlet`'s rule for two components.
        """
        a, b = self.a, self.b
        excess_a, excess_b = np.maximum(a - 1.0, 0.0), np.maximum(b - 1.0, 0.0)
        excess = excess_a + excess_b
        interior = excess_a / np.where(excess > 0.0, excess, 1.0)
        boundary = np.where((a == 1.0) & (b == 1.0), 0.5, np.where(a >= b, 1.0, 0.0))
        return np.where(excess > 0.0, interior, boundary)

    @expectation
    def mean_log(self):
        """``E[log x] = digamma(a) - digamma(a + b)``."""
        return digamma(self.a) - digamma(self.a + self.b)

    @expectation
    def mean_log1m(self):
        """``E[log(1 - x)] = digamma(b) - digamma(a + b)``."""
        return digamma(self.b) - digamma(self.a + self.b)

    # ---- exponential family ----
    def natural_parameters(self):
        return (self.a - 1.0, self.b - 1.0)

    @classmethod
    def from_natural(cls, eta, log_scale=None):
        a_minus_one, b_minus_one = eta
        return Beta(a_minus_one + 1.0, b_minus_one + 1.0, log_scale=log_scale, check=False)

    @classmethod
    def log_partition_of(cls, eta):
        a_minus_one, b_minus_one = eta
        return betaln(a_minus_one + 1.0, b_minus_one + 1.0)

    @classmethod
    def log_base_measure_of(cls, eta):
        return 0.0

    def expected_statistics(self):
        return (self.mean_log, self.mean_log1m)

    # ---- densities ----
    def entropy(self):
        a, b = self.a, self.b
        return betaln(a, b) - (a - 1.0) * digamma(a) - (b - 1.0) * digamma(b) + (a + b - 2.0) * digamma(a + b)

    def logpdf(self, x):
        """Log density at ``x`` (broadcast against ``batch_shape``); ``-inf`` outside ``[0, 1]``."""
        x = np.asarray(x, dtype=float)
        a, b = self.a, self.b
        # xlogy / xlog1py give the right limits at the end points; outside [0, 1]
        # the logarithms are NaN, which the where below replaces.
        with np.errstate(divide="ignore", invalid="ignore"):
            density = xlogy(a - 1.0, x) + xlog1py(b - 1.0, -x) - betaln(a, b)
        return np.where((x >= 0.0) & (x <= 1.0), density, -np.inf)

    def sample(self, rng, size=()):
        size = (size,) if np.isscalar(size) else tuple(size)
        return rng.beta(self.a, self.b, size + self.batch_shape)

    def __repr__(self):
        if self.batch_shape == ():
            return f"Beta(a={float(self.a):.6g}, b={float(self.b):.6g})"
        return f"Beta(batch_shape={self.batch_shape})"
