"""Distributions over matrices for discrete transitions.

``MatrixDirichlet``: column-stochastic ``K_out x K_in`` matrices ``A`` whose
columns are independent Dirichlet vectors, column ``j`` with concentrations
``alpha[:, j]``. The density is

    p(A) = prod_j prod_i A_ij**(alpha_ij - 1) / B(alpha[:, j]),

with natural parameters ``eta = alpha - 1``, sufficient statistics
``T(A) = log A`` (elementwise), base measure ``h(A) = 1`` (Lebesgue measure on
the first ``K_out - 1`` rows of every column) and log-partition
``sum_j log B(alpha[:, j])``. It is the conjugate prior of the columns of the
transition matrix of a discrete ``Transition`` node.

``Contingency``: the joint distribution of a pair of categorical variables
``(out, in)`` with one-hot values, ``P_ij = P(out = e_i, in = e_j)``. A value
is the one-hot matrix ``out in^T`` (event shape ``(K_out, K_in)``), so the mean
``P`` is the expected count matrix ``E[out in^T]`` that a MatrixDirichlet
update consumes. It is the joint marginal of a structured cluster
``(out, in)`` of a ``Transition`` node.
"""
from __future__ import annotations

import numpy as np

from fgraph.errors import ModelError
from fgraph.families.base import ExponentialFamily, as_float_array, check_finite, check_positive, expectation, logsumexp
from fgraph.families.categorical import SIMPLEX_TOLERANCE
from fgraph.families.dirichlet import Dirichlet, log_multivariate_beta
from fgraph.families.special import digamma, entr


def _columns_last(matrix):
    """``(..., K_out, K_in) -> (..., K_in, K_out)``: each column of the matrix becomes a vector on the last axis."""
    return np.swapaxes(matrix, -1, -2)


class MatrixDirichlet(ExponentialFamily):
    """Distribution (a family of messages and marginals): independent Dirichlet columns; ``alpha`` (> 0) has shape ``batch_shape + (K_out, K_in)``.

    ``mean[..., i, j] = alpha_ij / sum_i' alpha_i'j``: every column of the mean sums to one.
    """

    event_ndim = 2
    natural_event_ndims = (2,)

    def __init__(self, alpha, log_scale=None, check=True):
        alpha = as_float_array(alpha, "alpha")
        if check:
            if alpha.ndim < 2 or 0 in alpha.shape[-2:]:
                raise ModelError(
                    f"alpha must have two last axes (K_out, K_in) with K_out, K_in >= 1, got shape {alpha.shape}"
                )
            check_positive(alpha, "alpha")
        self._alpha = alpha
        self._batch_shape = alpha.shape[:-2]
        self._event_shape = alpha.shape[-2:]
        self._set_log_scale(log_scale)

    @property
    def alpha(self):
        """Concentrations, shape ``batch_shape + (K_out, K_in)``."""
        return self._alpha

    @property
    def column_concentration(self):
        """``sum_i alpha_ij`` for every column ``j``, shape ``batch_shape + (K_in,)``."""
        return self._alpha.sum(axis=-2)

    def columns(self) -> Dirichlet:
        """The column distributions as a Dirichlet of batch shape ``batch_shape + (K_in,)`` and event ``(K_out,)``."""
        return Dirichlet(_columns_last(self._alpha), check=False)

    # ---- moments ----
    @expectation
    def mean(self):
        return self._alpha / self.column_concentration[..., None, :]

    @property
    def var(self):
        """Elementwise variances, shape ``batch_shape + (K_out, K_in)``."""
        return _columns_last(self.columns().var)

    @property
    def mode(self):
        """The mode of every column (see :attr:`Dirichlet.mode`), shape ``batch_shape + (K_out, K_in)``."""
        return _columns_last(self.columns().mode)

    @expectation
    def mean_log(self):
        """``E[log A_ij] = digamma(alpha_ij) - digamma(sum_i' alpha_i'j)``, shape ``batch_shape + (K_out, K_in)``."""
        return digamma(self._alpha) - digamma(self.column_concentration)[..., None, :]

    # ---- exponential family ----
    def natural_parameters(self):
        return (self._alpha - 1.0,)

    @classmethod
    def from_natural(cls, eta, log_scale=None):
        (alpha_minus_one,) = eta
        return MatrixDirichlet(alpha_minus_one + 1.0, log_scale=log_scale, check=False)

    @classmethod
    def log_partition_of(cls, eta):
        (alpha_minus_one,) = eta
        return log_multivariate_beta(_columns_last(alpha_minus_one + 1.0)).sum(axis=-1)

    @classmethod
    def log_base_measure_of(cls, eta):
        return 0.0

    def expected_statistics(self):
        return (self.mean_log,)

    # ---- densities ----
    def entropy(self):
        """Sum of the column entropies, shape ``batch_shape``."""
        return self.columns().entropy().sum(axis=-1)

    def logpdf(self, x):
        """Log density at ``x`` (shape ``(..., K_out, K_in)``); ``-inf`` unless every column lies on the simplex."""
        x = as_float_array(x, "x")
        return self.columns().logpdf(_columns_last(x)).sum(axis=-1)

    def sample(self, rng, size=()):
        """Column-stochastic samples of shape ``size + batch_shape + (K_out, K_in)``."""
        return _columns_last(self.columns().sample(rng, size))

    def __repr__(self):
        if self.batch_shape == () and max(self._event_shape) <= 6:
            return f"MatrixDirichlet(alpha={np.array2string(self._alpha, precision=4, separator=', ')})"
        return f"MatrixDirichlet(batch_shape={self.batch_shape}, event_shape={self.event_shape})"


