"""Densities of the shape of a gamma variable: ``a**(α - 1) exp(-β a) / Γ(a)**n`` on ``a > 0``.

As a function of its shape ``a``, the gamma factor is

    Gamma(x | a, b) = exp(a (log b + log x) - log Γ(a)) · exp(-log x - b x),

and the variational message ``exp E_q[log Gamma(x | a, b)]`` has the same
form with ``E[log b] + E[log x]`` in place of ``log b + log x``. No standard
family has ``log Γ(a)`` among its statistics, so the shape gets a family of
its own (ReactiveMP's ``GammaShapeLikelihood`` is the case ``α = 1``):

    p(a) ∝ a**(α - 1) exp(-β a) Γ(a)**(-n),

an exponential family with statistics ``T(a) = (log a, a, log Γ(a))``,
natural parameters ``eta = (α - 1, -β, -n)`` and base measure ``h = 1``.
``n`` counts the gamma observations (``n = 1`` per message, ``n = N`` for a
plate; a node power ω makes it fractional), ``α = 1`` for a likelihood, and
a :class:`~fgraph.families.gamma.Gamma` prior is the member with ``n = 0``.
Products with a gamma prior therefore stay in the family, and the mean-field
posterior of a gamma shape is exactly a member: VMP with it is exact
coordinate descent on the free energy.

The log-partition ``A(eta) = log ∫ exp(<eta, T(a)>) da`` has no closed form.
It and the expected statistics ``E[log a]``, ``E[a]``, ``E[log Γ(a)]`` are
computed by quadrature in ``u = log a``, where the integrand
``exp(α u - β e^u - n log Γ(e^u))`` is unimodal: the mode is found by
bisection, the grid spans the region where the integrand is within
``TAIL_NATS`` of its peak, and the trapezoid rule on ``QUADRATURE_POINTS``
equally spaced nodes converges geometrically for this smooth, rapidly
decaying integrand (checked against adaptive quadrature in the tests).
Each instance computes its quadrature once, when first asked.

A member is proper (normalisable) when ``n > 0`` and ``α + n > 0`` (near 0,
``a**(α-1) Γ(a)**(-n) ~ a**(α + n - 1)``; at infinity ``Γ(a)**(-n)`` decays
faster than any exponential), or when ``n = 0``, ``α > 0`` and ``β > 0``.
"""
from __future__ import annotations

from functools import cached_property

import numpy as np

from fgraph.families.base import (
    ExponentialFamily,
    append_event_axes,
    as_float_array,
    broadcast_params,
    check_finite,
    expectation,
)
from fgraph.families.gamma import Gamma
from fgraph.families.pointmass import PointMass
from fgraph.families.special import digamma, gammaln

QUADRATURE_POINTS = 513
TAIL_NATS = 40.0  # the grid ends where the integrand is e^-40 ≈ 4e-18 of its peak
# bisection steps over the 800-wide search range: the grid's centre and ends need no more than ~1e-6
# (they only place the nodes; every weight is computed exactly), the mode property full precision
GRID_STEPS, MODE_STEPS = 30, 64
# u = log a is searched in [LOWEST_LOG, HIGHEST_LOG]: e^-700 is still a normal double, e^100 far above any shape
LOWEST_LOG, HIGHEST_LOG = -700.0, 100.0


