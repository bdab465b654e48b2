"""Gamma distributions over the positive reals, in shape-rate and shape-scale form.

Both parameterisations share one family (:class:`Gamma`), so they multiply
with each other. The density is

    p(x) = rate**shape / Gamma(shape) * x**(shape - 1) * exp(-rate * x),

with natural parameters ``eta = (shape - 1, -rate)``, sufficient statistics
``T(x) = (log x, x)`` and base measure ``h(x) = 1``.
"""
from __future__ import annotations

import math

import numpy as np

from fgraph.families.base import (
    ZERO_LOG_SCALE,
    ExponentialFamily,
    as_float_array,
    broadcast_params,
    check_positive,
    elementwise,
    expectation,
)
from fgraph.families.special import digamma, gammaln, xlogy


def _minus_one(x):
    return x - 1.0


class Gamma(ExponentialFamily):
    """Distribution (a family of messages and marginals): Gamma with ``shape`` (> 0) and ``rate`` (> 0), each broadcast to ``batch_shape``.

    ``mean = shape / rate``. Subclasses store other parameters and override
    the properties ``shape`` and ``rate`` they replace.
    """

    event_ndim = 0
    natural_event_ndims = (0, 0)

    def __init__(self, shape, rate, log_scale=None, check=True):
        shape = as_float_array(shape, "shape")
        rate = as_float_array(rate, "rate")
        if check:
            check_positive(shape, "shape")
            check_positive(rate, "rate")
        self._batch_shape, (self._shape, self._rate) = broadcast_params((shape, rate), (0, 0))
        self._event_shape = ()
        self._set_log_scale(log_scale)

    @classmethod
    def family(cls) -> type:
        return Gamma

    @classmethod
    def unbatched(cls, shape: float, rate: float, log_scale: float) -> "Gamma":
        """One gamma from Python floats, without conversions or checks (the float paths below)."""
        new = object.__new__(Gamma)
        new._shape, new._rate = np.float64(shape), np.float64(rate)
        new._log_scale = ZERO_LOG_SCALE if log_scale == 0.0 else np.float64(log_scale)  # shared zero: see normalised()
        new._batch_shape, new._event_shape = (), ()
        return new

    def power(self, exponent) -> "Gamma":
        """``(e^s Gamma(a, b))^w`` renormalised: ``Gamma(w (a - 1) + 1, w b)``, the log-scale staying the integral.

        One gamma and one exponent (a collapsed plate's message raised to N)
        are computed on floats, ``w s + A(a', b') - w A(a, b)`` with
        ``A(a, b) = log Γ(a) - a log b``; anything else as every exponential family.
        """
        if self._batch_shape or type(exponent) not in (float, np.float64):
            return super().power(exponent)
        w, shape, rate = float(exponent), float(self.shape), float(self.rate)
        powered_shape, powered_rate = w * (shape - 1.0) + 1.0, w * rate
        if not (powered_shape > 0.0 and rate > 0.0 and shape > 0.0 and w > 0.0):
            return super().power(exponent)  # improper: let the array path give its infinities
        log_scale = (w * float(self._log_scale) + math.lgamma(powered_shape) - powered_shape * math.log(powered_rate)
                     - w * (math.lgamma(shape) - shape * math.log(rate)))
        return Gamma.unbatched(powered_shape, powered_rate, log_scale)

    # ---- parameters ----
    @property
    def shape(self):
        return self._shape

    @property
    def rate(self):
        return self._rate

    @property
    def scale(self):
        return 1.0 / self.rate

    # ---- moments ----
    @expectation
    def mean(self):
        return self.shape / self.rate

    @property
    def var(self):
        return self.shape / self.rate**2

    @property
    def mode(self):
        """``max(shape - 1, 0) / rate``: for ``shape < 1`` the density diverges at zero."""
        return np.maximum(self.shape - 1.0, 0.0) / self.rate

    @expectation
    def mean_log(self):
        """``E[log x] = digamma(shape) - log(rate)``.

        Kept once computed (a distribution is never modified): the update that
        reads a marginal and the free energy after the sweep share it.
        """
        value = self.__dict__.get("_mean_log")
        if value is None:
            value = self._mean_log = self._digamma_shape() - np.log(self.rate)
        return value

    def _digamma_shape(self):
        """``ψ(shape)``, kept once computed: ``mean_log`` and the entropy both read it."""
        value = self.__dict__.get("_digamma")
        if value is None:
            value = self._digamma = digamma(self.shape)
        return value

    @expectation
    def mean_inverse(self):
        """``E[1/x] = rate / (shape - 1)``; infinite where ``shape <= 1``."""
        has_mean = self.shape > 1.0
        # The inner where keeps the division away from zero so no warning is raised.
        return np.where(has_mean, self.rate / np.where(has_mean, self.shape - 1.0, 1.0), np.inf)

    # ---- exponential family ----
    def natural_parameters(self):
        shape, rate = self.shape, self.rate
        if type(shape) is np.float64 and type(rate) is np.float64:
            return (shape - 1.0, -rate)
        # a plate of N messages: computed once and kept (read by the engine's check and by the reduction)
        eta = self.__dict__.get("_natural_parameters")
        if eta is None:
            eta = self._natural_parameters = (elementwise(_minus_one, shape), elementwise(np.negative, rate))
        return eta

    @classmethod
    def from_natural(cls, eta, log_scale=None):
        shape_minus_one, minus_rate = eta
        return Gamma(shape_minus_one + 1.0, -minus_rate, log_scale=log_scale, check=False)

    @classmethod
    def log_partition_of(cls, eta):
        shape_minus_one, minus_rate = eta
        shape = shape_minus_one + 1.0
        return gammaln(shape) - shape * np.log(-minus_rate)

    @classmethod
    def log_base_measure_of(cls, eta):
        return 0.0

    def expected_statistics(self):
        return (self.mean_log, self.mean)

    # ---- densities ----
    def entropy(self):
        shape, rate = self.shape, self.rate
        if type(shape) is np.float64 and type(rate) is np.float64 and shape > 0.0 and rate > 0.0:
            # one gamma (a global precision): the same formula on floats, ψ(shape) shared with mean_log
            return np.float64(float(shape) - math.log(rate) + math.lgamma(shape)
                              + (1.0 - float(shape)) * float(self._digamma_shape()))
        return shape - np.log(rate) + gammaln(shape) + (1.0 - shape) * digamma(shape)

    def logpdf(self, x):
        """Log density at ``x`` (broadcast against ``batch_shape``); ``-inf`` for ``x < 0``."""
        x = np.asarray(x, dtype=float)
        shape, rate = self.shape, self.rate
        # xlogy gives the right limits at x = 0 (0 for shape = 1, -inf above, +inf below);
        # log of a negative x is NaN, which the where below replaces.
        with np.errstate(divide="ignore", invalid="ignore"):
            density = xlogy(shape - 1.0, x) - rate * x + shape * np.log(rate) - gammaln(shape)
        return np.where(x >= 0.0, density, -np.inf)

    def sample(self, rng, size=()):
        size = (size,) if np.isscalar(size) else tuple(size)
        return rng.gamma(self.shape, self.scale, size + self.batch_shape)

    def __repr__(self):
        if self.batch_shape == ():
            return f"{type(self).__name__}(shape={float(self.shape):.6g}, rate={float(self.rate):.6g})"
        return f"{type(self).__name__}(batch_shape={self.batch_shape})"


