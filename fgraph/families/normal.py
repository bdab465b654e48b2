"""Univariate normal distributions in three parameterisations.

All three share one family (:class:`UnivariateNormal`), so they multiply with
each other and rules dispatch on the shared base class. Natural parameters are
``eta = (xi, -w/2)`` with ``xi = w * mean`` (weighted mean) and ``w`` the
precision; sufficient statistics ``T(x) = (x, x**2)``.
"""
from __future__ import annotations

import math

import numpy as np

from fgraph.families.base import (
    ZERO_LOG_SCALE,
    ExponentialFamily,
    as_float_array,
    broadcast_params,
    check_finite,
    check_positive,
    elementwise,
    expectation,
)

LOG_2PI = float(np.log(2.0 * np.pi))


def _minus_half(x):
    return -0.5 * x


def _reciprocal(x):
    return 1.0 / x


def _divide(x, y):
    return x / y


def _multiply(x, y):
    return x * y


class UnivariateNormal(ExponentialFamily):
    """Common base of the univariate normal parameterisations.

    Subclasses store ``_mean`` and ``_var`` lazily from their own parameters;
    every moment is derived from ``mean`` and ``var`` or from ``precision``
    and ``weighted_mean``.
    """

    event_ndim = 0
    natural_event_ndims = (0, 0)

    @classmethod
    def family(cls) -> type:
        return UnivariateNormal

    # ---- parameters (subclasses override the ones they store) ----
    # Unbatched parameters are np.float64 and take the plain expression; arrays go through
    # elementwise(), so that a parameter broadcast over a plate is computed with once, not N times.
    @expectation
    def mean(self):
        weighted_mean, precision = self.weighted_mean, self.precision
        if type(precision) is np.float64:
            return weighted_mean / precision
        return elementwise(_divide, weighted_mean, precision)

    @property
    def var(self):
        precision = self.precision
        return 1.0 / precision if type(precision) is np.float64 else elementwise(_reciprocal, precision)

    @property
    def precision(self):
        var = self.var
        return 1.0 / var if type(var) is np.float64 else elementwise(_reciprocal, var)

    @property
    def weighted_mean(self):
        mean, precision = self.mean, self.precision
        if type(precision) is np.float64:
            return mean * precision
        return elementwise(_multiply, mean, precision)

    @property
    def std(self):
        return np.sqrt(self.var)

    @property
    def mode(self):
        return self.mean

    @expectation
    def second_moment(self):
        """``E[x**2]``."""
        return self.mean**2 + self.var

    # ---- exponential family ----
    def natural_parameters(self):
        # a plate of N messages: computed once and kept (the engine's check and the equality node's
        # reduction both read them; a distribution is never modified)
        eta = self.__dict__.get("_natural_parameters")
        if eta is not None:
            return eta
        precision = self.precision
        if type(precision) is np.float64:
            return (self.weighted_mean, -0.5 * precision)
        if type(self).weighted_mean is UnivariateNormal.weighted_mean:  # derived: from the precision at hand
            weighted_mean = elementwise(_multiply, self.mean, precision)
        else:
            weighted_mean = self.weighted_mean
        eta = self._natural_parameters = (weighted_mean, elementwise(_minus_half, precision))
        return eta

    @classmethod
    def from_natural(cls, eta, log_scale=None):
        xi, minus_half_w = eta
        return NormalWeightedMeanPrecision(xi, -2.0 * minus_half_w, log_scale=log_scale, check=False)

    @classmethod
    def log_partition_of(cls, eta):
        xi, minus_half_w = eta
        w = -2.0 * minus_half_w
        return 0.5 * xi**2 / w - 0.5 * np.log(w)

    @classmethod
    def log_base_measure_of(cls, eta):
        return -0.5 * LOG_2PI

    def expected_statistics(self):
        return (self.mean, self.second_moment)

    def power(self, exponent):
        """``(e^s N(m, 1/λ))^w`` renormalised: precision ``w λ``, mean ``m``, the log-scale staying the integral.

        One normal and one exponent (a collapsed plate's message raised to N)
        are computed on floats: ``A(wη) - w A(η) = (w - 1)/2 log λ - ½ log w``
        (the terms in ``ξ²/λ`` cancel exactly) and ``(w - 1) log h``;
        anything else as every exponential family.
        """
        if self._batch_shape or type(exponent) not in (float, np.float64):
            return super().power(exponent)
        w, precision = float(exponent), float(self.precision)
        if not (w > 0.0 and precision > 0.0):
            return super().power(exponent)
        log_scale = (w * float(self._log_scale) + 0.5 * (w - 1.0) * math.log(precision) - 0.5 * math.log(w)
                     - 0.5 * (w - 1.0) * LOG_2PI)
        return NormalWeightedMeanPrecision.unbatched(w * float(self.weighted_mean), w * precision, log_scale)

    # ---- densities ----
    def entropy(self):
        var = self.var
        if type(var) is np.float64 and var > 0.0:  # one normal: a float logarithm (numpy's costs ten times more)
            return np.float64(0.5 * (LOG_2PI + 1.0 + math.log(var)))
        return 0.5 * (LOG_2PI + 1.0 + np.log(var))

    def logpdf(self, x):
        x = np.asarray(x, dtype=float)
        return -0.5 * (LOG_2PI + np.log(self.var) + (x - self.mean) ** 2 / self.var)

    def sample(self, rng, size=()):
        size = (size,) if np.isscalar(size) else tuple(size)
        return self.mean + self.std * rng.standard_normal(size + self.batch_shape)

    def broadcast_to(self, batch_shape):
        return NormalMeanVariance(
            np.broadcast_to(self.mean, batch_shape),
            np.broadcast_to(self.var, batch_shape),
            log_scale=np.broadcast_to(self.log_scale, batch_shape),
            check=False,
        )

    def __getitem__(self, index):
        return NormalMeanVariance(self.mean[index], self.var[index], log_scale=self.log_scale[index], check=False)

    def __repr__(self):
        if self.batch_shape == ():
            return f"{type(self).__name__}(mean={float(self.mean):.6g}, var={float(self.var):.6g})"
        return f"{type(self).__name__}(batch_shape={self.batch_shape})"