class GammaShapeLikelihood(ExponentialFamily):
    """``p(a) ∝ a**(alpha - 1) exp(-beta a) / Γ(a)**count`` on ``a > 0``, batched.

    ``alpha`` and ``beta`` play the roles of a gamma shape and rate (``beta``
    may be negative when ``count > 0``), ``count`` (>= 0) is the number of
    gamma observations whose shape this is the density of. See the module
    docstring for the quadrature behind the normaliser and the moments.
    """

    event_ndim = 0
    natural_event_ndims = (0, 0, 0)
    member_families = (Gamma,)  # a Gamma density is the member with count = 0: products with it stay here

    def __init__(self, alpha, beta, count, log_scale=None, check=True):
        alpha = as_float_array(alpha, "alpha")
        beta = as_float_array(beta, "beta")
        count = as_float_array(count, "count")
        if check:
            check_finite(alpha, "alpha")
            check_finite(beta, "beta")
            check_finite(count, "count")
            if np.any(count < 0):
                raise ValueError(f"count must be non-negative, got minimum {np.min(count)!r}")
            observed = count > 0.0
            if np.any(observed & (alpha + count <= 0.0)):
                raise ValueError("alpha must exceed -count (alpha + count > 0) for a normalisable density")
            if np.any(~observed & (alpha <= 0.0)):
                raise ValueError("alpha must be strictly positive where count = 0 (a gamma density)")
            if np.any(~observed & (beta <= 0.0)):
                raise ValueError("beta must be strictly positive where count = 0 (a gamma density)")
        self._batch_shape, (self._alpha, self._beta, self._count) = broadcast_params((alpha, beta, count), (0, 0, 0))
        self._event_shape = ()
        self._set_log_scale(log_scale)

    @classmethod
    def from_gamma(cls, gamma: Gamma) -> "GammaShapeLikelihood":
        """The same density as the gamma distribution ``gamma`` (the member with ``count = 0``)."""
        return cls(gamma.shape, gamma.rate, 0.0, log_scale=gamma.log_scale, check=False)

    # ---- parameters ----
    @property
    def alpha(self):
        return self._alpha

    @property
    def beta(self):
        return self._beta

    @property
    def count(self):
        return self._count

    # ---- quadrature ----
    @cached_property
    def _moments(self) -> dict:
        return _quadrature(self._alpha, self._beta, self._count)

    # ---- moments ----
    @expectation
    def mean(self):
        return self._moments["mean"]

    @expectation
    def second_moment(self):
        return self._moments["second_moment"]

    @property
    def var(self):
        moments = self._moments
        return moments["second_moment"] - moments["mean"] ** 2

    @expectation
    def mean_log(self):
        return self._moments["mean_log"]

    @expectation
    def mean_log_gamma(self):
        """``E[log Γ(a)]``, the statistic the gamma node's average energy needs for a random shape."""
        return self._moments["mean_log_gamma"]

    @property
    def mode(self):
        """The maximiser of ``(α - 1) log a - β a - n log Γ(a)``; 0 where the density is unbounded at 0."""
        return _mode(self._alpha, self._beta, self._count)

    # ---- exponential family ----
    def natural_parameters(self):
        return (self._alpha - 1.0, -self._beta, -self._count)

    @classmethod
    def from_natural(cls, eta, log_scale=None):
        alpha_minus_one, minus_beta, minus_count = eta
        return cls(alpha_minus_one + 1.0, -minus_beta, -minus_count, log_scale=log_scale, check=False)

    @classmethod
    def from_coefficient(cls, eta, log_coefficient):
        """``exp(κ) exp(<eta, T(a)>)`` normalised: one quadrature, kept by the result for its moments."""
        result = cls.from_natural(eta)
        return result.with_log_scale(log_coefficient + result.log_partition())

    @classmethod
    def log_partition_of(cls, eta):
        alpha_minus_one, minus_beta, minus_count = eta
        return _quadrature(alpha_minus_one + 1.0, -minus_beta, -minus_count)["log_partition"]

    def log_partition(self):
        return self._moments["log_partition"]

    @classmethod
    def log_base_measure_of(cls, eta):
        return 0.0

    def expected_statistics(self):
        moments = self._moments
        return (moments["mean_log"], moments["mean"], moments["mean_log_gamma"])

    def entropy(self):
        """``A(eta) - <eta, E[T]>`` (``h = 1``) from this instance's quadrature."""
        moments = self._moments
        return (moments["log_partition"] - (self._alpha - 1.0) * moments["mean_log"] + self._beta * moments["mean"]
                + self._count * moments["mean_log_gamma"])

    def power(self, exponent):
        """``(exp(κ) exp(<eta, T>))^ω = exp(ω κ) exp(<ω eta, T>)`` (``h = 1``), one quadrature."""
        exponent = np.asarray(exponent, dtype=float)
        eta = tuple(append_event_axes(exponent, e, 0) * e for e in self.natural_parameters())
        return self.from_coefficient(eta, exponent * self.log_coefficient())

    # ---- densities ----
    def logpdf(self, x):
        """Log density at ``x`` (broadcast against ``batch_shape``); ``-inf`` for ``x <= 0``."""
        x = np.asarray(x, dtype=float)
        positive = x > 0.0
        safe = np.where(positive, x, 1.0)
        density = (self._alpha - 1.0) * np.log(safe) - self._beta * safe - self._count * gammaln(safe) - self.log_partition()
        return np.where(positive, density, -np.inf)

    def sample(self, rng, size=()):
        """Draws by inverting the cumulative distribution on the quadrature grid (accurate to the grid)."""
        size = (size,) if np.isscalar(size) else tuple(size)
        grid, weights, _ = _grid(self._alpha, self._beta, self._count)
        grid = grid.reshape(-1, QUADRATURE_POINTS)
        weights = weights.reshape(-1, QUADRATURE_POINTS)
        # the trapezoid rule's cumulative integral, 0 at the first node
        cumulative = np.concatenate([np.zeros((weights.shape[0], 1)),
                                     np.cumsum(0.5 * (weights[:, 1:] + weights[:, :-1]), axis=-1)], axis=-1)
        cumulative /= cumulative[:, -1:]
        uniforms = rng.uniform(size=size + (grid.shape[0],))
        log_draws = np.empty_like(uniforms)
        for element in range(grid.shape[0]):  # a handful of global shape parameters; not a hot path
            log_draws[..., element] = np.interp(uniforms[..., element], cumulative[element], grid[element])
        return np.exp(log_draws).reshape(size + self.batch_shape)

    def __repr__(self):
        if self.batch_shape == ():
            return (f"GammaShapeLikelihood(alpha={float(self._alpha):.6g}, beta={float(self._beta):.6g}, "
                    f"count={float(self._count):.6g})")
        return f"GammaShapeLikelihood(batch_shape={self.batch_shape})"