class Contingency(ExponentialFamily):
    """Joint distribution of two categorical variables; ``probabilities`` has shape ``batch_shape + (K_out, K_in)``.

    The entries of each table are non-negative and sum to one. The natural
    parameterisation is non-minimal, as for :class:`Categorical`:
    ``eta = log P``, ``T(X) = X`` (the one-hot matrix), log-partition
    ``logsumexp`` over both event axes, base measure 1.
    """

    event_ndim = 2
    natural_event_ndims = (2,)

    def __init__(self, probabilities, log_scale=None, check=True):
        probabilities = as_float_array(probabilities, "probabilities")
        if check:
            if probabilities.ndim < 2 or 0 in probabilities.shape[-2:]:
                raise ModelError(
                    f"probabilities must have two last axes (K_out, K_in), got shape {probabilities.shape}"
                )
            check_finite(probabilities, "probabilities")
            if np.any(probabilities < 0.0):
                raise ModelError(f"probabilities must be non-negative, got minimum {np.min(probabilities)!r}")
            deviation = np.max(np.abs(probabilities.sum(axis=(-2, -1)) - 1.0))
            if deviation > SIMPLEX_TOLERANCE:
                raise ModelError(
                    f"probabilities must sum to one over the last two axes (within {SIMPLEX_TOLERANCE:g}), "
                    f"but a sum is off by {deviation:.3g}"
                )
        self._p = probabilities
        self._batch_shape = probabilities.shape[:-2]
        self._event_shape = probabilities.shape[-2:]
        self._set_log_scale(log_scale)

    # ---- parameters and moments ----
    @expectation
    def probabilities(self):
        """``P(out = e_i, in = e_j)``, shape ``batch_shape + (K_out, K_in)``."""
        return self._p

    @expectation
    def mean(self):
        """``E[out in^T] = P``."""
        return self._p

    @expectation
    def out_probabilities(self):
        """Marginal of ``out``, ``sum_j P_ij``, shape ``batch_shape + (K_out,)``."""
        return self._p.sum(axis=-1)

    @expectation
    def in_probabilities(self):
        """Marginal of ``in``, ``sum_i P_ij``, shape ``batch_shape + (K_in,)``."""
        return self._p.sum(axis=-2)

    @property
    def mode(self):
        """One-hot matrix of the most probable pair (the first in row-major order on ties)."""
        flat = self._p.reshape(self._batch_shape + (-1,))
        index = np.argmax(flat, axis=-1)
        return (index[..., None] == np.arange(flat.shape[-1])).astype(float).reshape(self._p.shape)

    # ---- exponential family ----
    def natural_parameters(self):
        with np.errstate(divide="ignore"):
            return (np.log(self._p),)

    @classmethod
    def from_natural(cls, eta, log_scale=None):
        (log_p,) = eta
        normaliser = logsumexp(log_p, axis=(-2, -1), keepdims=True)
        return Contingency(np.exp(log_p - normaliser), log_scale=log_scale, check=False)

    @classmethod
    def log_partition_of(cls, eta):
        (log_p,) = eta
        return logsumexp(log_p, axis=(-2, -1))

    @classmethod
    def log_base_measure_of(cls, eta):
        return 0.0

    @classmethod
    def inner(cls, eta, statistics):
        """``<eta, T>`` with the convention ``0 * log 0 = 0`` (see :meth:`Categorical.inner`)."""
        (log_p,), (stat,) = eta, statistics
        with np.errstate(invalid="ignore"):
            return np.where(stat == 0.0, 0.0, log_p * stat).sum(axis=(-2, -1))

    def expected_statistics(self):
        return (self._p,)

    # ---- densities ----
    def entropy(self):
        return entr(self._p).sum(axis=(-2, -1))

    def logpdf(self, x):
        """Log probability of a one-hot matrix ``x`` (shape ``(..., K_out, K_in)``); ``-inf`` if not one-hot."""
        x = as_float_array(x, "x")
        is_one_hot = np.all((x == 0.0) | (x == 1.0), axis=(-2, -1)) & (x.sum(axis=(-2, -1)) == 1.0)
        with np.errstate(divide="ignore"):
            log_p = np.log(self._p)
        log_probability = np.where(x == 1.0, log_p, 0.0).sum(axis=(-2, -1))
        return np.where(is_one_hot, log_probability, -np.inf)

    def sample(self, rng, size=()):
        """One-hot matrices of shape ``size + batch_shape + (K_out, K_in)``."""
        size = (size,) if np.isscalar(size) else tuple(size)
        flat = self._p.reshape(self._batch_shape + (-1,))
        cumulative = np.cumsum(flat, axis=-1)
        uniform = rng.random(size + self._batch_shape + (1,)) * cumulative[..., -1:]
        index = np.sum(cumulative <= uniform, axis=-1)
        one_hot = (index[..., None] == np.arange(flat.shape[-1])).astype(float)
        return one_hot.reshape(size + self._p.shape)

    def __repr__(self):
        return f"Contingency(batch_shape={self.batch_shape}, event_shape={self.event_shape})"