def _plus_one(x):
    return x + 1.0


class GammaNatural(Gamma):
    """Gamma stored by its natural parameters ``(shape - 1, -rate)``.

    For a plate of N variational messages the engine reads only natural
    parameters (the equality node's reduction, the check for NaN), so a rule
    that has them makes its message without forming ``rate`` as well: one
    N-element array instead of two. ``shape`` and ``rate`` are formed, once,
    if asked for.
    """

    def __init__(self, shape_minus_one, minus_rate, log_scale=None):
        shape_minus_one = as_float_array(shape_minus_one, "shape - 1")
        minus_rate = as_float_array(minus_rate, "-rate")
        self._batch_shape, eta = broadcast_params((shape_minus_one, minus_rate), (0, 0))
        self._natural_parameters = eta
        self._event_shape = ()
        self._set_log_scale(log_scale)

    def natural_parameters(self):
        return self._natural_parameters

    @property
    def shape(self):
        shape = self.__dict__.get("_shape")
        if shape is None:
            shape = self._shape = elementwise(_plus_one, self.natural_parameters()[0])
        return shape

    @property
    def rate(self):
        rate = self.__dict__.get("_rate")
        if rate is None:
            rate = self._rate = elementwise(np.negative, self.natural_parameters()[1])
        return rate


class GammaNaturalOnDemand(GammaNatural):
    """A plate of gamma messages given by the sums of their natural parameters; the elements made if asked.

    Over a plate of N variational messages to a global precision the engine
    reads only the sums of the natural parameters (the equality node's
    reduction and the check of the message), which a rule may have without
    forming the N elements: ``Σ_i -S_i / 2`` from one pass over the data.
    ``elements`` makes the per-element ``-rate`` (shape ``batch_shape``) when
    something does ask for them (a product with another plate, a damped
    update); it must give the same numbers the totals sum up.

    Parameters
    ----------
    shape_minus_one : float       shared by every element
    elements : callable () -> ndarray, the per-element ``-rate``
    batch_shape : tuple
    totals : (float, float)       the sums over the batch of ``shape - 1`` and ``-rate``
    keep : int                    leading batch axes not summed in ``totals`` (arrays of shape
                                  ``batch_shape[:keep]``): the copies of a model with copies
    """

    def __init__(self, shape_minus_one: float, elements, batch_shape: tuple, totals: tuple, keep: int = 0):
        self._shape_minus_one = np.float64(shape_minus_one)
        self._elements = elements
        self._batch_shape = tuple(batch_shape)
        self._event_shape = ()
        self.with_natural_parameter_totals(tuple(totals), keep)
        self._set_log_scale(None)

    def natural_parameters(self):
        eta = self.__dict__.get("_natural_parameters")
        if eta is None:
            minus_rate = np.asarray(self._elements(), dtype=float)
            if minus_rate.shape != self._batch_shape:
                raise ValueError(f"the per-element -rate has shape {minus_rate.shape}, the message's batch is "
                                 f"{self._batch_shape}")
            eta = self._natural_parameters = (np.broadcast_to(self._shape_minus_one, self._batch_shape), minus_rate)
        return eta


class GammaShapeScale(Gamma):
    """Gamma with ``shape`` (> 0) and ``scale = 1 / rate`` (> 0); ``mean = shape * scale``."""

    def __init__(self, shape, scale, log_scale=None, check=True):
        shape = as_float_array(shape, "shape")
        scale = as_float_array(scale, "scale")
        if check:
            check_positive(shape, "shape")
            check_positive(scale, "scale")
        self._batch_shape, (self._shape, self._scale) = broadcast_params((shape, scale), (0, 0))
        self._event_shape = ()
        self._set_log_scale(log_scale)

    @property
    def rate(self):
        return 1.0 / self._scale

    @property
    def scale(self):
        return self._scale

    def __repr__(self):
        if self.batch_shape == ():
            return f"GammaShapeScale(shape={float(self.shape):.6g}, scale={float(self.scale):.6g})"
        return f"GammaShapeScale(batch_shape={self.batch_shape})"
