"""Credible intervals of functionals h(θ) of the Gaussian mixture's parameters θ = (π, μ, Λ) under its posteriors
q(π) = Dir(α) and q(μ_k, Λ_k) = N(m_k, (β_k Λ_k)⁻¹) W(W_k, ν_k) — what a TVB table is queried with.

**Functionals** (:class:`Weight`, :class:`MeanProjection`, :class:`MonteCarlo`, or a string, :func:`functional`):
the marginal of a weight π_k under Dir(α) is Beta(α_k, Σα − α_k); the marginal of a mean μ_k under the
normal–Wishart is a multivariate t with ν_k − d + 1 degrees of freedom, location m_k and scale matrix
W_k⁻¹ / (β_k (ν_k − d + 1)), so a projection aᵀμ_k (a coordinate, the sum of the coordinates) is a t with
location aᵀm_k and scale (aᵀ W_k⁻¹ a / (β_k (ν_k − d + 1)))^{1/2}; any other h(θ) has equal-tailed Monte Carlo
intervals from draws of q. Intervals are equal-tailed; the point estimate is h at the posterior mean
(E[π], m, E[Λ] = ν W). :class:`Intervals` (lower, upper, point) is what every table's functionals return, the
Bayesian mixture linear regression's too (:mod:`fgraph.models.tvb.bmlr`).
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from fgraph.models.tvb.arguments import check_level, check_positive_integer
from fgraph.models.tvb.errors import FunctionalError, UnknownFunctionalError

__all__ = ["Intervals", "Functional", "Weight", "MeanProjection", "MonteCarlo", "functional", "credible_intervals"]


@dataclass(frozen=True)
class Intervals:
    """Equal-tailed credible intervals ``[lower, upper]`` of a functional and its point estimate (h at the
    posterior mean), arrays of the posteriors' leading shape."""

    lower: np.ndarray
    upper: np.ndarray
    point: np.ndarray

    @property
    def length(self) -> np.ndarray:
        return self.upper - self.lower

    def __getitem__(self, index) -> "Intervals":
        return Intervals(self.lower[index], self.upper[index], self.point[index])


def _component(posteriors: dict, component) -> np.ndarray:
    """Indices (leading shape) of the component: a fixed k, or ``"largest"``, the component of largest α."""
    alpha = np.asarray(posteriors["alpha"], dtype=float)
    K = alpha.shape[-1]
    if component == "largest":
        return np.argmax(alpha, axis=-1)
    if isinstance(component, bool) or not isinstance(component, numbers.Integral) or not -K <= component < K:
        raise FunctionalError(f"TVB: component {component!r} does not exist in a mixture of K = {K} components; "
                              "give 0 .. K − 1 or 'largest'")
    return np.full(alpha.shape[:-1], int(component) % K)


def _pick(array: np.ndarray, index: np.ndarray, event_ndim: int) -> np.ndarray:
    """``array[..., index, <event>]`` with one index per leading element."""
    expanded = index.reshape(index.shape + (1,) * (event_ndim + 1))
    return np.take_along_axis(array, expanded, axis=index.ndim)[(Ellipsis, 0) + (slice(None),) * event_ndim]


