"""Categorical distributions over ``K`` categories, with one-hot values.

A value is a one-hot vector of length ``K`` (event shape ``(K,)``), so that
a point mass over a categorical variable, the mean ``p`` and the statistics
``T(x) = x`` all live in the same space. The probability mass is
``p(x) = prod_k p_k**x_k``. The natural parameterisation is deliberately
*non-minimal*: ``eta = log p`` (all ``K`` entries), log-partition
``A(eta) = logsumexp(eta)`` and base measure ``h(x) = 1``; a category of
probability zero is then just a ``-inf`` entry, with no ``inf - inf`` in
products.
"""
from __future__ import annotations

import numpy as np

from fgraph.errors import ModelError
from fgraph.families.base import (
    ZERO_LOG_SCALE,
    FEW_CATEGORIES,
    ExponentialFamily,
    as_float_array,
    broadcast_params,
    check_finite,
    expectation,
    logsumexp,
    sum_last_axis,
)

# Probability vectors must sum to one within this absolute tolerance.
SIMPLEX_TOLERANCE = 1e-8


def check_probability_vector(p, name: str) -> None:
    """Raise ValueError unless ``p`` (shape ``(..., K)``) is non-negative and sums to one along its last axis."""
    if p.ndim < 1 or p.shape[-1] == 0:
        raise ModelError(f"{name} must have a last axis of K >= 1 category probabilities, got shape {p.shape}")
    check_finite(p, name)
    if np.any(p < 0.0):
        raise ModelError(f"{name} must be non-negative, got minimum {np.min(p)!r}")
    deviation = np.max(np.abs(p.sum(axis=-1) - 1.0))
    if deviation > SIMPLEX_TOLERANCE:
        raise ModelError(
            f"{name} must sum to one along the last axis (within {SIMPLEX_TOLERANCE:g}), "
            f"but a sum is off by {deviation:.3g}; normalise it with {name} / {name}.sum(-1, keepdims=True)"
        )


def one_hot_violation(value) -> str | None:
    """``None`` if every row of ``value`` (shape ``(..., K)``) is one-hot, else the first row that is not
    and its index (for an error message)."""
    value = np.asarray(value)
    one_hot = np.all((value == 0.0) | (value == 1.0), axis=-1) & (value.sum(axis=-1) == 1.0)
    if np.all(one_hot):
        return None
    first = tuple(int(i) for i in np.argwhere(~np.asarray(one_hot))[0])
    return f"{value[first].tolist()}" + (f" at index {first}" if first else "")


def _normalise_logits(log_p: np.ndarray) -> tuple:
    """``(p, log p)`` from unnormalised logits (``..., K``): ``log p = logits − logsumexp(logits)``, ``p = exp(log p)``.

    A large array is shifted by its one largest entry rather than row by row: one exponential of the whole
    array, whose row sums give the log-partition and, divided out, p. That holds while every row keeps a
    normal (not subnormal) sum, i.e. while no row lies more than about 575 below the largest; otherwise the
    row-wise form runs. On the one-shift path ``log p`` is a function computing it when first asked (a
    message's log p is often never read: the product with the other messages reads p)."""
    if log_p.size >= LARGE_ARRAY and log_p.ndim >= 2 and log_p.shape[-1] <= FEW_CATEGORIES:
        shift = np.max(log_p)
        if np.isfinite(shift):
            exponentials = np.subtract(log_p, shift)
            with np.errstate(under="ignore"):
                np.exp(exponentials, out=exponentials)  # in place: a new array of this size costs its page faults
            totals = sum_last_axis(exponentials)
            if np.min(totals) > SMALLEST_ROW_TOTAL:  # False for NaN too
                partition = np.log(totals) + shift
                return (np.divide(exponentials, totals[..., None], out=exponentials),
                        lambda: log_p - partition[..., None])
    normalised = log_p - logsumexp(log_p, axis=-1, keepdims=True)
    return np.exp(normalised), normalised


# From this many numbers on, logits are normalised by one shift for the whole array (see _normalise_logits).
LARGE_ARRAY = 4096
# A row whose exponentials sum to less than this after the common shift is too far below the largest.
SMALLEST_ROW_TOTAL = 1e-250