def scalar_moments(normal: UnivariateNormal) -> tuple:
    """``(mean, var, weighted_mean, precision)`` of one unbatched normal as Python floats.

    Each is computed from the parameters the parameterisation stores, with
    the same operations as its properties, so the float paths round alike.
    """
    kind = type(normal)
    if kind is NormalWeightedMeanPrecision:
        weighted_mean, precision = float(normal._weighted_mean), float(normal._precision)
        return weighted_mean / precision, 1.0 / precision, weighted_mean, precision
    if kind is NormalMeanVariance:
        mean, var = float(normal._mean), float(normal._var)
        precision = 1.0 / var
        return mean, var, mean * precision, precision
    if kind is NormalMeanPrecision:
        mean, precision = float(normal._mean), float(normal._precision)
        return mean, 1.0 / precision, mean * precision, precision
    return float(normal.mean), float(normal.var), float(normal.weighted_mean), float(normal.precision)


class NormalMeanVariance(UnivariateNormal):
    """Distribution (a family of messages and marginals): Normal with ``mean`` and variance ``var`` (> 0)."""

    @classmethod
    def unbatched(cls, mean: float, var: float, log_scale: float) -> "NormalMeanVariance":
        """One normal from Python floats, without conversions or checks (the float paths of rules)."""
        new = object.__new__(NormalMeanVariance)
        new._mean, new._var = np.float64(mean), np.float64(var)
        new._log_scale = ZERO_LOG_SCALE if log_scale == 0.0 else np.float64(log_scale)  # shared zero: see normalised()
        new._batch_shape, new._event_shape = (), ()
        return new

    def __init__(self, mean, var, log_scale=None, check=True):
        mean = as_float_array(mean, "mean")
        var = as_float_array(var, "var")
        if check:
            check_finite(mean, "mean")
            check_positive(var, "var")
        self._batch_shape, (self._mean, self._var) = broadcast_params((mean, var), (0, 0))
        self._event_shape = ()
        self._set_log_scale(log_scale)

    @expectation
    def mean(self):
        return self._mean

    @property
    def var(self):
        return self._var


class NormalMeanPrecision(UnivariateNormal):
    """Distribution (a family of messages and marginals): Normal with ``mean`` and ``precision`` (> 0, the inverse variance)."""

    def __init__(self, mean, precision, log_scale=None, check=True):
        mean = as_float_array(mean, "mean")
        precision = as_float_array(precision, "precision")
        if check:
            check_finite(mean, "mean")
            check_positive(precision, "precision")
        self._batch_shape, (self._mean, self._precision) = broadcast_params((mean, precision), (0, 0))
        self._event_shape = ()
        self._set_log_scale(log_scale)

    @expectation
    def mean(self):
        return self._mean

    @property
    def precision(self):
        return self._precision


class NormalWeightedMeanPrecision(UnivariateNormal):
    """Normal in natural form: ``weighted_mean = precision * mean`` and ``precision`` (> 0)."""

    @classmethod
    def unbatched(cls, weighted_mean: float, precision: float, log_scale: float) -> "NormalWeightedMeanPrecision":
        """One normal from Python floats, without conversions or checks (the float paths)."""
        new = object.__new__(NormalWeightedMeanPrecision)
        new._weighted_mean, new._precision = np.float64(weighted_mean), np.float64(precision)
        new._log_scale = ZERO_LOG_SCALE if log_scale == 0.0 else np.float64(log_scale)  # shared zero: see normalised()
        new._batch_shape, new._event_shape = (), ()
        return new

    def __init__(self, weighted_mean, precision, log_scale=None, check=True):
        weighted_mean = as_float_array(weighted_mean, "weighted_mean")
        precision = as_float_array(precision, "precision")
        if check:
            check_finite(weighted_mean, "weighted_mean")
            check_positive(precision, "precision")
        self._batch_shape, (self._weighted_mean, self._precision) = broadcast_params(
            (weighted_mean, precision), (0, 0)
        )
        self._event_shape = ()
        self._set_log_scale(log_scale)

    @property
    def weighted_mean(self):
        return self._weighted_mean

    @property
    def precision(self):
        return self._precision