class Functional:
    """A real functional h(θ) of the mixture's parameters θ = (π, μ, Λ) with credible intervals under q."""

    name = "h"

    def intervals(self, posteriors: dict, level: float) -> Intervals:
        """Intervals at level ``level`` = 1 − α for posteriors with any leading shape."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.name


class Weight(Functional):
    """π_k, the weight of component k (or of the component of largest weight, ``"largest"``): under Dir(α) its
    marginal is Beta(α_k, Σ_j α_j − α_k); the point estimate is E[π_k] = α_k / Σ_j α_j."""

    def __init__(self, component=0):
        self.component = component
        self.name = f"weight[{component}]"

    def intervals(self, posteriors: dict, level: float) -> Intervals:
        from scipy.special import betaincinv

        alpha = np.asarray(posteriors["alpha"], dtype=float)
        a = _pick(alpha, _component(posteriors, self.component), 0)
        b = alpha.sum(axis=-1) - a
        tail = 0.5 * (1.0 - level)
        return Intervals(betaincinv(a, b, tail), betaincinv(a, b, 1.0 - tail), a / (a + b))


class MeanProjection(Functional):
    """aᵀμ_k for a fixed vector ``coefficients`` a (a coordinate, the sum of the coordinates, a contrast) of the mean
    of component k (or ``"largest"``): the marginal of μ_k is a multivariate t with ν_k − d + 1 degrees of freedom,
    location m_k and scale matrix W_k⁻¹ / (β_k (ν_k − d + 1)), so aᵀμ_k is a t with location aᵀm_k and scale
    (aᵀ W_k⁻¹ a / (β_k (ν_k − d + 1)))^{1/2}; the point estimate is aᵀm_k."""

    def __init__(self, component=0, coefficients=None, name: str | None = None):
        self.component = component
        self.coefficients = None if coefficients is None else np.asarray(coefficients, dtype=float)
        if self.coefficients is not None and (self.coefficients.ndim != 1 or not np.all(np.isfinite(
                self.coefficients))):
            raise FunctionalError(f"TVB: the coefficients a of aᵀμ_k must be a finite vector, got {coefficients!r}")
        self.name = name or f"mean_projection[{component}, {coefficients}]"

    @classmethod
    def coordinate(cls, component, coordinate: int, dim: int) -> "MeanProjection":
        """μ_kj, coordinate j of the mean of component k in d = ``dim`` dimensions."""
        if isinstance(coordinate, bool) or not isinstance(coordinate, numbers.Integral) or not 0 <= coordinate < dim:
            raise FunctionalError(f"TVB: coordinate {coordinate!r} does not exist in d = {dim} dimensions")
        return cls(component, np.eye(dim)[coordinate], name=f"mean[{component}, {coordinate}]")

    def intervals(self, posteriors: dict, level: float) -> Intervals:
        from scipy.special import stdtrit

        mean = np.asarray(posteriors["mean"], dtype=float)
        d = mean.shape[-1]
        a = np.ones(d) if self.coefficients is None else self.coefficients
        if a.shape != (d,):
            raise FunctionalError(f"TVB: {self.name} has {a.size} coefficients for means of d = {d} dimensions")
        k = _component(posteriors, self.component)
        m = _pick(mean, k, 1)
        scale = _pick(np.asarray(posteriors["scale"], dtype=float), k, 2)
        beta = _pick(np.asarray(posteriors["precision_scale"], dtype=float), k, 0)
        dof = _pick(np.asarray(posteriors["df"], dtype=float), k, 0) - d + 1.0
        projected = np.einsum("i,...ij,j->...", a, np.linalg.inv(scale), a) / (beta * dof)  # aᵀ W⁻¹ a / (β dof)
        location = m @ a
        half = stdtrit(dof, 0.5 * (1.0 + level)) * np.sqrt(projected)
        return Intervals(location - half, location + half, location)


class MonteCarlo(Functional):
    """Any h(θ): equal-tailed intervals from ``n_samples`` draws of q (π ~ Dir(α), (μ_k, Λ_k) from the
    normal–Wishart), the point estimate h at the posterior mean.

    ``h(theta)`` gets a dict of arrays with any leading shape — ``"weights"`` (..., K), ``"means"`` (..., K, d),
    ``"precisions"`` (..., K, d, d) — and returns an array of that leading shape (one value per draw), so it must
    be written with numpy over the leading axes (``lambda t: t["means"][..., 0, :].sum(-1)``). The draws come from
    ``np.random.default_rng(seed)``: the same posteriors, ``seed`` and ``n_samples`` give the same intervals.
    """

    def __init__(self, h, n_samples: int = 4000, seed: int = 0, name: str | None = None):
        if not callable(h):
            raise FunctionalError(f"TVB: a Monte Carlo functional needs a callable h(theta), got {h!r}")
        self.h = h
        self.n_samples = check_positive_integer("n_samples", n_samples)
        self.seed = seed
        self.name = name or f"monte_carlo[{getattr(h, '__name__', 'h')}]"

    def _evaluate(self, theta: dict, shape: tuple) -> np.ndarray:
        value = np.asarray(self.h(theta), dtype=float)
        if value.shape != shape:
            raise FunctionalError(f"TVB: {self.name} returned shape {value.shape} for parameters of leading shape "
                                  f"{shape}; h must map each draw to one number (numpy over the leading axes)")
        return value

    def intervals(self, posteriors: dict, level: float) -> Intervals:
        from fgraph.families.normal_wishart import NormalWishart

        alpha = np.asarray(posteriors["alpha"], dtype=float)
        leading = alpha.shape[:-1]
        q = NormalWishart(np.asarray(posteriors["mean"], dtype=float), np.asarray(posteriors["precision_scale"]),
                          np.asarray(posteriors["scale"], dtype=float), np.asarray(posteriors["df"]), check=False)
        mean_theta = {"weights": alpha / alpha.sum(-1, keepdims=True), "means": q.location,
                      "precisions": np.asarray(posteriors["df"])[..., None, None] * q.scale}
        point = self._evaluate(mean_theta, leading)
        rng = np.random.default_rng(self.seed)
        gammas = rng.standard_gamma(np.broadcast_to(alpha, (self.n_samples,) + alpha.shape))
        means, precisions = q.sample(rng, self.n_samples)
        draws = {"weights": gammas / gammas.sum(-1, keepdims=True), "means": means, "precisions": precisions}
        values = self._evaluate(draws, (self.n_samples,) + leading)
        tail = 0.5 * (1.0 - level)
        lower, upper = np.quantile(values, [tail, 1.0 - tail], axis=0)
        return Intervals(lower, upper, point)


KNOWN_FUNCTIONALS = "'weight[k]', 'weight[largest]', 'mean[k, j]', 'mean_sum[k]' (k a component or 'largest')"


def functional(spec, dim: int | None = None) -> Functional:
    """A :class:`Functional` from ``spec``: a Functional (returned as is), a callable h(theta) (Monte Carlo), or a
    string — ``"weight[k]"`` (π_k), ``"mean[k, j]"`` (μ_kj; needs ``dim``), ``"mean_sum[k]"`` (Σ_j μ_kj), k an
    integer or ``largest``. Anything else is an :class:`UnknownFunctionalError`."""
    import re

    if isinstance(spec, Functional):
        return spec
    if callable(spec):
        return MonteCarlo(spec)
    if not isinstance(spec, str):
        raise UnknownFunctionalError(f"TVB: unknown functional {spec!r}; give one of {KNOWN_FUNCTIONALS}, a "
                                     "Functional or a callable h(theta)")
    match = re.fullmatch(r"\s*(\w+)\s*\[\s*([^\]]*?)\s*\]\s*", spec)
    name, arguments = (match[1], [a.strip() for a in match[2].split(",")]) if match else (spec, [])

    def component(text: str):
        if text == "largest":
            return "largest"
        if re.fullmatch(r"-?\d+", text):
            return int(text)
        raise UnknownFunctionalError(f"TVB: {spec!r}: the component must be an integer or 'largest', got {text!r}")

    if name == "weight" and len(arguments) == 1:
        return Weight(component(arguments[0]))
    if name == "mean_sum" and len(arguments) == 1:
        return MeanProjection(component(arguments[0]), None, name=spec.strip())
    if name == "mean" and len(arguments) == 2 and re.fullmatch(r"\d+", arguments[1]):
        if dim is None:
            return _LazyCoordinate(component(arguments[0]), int(arguments[1]), spec.strip())
        return MeanProjection.coordinate(component(arguments[0]), int(arguments[1]), dim)
    raise UnknownFunctionalError(f"TVB: unknown functional {spec!r}; give one of {KNOWN_FUNCTIONALS}, a Functional "
                                 "or a callable h(theta)")


class _LazyCoordinate(MeanProjection):
    """μ_kj whose dimension is read from the posteriors."""

    def __init__(self, component, coordinate: int, name: str):
        super().__init__(component, None, name=name)
        self.coordinate_index = coordinate

    def intervals(self, posteriors: dict, level: float) -> Intervals:
        d = np.shape(posteriors["mean"])[-1]
        return MeanProjection.coordinate(self.component, self.coordinate_index, d).intervals(posteriors, level)


def credible_intervals(posteriors: dict, spec, level: float = 0.95) -> Intervals:
    """The (``level``) credible intervals of a functional (``spec``: see :func:`functional`) under posteriors
    ``alpha`` (..., K), ``mean`` (..., K, d), ``precision_scale`` (..., K), ``scale`` (..., K, d, d), ``df`` (..., K)
    (e.g. :meth:`fgraph.models.mixtures.gmm.GMMFit.posteriors`), one per leading element."""
    level = check_level(level)
    return functional(spec, np.shape(posteriors["mean"])[-1]).intervals(posteriors, level)

