"""Point masses (data, constants, point-mass form constraints) and the uninformative message."""
from __future__ import annotations

import numpy as np

from fgraph.errors import ModelError
from fgraph.families.base import Distribution, as_float_array, expectation
from fgraph.families.special import gammaln


def _log(value):
    with np.errstate(divide="ignore"):
        return np.log(value)


def _log1m(value):
    with np.errstate(divide="ignore"):
        return np.log1p(-value)


class PointMass(Distribution):
    """A Dirac delta at ``value``.

    ``value`` has shape ``batch_shape + event_shape`` where the event rank is
    ``event_ndim`` (0: scalars, 1: vectors, 2: matrices). As a marginal it
    answers every moment a variational rule can ask for, evaluated at the point.
    Its entropy is taken to be zero: observed and clamped variables do not
    contribute to the free energy.
    """

    def __init__(self, value, event_ndim: int = 0, log_scale=None):
        value = as_float_array(value, "value")
        if value.ndim < event_ndim:
            raise ModelError(f"PointMass value of shape {value.shape} has fewer than event_ndim={event_ndim} axes")
        self.event_ndim = event_ndim
        self.value = value
        self._batch_shape = value.shape[: value.ndim - event_ndim]
        self._event_shape = value.shape[value.ndim - event_ndim :]
        self._set_log_scale(log_scale)

    @expectation
    def mean(self):
        return self.value

    @property
    def mode(self):
        return self.value

    @property
    def var(self):
        """Zero, one shared zero broadcast over the batch (data of N points need no N zeros)."""
        value = self.value
        return np.float64(0.0) if type(value) is np.float64 else np.broadcast_to(0.0, value.shape)

    @property
    def cov(self):
        d = self._event_shape[-1]
        return np.zeros(self._batch_shape + (d, d))

    @property
    def precision(self):
        return np.full_like(self.value, np.inf)

    # Moments are computed once per point mass and kept: data and constants are read every iteration
    # (and constants in every run), and a point mass, like every distribution, is never modified.
    def _kept(self, name: str, compute):
        return self.derived(name, lambda: compute(self.value))

    @expectation
    def second_moment(self):
        """``x**2`` for scalars, ``x x^T`` for vectors."""
        if self.event_ndim == 0:
            return self._kept("_second_moment", np.square)
        return self._kept("_second_moment", lambda value: value[..., :, None] * value[..., None, :])

    @expectation
    def mean_log(self):
        return self._kept("_mean_log", _log)

    @expectation
    def mean_log1m(self):
        return self._kept("_mean_log1m", _log1m)

    @expectation
    def mean_inverse(self):
        if self.event_ndim == 2:
            return self._kept("_mean_inverse", np.linalg.inv)
        return self._kept("_mean_inverse", np.reciprocal)

    @expectation
    def mean_logdet(self):
        return self._kept("_mean_logdet", lambda value: np.linalg.slogdet(value)[1])

    @expectation
    def mean_log_gamma(self):
        """``log Γ(x)``: what a gamma factor's average energy needs of a known shape."""
        return self._kept("_mean_log_gamma", gammaln)

    def entropy(self):
        return np.zeros(self._batch_shape)

    def sample(self, rng, size=()):
        size = (size,) if np.isscalar(size) else tuple(size)
        return np.broadcast_to(self.value, size + self.value.shape).copy()

    def broadcast_to(self, batch_shape):
        batch_shape = tuple(batch_shape)
        return PointMass(
            np.broadcast_to(self.value, batch_shape + self._event_shape),
            self.event_ndim,
            np.broadcast_to(self.log_scale, batch_shape),
        )

    def __getitem__(self, index):
        value = self.value[index] if self.event_ndim == 0 else self.value[(index if isinstance(index, tuple) else (index,)) + (Ellipsis,)]
        return PointMass(value, self.event_ndim, self.log_scale[index])

    def __repr__(self):
        if self.value.size == 1:
            return f"PointMass({float(self.value.reshape(())):.6g})"
        return f"PointMass(batch_shape={self.batch_shape}, event_shape={self.event_shape})"


class Uninformative(Distribution):
    """The constant function 1: the message out of a dangling edge.

    It is the identity of the product and carries log-scale zero. It is not a
    distribution, so asking for its moments is an error.
    """

    def __init__(self, batch_shape=(), event_shape=()):
        self._batch_shape = tuple(batch_shape)
        self._event_shape = tuple(event_shape)
        self._set_log_scale(None)

    @property
    def mean(self):
        raise ModelError("an uninformative (flat) message has no mean; give the variable a prior")

    def entropy(self):
        raise ModelError("an uninformative (flat) message has no entropy; give the variable a prior")

    def broadcast_to(self, batch_shape):
        return Uninformative(batch_shape, self._event_shape)

    def __getitem__(self, index):
        return Uninformative(np.empty(self._batch_shape)[index].shape, self._event_shape)

    def __repr__(self):
        return "Uninformative()"
