"""Inverse-gamma distributions over the positive reals (shape-scale form).

If ``τ ~ Gamma(shape, rate=β)`` then ``x = 1/τ ~ InverseGamma(shape, scale=β)``:

    p(x) = β**α / Γ(α) * x**(-α - 1) * exp(-β / x),      x > 0,

with natural parameters ``eta = (-α - 1, -β)``, sufficient statistics
``T(x) = (log x, 1/x)``, base measure ``h(x) = 1`` and log-partition
``A = log Γ(α) - α log β``. ``β`` is a *scale*: ``c x ~ InverseGamma(α, c β)``.

It is the conjugate family of a normal variance: as a function of ``v``,
``N(y | m, v) = (2π)^(-1/2) v^(-1/2) exp(-(y - m)² / (2v))`` has the form
``exp(κ) exp(<eta, T(v)>)`` with ``α = -1/2``, which no proper member has
(``∫ v^(-1/2) exp(-β/v) dv`` diverges). Such a message is an
:class:`InverseGammaLikelihood`: it stores the coefficient ``κ`` instead of a
normalised density, as :class:`~fgraph.families.mvnormal.GaussianLikelihood`
does for flat Gaussian directions, and products with a proper prior (or with
three or more such messages) come back as an ordinary :class:`InverseGamma`.
"""
from __future__ import annotations

import numpy as np

from fgraph.families.base import (
    ExponentialFamily,
    append_event_axes,
    as_float_array,
    broadcast_params,
    check_positive,
    expectation,
)
from fgraph.families.special import digamma, gammaln


class InverseGamma(ExponentialFamily):
    """Distribution (a family of messages and marginals): Inverse gamma with ``shape`` α (> 0) and ``scale`` β (> 0), each broadcast to ``batch_shape``.

    ``mean = β / (α - 1)`` (for α > 1), ``E[1/x] = α / β``, ``E[log x] = log β - ψ(α)``.
    """

    event_ndim = 0
    natural_event_ndims = (0, 0)

    def __init__(self, shape, scale, log_scale=None, check=True):
        shape = as_float_array(shape, "shape")
        scale = as_float_array(scale, "scale")
        if check:
            check_positive(shape, "shape")
            check_positive(scale, "scale")
        self._batch_shape, (self._shape, self._scale) = broadcast_params((shape, scale), (0, 0))
        self._event_shape = ()
        self._set_log_scale(log_scale)

    @classmethod
    def family(cls) -> type:
        return InverseGamma

    # ---- parameters ----
    @property
    def shape(self):
        return self._shape

    @property
    def scale(self):
        return self._scale

    # ---- moments ----
    @expectation
    def mean(self):
        """``β / (α - 1)``; infinite where ``α <= 1``."""
        has_mean = self.shape > 1.0
        # the inner where keeps the division away from zero so no warning is raised
        return np.where(has_mean, self.scale / np.where(has_mean, self.shape - 1.0, 1.0), np.inf)

    @property
    def var(self):
        """``β² / ((α - 1)² (α - 2))``; infinite where ``α <= 2``."""
        has_var = self.shape > 2.0
        shape = np.where(has_var, self.shape, 3.0)
        return np.where(has_var, self.scale**2 / ((shape - 1.0) ** 2 * (shape - 2.0)), np.inf)

    @expectation
    def second_moment(self):
        """``E[x²] = β² / ((α - 1)(α - 2))``; infinite where ``α <= 2``."""
        has_var = self.shape > 2.0
        shape = np.where(has_var, self.shape, 3.0)
        return np.where(has_var, self.scale**2 / ((shape - 1.0) * (shape - 2.0)), np.inf)

    @property
    def mode(self):
        return self.scale / (self.shape + 1.0)

    @expectation
    def mean_log(self):
        """``E[log x] = log β - ψ(α)``."""
        return np.log(self.scale) - digamma(self.shape)

    @expectation
    def mean_inverse(self):
        """``E[1/x] = α / β`` (the mean of the gamma variable 1/x)."""
        return self.shape / self.scale

    # ---- exponential family ----
    def natural_parameters(self):
        return (-self.shape - 1.0, -self.scale)

    @classmethod
    def from_natural(cls, eta, log_scale=None):
        """The member with natural parameters ``eta``; an :class:`InverseGammaLikelihood` where none is proper.

        For the likelihood, ``log_scale`` is its coefficient κ (it has no normaliser).
        """
        minus_shape_minus_one, minus_scale = eta
        shape, scale = -minus_shape_minus_one - 1.0, -minus_scale
        if _proper(shape, scale):
            return InverseGamma(shape, scale, log_scale=log_scale, check=False)
        return InverseGammaLikelihood(shape, scale, log_scale)

    @classmethod
    def from_coefficient(cls, eta, log_coefficient):
        """``exp(κ) exp(<eta, T(x)>)``: a proper inverse gamma (log-scale ``κ + A``) or a likelihood."""
        minus_shape_minus_one, minus_scale = eta
        shape, scale = -minus_shape_minus_one - 1.0, -minus_scale
        if _proper(shape, scale):
            return InverseGamma(shape, scale, log_scale=log_coefficient + _log_partition(shape, scale), check=False)
        return InverseGammaLikelihood(shape, scale, log_coefficient)

    @classmethod
    def log_partition_of(cls, eta):
        minus_shape_minus_one, minus_scale = eta
        return _log_partition(-minus_shape_minus_one - 1.0, -minus_scale)

    @classmethod
    def log_base_measure_of(cls, eta):
        return 0.0

    def expected_statistics(self):
        return (self.mean_log, self.mean_inverse)

    def power(self, exponent):
        """``(exp(κ) exp(<eta, T>))^ω = exp(ω κ) exp(<ω eta, T>)`` (``h = 1``); improper results stay likelihoods."""
        exponent = np.asarray(exponent, dtype=float)
        eta = tuple(append_event_axes(exponent, e, 0) * e for e in self.natural_parameters())
        return self.from_coefficient(eta, exponent * self.log_coefficient())

    # ---- densities ----
    def entropy(self):
        shape = self.shape
        return shape + np.log(self.scale) + gammaln(shape) - (1.0 + shape) * digamma(shape)

    def logpdf(self, x):
        """Log density at ``x`` (broadcast against ``batch_shape``); ``-inf`` for ``x <= 0``."""
        x = np.asarray(x, dtype=float)
        positive = x > 0.0
        safe = np.where(positive, x, 1.0)  # keeps log and division away from x <= 0
        density = self.shape * np.log(self.scale) - gammaln(self.shape) - (self.shape + 1.0) * np.log(safe) - self.scale / safe
        return np.where(positive, density, -np.inf)

    def sample(self, rng, size=()):
        size = (size,) if np.isscalar(size) else tuple(size)
        return self.scale / rng.gamma(self.shape, 1.0, size + self.batch_shape)

    def __repr__(self):
        if self.batch_shape == ():
            return f"{type(self).__name__}(shape={float(self.shape):.6g}, scale={float(self.scale):.6g})"
        return f"{type(self).__name__}(batch_shape={self.batch_shape})"


