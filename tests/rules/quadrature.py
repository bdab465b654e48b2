"""Sum-product messages by numerical integration, to check message rules and their log-scales.

The sum-product message out of a factor ``f`` towards interface ``t`` is

    μ(t) = ∫ f(t, x_1, ..., x_k) m_1(x_1) ... m_k(x_k) dx_1 ... dx_k

with the incoming messages ``m_j`` normalised (the engine adds their
log-scales); clamped interfaces are substituted by their values instead of
integrated. A rule returns ``μ`` as a normalised density and
``log_scale = log ∫ μ(t) dt``, so for every ``t``

    log μ(t) = rule.log_scale + rule.logpdf(t).

:func:`log_message` evaluates ``log μ(t)`` with ``scipy.integrate.quad`` or
``dblquad`` (by the number of integrated interfaces) and :func:`log_integral`
the log-scale ``log ∫ μ(t) dt`` with one more integral.

A factor is either a density (:class:`DensityFactor`) or a deterministic
constraint ``δ(g(x))`` (:class:`DeltaFactor`). The delta is integrated out
analytically against one incoming message, ``∫ δ(g) m(x_k) dx_k =
m(x_k*) / |∂g/∂x_k|`` at the root ``x_k*`` of ``g``; every other integral is
numerical. Incoming messages are univariate normals (or point masses).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import integrate

from fgraph.families import PointMass, UnivariateNormal

# Half-width of the integration range, in standard deviations of the message
# whose variable is integrated: the integrand is bounded by a constant times
# that message, so the truncated mass is below exp(-12²/2) ≈ 5e-32 of it.
HALF_WIDTH = 12.0
QUAD_OPTIONS = dict(epsabs=0.0, epsrel=1e-12, limit=400)
DBLQUAD_OPTIONS = dict(epsabs=1e-14, epsrel=1e-11)


def normal_pdf(x: float, mean: float, var: float) -> float:
    return math.exp(-0.5 * (x - mean) ** 2 / var) / math.sqrt(2.0 * math.pi * var)


@dataclass(frozen=True)
class DensityFactor:
    """``f(values)``, a non-negative function of a dict interface -> float."""

    density: Callable


@dataclass(frozen=True)
class DeltaFactor:
    """``δ(g(x))``: for each interface ``k``, ``solve[k](values) = (x_k*, |∂g/∂x_k|)`` given the other values."""

    solve: dict


@dataclass(frozen=True)
class _Gaussian:
    mean: float
    var: float

    def pdf(self, x: float) -> float:
        return normal_pdf(x, self.mean, self.var)

    def limits(self) -> tuple:
        half = HALF_WIDTH * math.sqrt(self.var)
        return self.mean - half, self.mean + half


def _split(incoming: dict):
    """Incoming messages as (clamped values, normalised Gaussians)."""
    clamped, gaussians = {}, {}
    for interface, message in incoming.items():
        if isinstance(message, PointMass):
            clamped[interface] = float(message.value)
        elif isinstance(message, UnivariateNormal):
            gaussians[interface] = _Gaussian(float(message.mean), float(message.var))
        else:
            raise TypeError(f"incoming message on {interface!r}: expected a univariate normal or a point mass")
    return clamped, gaussians


def _integrand(factor, target: str, incoming: dict):
    """``(h, order)``: ``h(t, *x)`` is the integrand of ``μ(t)`` over the interfaces ``order``."""
    clamped, gaussians = _split(incoming)
    order = list(gaussians)
    if isinstance(factor, DeltaFactor):
        if not order:
            raise ValueError("every other interface is clamped: the message is a point mass, not a density")
        eliminated = order.pop()  # integrated analytically against the delta

        def h(t, *x):
            values = dict(clamped, **dict(zip(order, x)), **{target: t})
            root, jacobian = factor.solve[eliminated](values)
            weight = gaussians[eliminated].pdf(root) / jacobian
            for name, value in zip(order, x):
                weight *= gaussians[name].pdf(value)
            return weight

    else:

        def h(t, *x):
            values = dict(clamped, **dict(zip(order, x)), **{target: t})
            weight = factor.density(values)
            for name, value in zip(order, x):
                weight *= gaussians[name].pdf(value)
            return weight

    return h, [gaussians[name] for name in order]


def _peak(function, low: float, high: float) -> float:
    """The location of the largest of 2001 samples of ``function`` on [low, high] (a quad breakpoint)."""
    grid = np.linspace(low, high, 2001)
    return float(grid[np.argmax([function(x) for x in grid])])


def _quad(function, low: float, high: float) -> float:
    value, _ = integrate.quad(function, low, high, points=[_peak(function, low, high)], **QUAD_OPTIONS)
    return value


def log_message(factor, target: str, incoming: dict, points) -> np.ndarray:
    """``log μ(t)`` at each of ``points`` (shape ``(n,)``), integrating over the Gaussian incoming messages."""
    h, variables = _integrand(factor, target, incoming)
    values = []
    for t in np.asarray(points, dtype=float):
        if not variables:
            value = h(t)
        elif len(variables) == 1:
            value = _quad(lambda x: h(t, x), *variables[0].limits())
        elif len(variables) == 2:
            (a, b), (c, d) = variables[0].limits(), variables[1].limits()
            value, _ = integrate.dblquad(lambda y, x: h(t, x, y), a, b, c, d, **DBLQUAD_OPTIONS)
        else:
            raise NotImplementedError("more than two integrated interfaces")
        values.append(math.log(value))
    return np.array(values)


def log_integral(factor, target: str, incoming: dict, target_limits: tuple) -> float:
    """``log ∫ μ(t) dt`` over ``target_limits``: the log-scale a rule must return."""
    h, variables = _integrand(factor, target, incoming)
    low, high = target_limits
    if not variables:
        return math.log(_quad(h, low, high))
    if len(variables) == 1:
        c, d = variables[0].limits()
        value, _ = integrate.dblquad(lambda x, t: h(t, x), low, high, c, d, **DBLQUAD_OPTIONS)
        return math.log(value)
    raise NotImplementedError("the log-scale check integrates over at most two variables")