# ---------------------------------------------------------------- quadrature
def _proper(alpha, beta, count):
    return np.where(count > 0.0, alpha + count > 0.0, (count == 0.0) & (alpha > 0.0) & (beta > 0.0))


def _log_integrand(u, alpha, beta, count):
    """``log`` of the integrand in ``u = log a``: ``α u - β e^u - n log Γ(e^u)`` (the Jacobian ``a`` included)."""
    a = np.exp(u)
    return alpha * u - beta * a - count * gammaln(a)


def _slope(u, alpha, beta, count):
    """``d/du`` of :func:`_log_integrand`: ``α - a (β + n ψ(a))``; positive near 0, negative far out."""
    a = np.exp(u)
    return alpha - a * (beta + count * digamma(a))


def _bisect(function, low, high, steps=GRID_STEPS):
    """The point in ``[low, high]`` (arrays) where the decreasing ``function`` changes sign."""
    for _ in range(steps):
        middle = 0.5 * (low + high)
        positive = function(middle) > 0.0
        low, high = np.where(positive, middle, low), np.where(positive, high, middle)
    return 0.5 * (low + high)


def _safe_parameters(alpha, beta, count):
    """(proper, alpha, beta, count) broadcast together, improper elements replaced by a harmless member."""
    alpha, beta, count = np.broadcast_arrays(np.asarray(alpha, float), np.asarray(beta, float), np.asarray(count, float))
    proper = _proper(alpha, beta, count)
    return proper, np.where(proper, alpha, 1.0), np.where(proper, beta, 1.0), np.where(proper, count, 0.0)