class InverseGammaLikelihood(InverseGamma):
    """The function ``exp(κ) x**(-α - 1) exp(-β / x)`` of ``x > 0`` with ``α <= 0`` or ``β <= 0`` somewhere.

    Such a function is not integrable (no member of the family): it is the
    likelihood of a normal variance given one observation (``α = -1/2``) or
    two (``α = 0``). It multiplies and reduces over plates like any message of
    the family, through its natural parameters and coefficient; once a proper
    prior (or a third observation) has been multiplied in, the product is an
    :class:`InverseGamma`. Asking it for a moment, an entropy or a normalised
    density is an error that says so.

    ``log_scale`` holds κ (the partition function is taken as 1), so scales
    added by the engine multiply the function, as for any message.
    """

    def __init__(self, shape, scale, log_scale=None):
        super().__init__(shape, scale, log_scale, check=False)

    @classmethod
    def from_natural(cls, eta, log_scale=None):
        minus_shape_minus_one, minus_scale = eta
        return cls(-minus_shape_minus_one - 1.0, -minus_scale, log_scale)

    def log_partition(self):
        return np.zeros(self._batch_shape)

    def log_value(self, x):
        """``log f(x)``, ``-inf`` for ``x <= 0``."""
        x = np.asarray(x, dtype=float)
        positive = x > 0.0
        safe = np.where(positive, x, 1.0)
        return np.where(positive, self.log_scale - (self.shape + 1.0) * np.log(safe) - self.scale / safe, -np.inf)

    def _improper(self, what: str):
        raise ValueError(
            f"an InverseGammaLikelihood (shape {self.shape!r}, scale {self.scale!r}) has no {what}: it does not "
            "integrate to a finite value; multiply it with a proper prior on the variable first "
            "(e.g. an InverseGamma prior on a variance)"
        )

    @property
    def mean(self):
        self._improper("mean")

    @property
    def var(self):
        self._improper("variance")

    @property
    def second_moment(self):
        self._improper("moments")

    @property
    def mode(self):
        self._improper("mode")

    @property
    def mean_log(self):
        self._improper("moments")

    @property
    def mean_inverse(self):
        self._improper("moments")

    def entropy(self):
        self._improper("entropy")

    def logpdf(self, x):
        self._improper("normalised density (use log_value)")

    def sample(self, rng, size=()):
        self._improper("samples")


def _proper(shape, scale) -> bool:
    return bool(np.all(shape > 0.0) and np.all(scale > 0.0))


def _log_partition(shape, scale):
    """``log Γ(α) - α log β``; NaN where the member is improper (it has no partition function)."""
    if _proper(shape, scale):
        return gammaln(shape) - shape * np.log(scale)
    valid = (shape > 0.0) & (scale > 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(valid, gammaln(shape) - shape * np.log(np.where(valid, scale, 1.0)), np.nan)