class Categorical(ExponentialFamily):
    """Distribution (a family of messages and marginals): Categorical with probability vectors ``p`` of shape ``batch_shape + (K,)``."""

    event_ndim = 1
    natural_event_ndims = (1,)

    @classmethod
    def unbatched(cls, probabilities: list, log_scale: float) -> "Categorical":
        """One categorical from K Python floats, without conversions or checks (the float paths of rules)."""
        new = object.__new__(Categorical)
        new._p = np.array(probabilities, dtype=float)
        new._batch_shape, new._event_shape = (), new._p.shape
        new._log_scale = ZERO_LOG_SCALE if log_scale == 0.0 else np.float64(log_scale)  # shared zero: see normalised()
        return new

    def __init__(self, p, log_scale=None, check=True):
        p = as_float_array(p, "p")
        if check:
            check_probability_vector(p, "p")
        self._batch_shape, (self._p,) = broadcast_params((p,), (1,))
        self._event_shape = p.shape[-1:]
        self._set_log_scale(log_scale)

    @property
    def category_count(self) -> int:
        return self._event_shape[0]

    # ---- parameters ----
    @expectation
    def probabilities(self):
        """Category probabilities ``p``, shape ``batch_shape + (K,)``."""
        return self._p

    # ---- moments ----
    @expectation
    def mean(self):
        return self._p

    @property
    def var(self):
        """Variance of each one-hot entry, ``p (1 - p)``, shape ``batch_shape + (K,)``."""
        return self._p * (1.0 - self._p)

    @property
    def cov(self):
        """Covariance of the one-hot vector, ``diag(p) - p p^T``, shape ``batch_shape + (K, K)``."""
        p = self._p
        return p[..., :, None] * (np.eye(self.category_count) - p[..., None, :])

    @property
    def mode(self):
        """One-hot vector of the most probable category (the first one on ties)."""
        return self._one_hot(np.argmax(self._p, axis=-1))

    def _one_hot(self, index):
        return (index[..., None] == np.arange(self.category_count)).astype(float)

    # ---- exponential family ----
    def natural_parameters(self):
        """``(log p,)``: kept from :meth:`from_natural` (normalised logits), otherwise the logarithm of ``p``."""
        log_p = self.__dict__.get("_log_p")
        if log_p is None:
            with np.errstate(divide="ignore"):
                log_p = self._log_p = np.log(self._p)
        elif callable(log_p):  # kept by from_natural as the subtraction still to do
            log_p = self._log_p = log_p()
        return (log_p,)

    def checked_parameters(self):
        """``p`` itself, which is NaN or +inf where ``log p`` is (no logarithms taken for the check)."""
        return (self._p,)

    @classmethod
    def from_natural(cls, eta, log_scale=None):
        (log_p,) = eta
        # Subtracting the log-partition normalises; it is finite whenever any category is possible. The
        # normalised logits are kept as log p (the entropy reads them; no logarithm taken again).
        probabilities, normalised = _normalise_logits(np.asarray(log_p, dtype=float))
        new = Categorical(probabilities, log_scale=log_scale, check=False)
        new._log_p = normalised
        return new

    @classmethod
    def log_partition_of(cls, eta):
        (log_p,) = eta
        return logsumexp(log_p, axis=-1)

    @classmethod
    def log_base_measure_of(cls, eta):
        return 0.0

    @classmethod
    def inner(cls, eta, statistics):
        """``<eta, T>`` with the convention ``0 * log 0 = 0``.

        A category of probability zero has ``eta_k = -inf``; where it also has
        zero weight in ``T`` it must contribute nothing, not NaN.
        """
        (log_p,), (stat,) = eta, statistics
        with np.errstate(invalid="ignore"):
            return sum_last_axis(np.where(stat == 0.0, 0.0, log_p * stat))

    def expected_statistics(self):
        return (self._p,)

    def cross_entropy(self, other):
        """``−Σ_k q_k log p_k`` (0 · log 0 = 0). A categorical's p sums to one, so its log-partition, which the
        general formula would compute by a log-sum-exp, is zero."""
        if not isinstance(other, Categorical):
            return super().cross_entropy(other)
        return -self.inner(other.natural_parameters(), self.expected_statistics())

    # ---- densities ----
    def entropy(self):
        """``−Σ_k p_k log p_k`` (0 log 0 = 0), from the kept log p when there is one."""
        (log_p,) = self.natural_parameters()
        with np.errstate(invalid="ignore"):
            terms = self._p * log_p
        if np.isnan(np.sum(terms)):  # 0 · log 0 (an impossible category) or a NaN probability: the slow form
            with np.errstate(invalid="ignore"):
                terms = np.where(self._p > 0.0, terms, 0.0)
        return -sum_last_axis(terms)

    def logpdf(self, x):
        """Log probability of one-hot ``x`` (shape ``(..., K)``, broadcast against the batch); ``-inf`` if not one-hot."""
        x = np.asarray(x, dtype=float)
        is_one_hot = np.all((x == 0.0) | (x == 1.0), axis=-1) & (x.sum(axis=-1) == 1.0)
        with np.errstate(divide="ignore"):
            log_p = np.log(self._p)
        # Selecting with where (rather than multiplying by x) keeps -inf * 0 out of the sum.
        log_probability = np.where(x == 1.0, log_p, 0.0).sum(axis=-1)
        return np.where(is_one_hot, log_probability, -np.inf)

    def sample(self, rng, size=()):
        """One-hot samples, shape ``size + batch_shape + (K,)``, by inverting the cumulative distribution."""
        size = (size,) if np.isscalar(size) else tuple(size)
        cumulative = np.cumsum(self._p, axis=-1)
        # Category k is drawn when cumulative[k - 1] <= u < cumulative[k], an empty
        # interval when p_k = 0. Scaling u in [0, 1) by the total (rather than by 1)
        # keeps a rounding error in the sum from pushing the index past K - 1.
        uniform = rng.random(size + self.batch_shape + (1,)) * cumulative[..., -1:]
        index = np.sum(cumulative <= uniform, axis=-1)
        return self._one_hot(index)

    # ---- batching: on the probabilities themselves (the generic path through log p and back renormalises,
    # which turns a row of zeros — a point left out of a first M-step, as scikit-learn's k-means++ starts
    # leave most points — into NaN) ----
    def broadcast_to(self, batch_shape):
        batch_shape = tuple(batch_shape)
        return Categorical(np.broadcast_to(self._p, batch_shape + self._event_shape),
                           log_scale=np.broadcast_to(self.log_scale, batch_shape), check=False)

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        return Categorical(self._p[index + (Ellipsis,)], log_scale=np.asarray(self.log_scale)[index], check=False)

    def __repr__(self):
        if self.batch_shape == () and self.category_count <= 8:
            return f"Categorical(p={np.array2string(self._p, precision=4, separator=', ')})"
        return f"Categorical(batch_shape={self.batch_shape}, event_shape={self.event_shape})"