def _grid(alpha, beta, count):
    """Trapezoid nodes ``u`` (shape ``batch + (K,)``), weights ``exp(log integrand - peak)`` and the peak.

    Improper elements are computed for a harmless member; :func:`_quadrature` marks them NaN.
    """
    _, alpha, beta, count = _safe_parameters(alpha, beta, count)
    low, high = np.full(alpha.shape, LOWEST_LOG), np.full(alpha.shape, HIGHEST_LOG)
    if np.any(_slope(high, alpha, beta, count) >= 0.0):
        raise ValueError("GammaShapeLikelihood: the density of the shape does not decay before a = e^100; "
                         "its parameters are out of range")
    mode = _bisect(lambda u: _slope(u, alpha, beta, count), low, high)
    peak = _log_integrand(mode, alpha, beta, count)
    if np.any(_log_integrand(low, alpha, beta, count) > peak - TAIL_NATS):
        raise ValueError(
            "GammaShapeLikelihood: the density of the shape is too flat near zero (alpha + count "
            f"= {np.min(alpha + count)!r}) for its quadrature; give the shape a less vague prior"
        )

    def drop(u):  # positive within TAIL_NATS of the peak, negative beyond
        return _log_integrand(u, alpha, beta, count) - (peak - TAIL_NATS)

    left = _bisect(lambda u: -drop(u), low, mode)
    right = _bisect(drop, mode, high)
    steps = np.linspace(0.0, 1.0, QUADRATURE_POINTS)
    grid = left[..., None] + (right - left)[..., None] * steps
    weights = np.exp(_log_integrand(grid, alpha[..., None], beta[..., None], count[..., None]) - peak[..., None])
    return grid, weights, peak


def _quadrature(alpha, beta, count) -> dict:
    """``log_partition``, ``mean_log``, ``mean``, ``second_moment``, ``mean_log_gamma`` (batch-shaped; NaN if improper)."""
    proper = _safe_parameters(alpha, beta, count)[0]
    grid, weights, peak = _grid(alpha, beta, count)
    total = weights.sum(axis=-1)
    step = grid[..., 1] - grid[..., 0]
    a = np.exp(grid)
    moments = {
        "log_partition": peak + np.log(step * total),
        "mean_log": np.sum(weights * grid, axis=-1) / total,
        "mean": np.sum(weights * a, axis=-1) / total,
        "second_moment": np.sum(weights * a * a, axis=-1) / total,
        "mean_log_gamma": np.sum(weights * gammaln(a), axis=-1) / total,
    }
    return {name: _like(np.where(proper, value, np.nan), alpha, beta, count) for name, value in moments.items()}


def _like(value, *parameters):
    """``value`` as the family stores scalars: a ``np.float64`` when every parameter is unbatched."""
    return value[()] if all(np.ndim(p) == 0 for p in parameters) else value


def _mode(alpha, beta, count):
    """Maximiser of ``(α - 1) log a - β a - n log Γ(a)``: where ``(α - 1) - a (β + n ψ(a))`` changes sign."""
    proper, alpha, beta, count = _safe_parameters(alpha, beta, count)
    at_zero = alpha - 1.0 + count <= 0.0  # the density is unbounded (or largest) at 0
    low, high = np.full(alpha.shape, LOWEST_LOG), np.full(alpha.shape, HIGHEST_LOG)
    interior = np.exp(_bisect(lambda u: _slope(u, alpha - 1.0, beta, count), low, high, MODE_STEPS))
    mode = np.where(proper, np.where(at_zero, 0.0, interior), np.nan)
    return _like(mode, alpha)


# ------------------------------------------------------------------ energies
def expected_log_gamma(distribution):
    """``E[log Γ(a)]`` under the marginal of a gamma shape ``a`` (the average energies of gamma factors need it).

    Exact for a point mass (a known shape); by this family's quadrature for a
    :class:`GammaShapeLikelihood` or a :class:`~fgraph.families.gamma.Gamma`
    marginal (the member with ``count = 0``).
    """
    if isinstance(distribution, (PointMass, GammaShapeLikelihood)):  # observed plates average it over the data
        return distribution.mean_log_gamma
    if isinstance(distribution, Gamma):
        return GammaShapeLikelihood.from_gamma(distribution).mean_log_gamma
    raise TypeError(
        f"E[log Γ(shape)] is not available for a {type(distribution).__name__} marginal of a gamma shape; "
        "give the shape a Gamma prior (its marginal is then a GammaShapeLikelihood) or a point mass"
    )
