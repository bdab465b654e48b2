"""Finite mixtures ``Σ_k w_k p_k(x)`` of distributions of one family.

A mixture message arises wherever a discrete switch selects between
alternatives: the forward message of the mixture node, a message through a
linear node whose input is a mixture. Products with other messages stay
mixtures (each component multiplied, the weights multiplied by the
components' normalisers, :func:`fgraph.families.product.mixture_product`),
so scale factors and evidence flow through them.

``Mixture.of(family)`` returns the mixture class whose components belong to
``family`` (e.g. ``Mixture.of(UnivariateNormal)``); the compiler uses it to
type the messages of rules that take mixtures apart component by component.

Expectations are linear in the distribution, ``E[g(x)] = Σ_k w_k E_k[g(x)]``,
so a mixture class offers every expectation its component family marks
(:class:`~fgraph.families.base.expectation`: ``mean_log`` of a mixture of
Beta, ``mean_inverse`` of a mixture of Gamma, …) and, for exponential
families, the expected sufficient statistics: what variational rules and
average energies read from a marginal.
"""
from __future__ import annotations

import math

import numpy as np

from fgraph.errors import ModelError
from fgraph.families.base import (
    ZERO_LOG_SCALE,
    Distribution,
    ExponentialFamily,
    expectation,
    expectation_names,
    logsumexp,
    stack_last,
)


class Mixture(Distribution):
    """``Σ_k w_k p_k(x)``, batched.

    Parameters
    ----------
    log_weights : array, shape ``batch + (K,)``
        Logarithms of the (possibly unnormalised) weights; they are normalised.
        ``-inf`` marks a component with weight zero.
    components : sequence of K distributions
        Of one family and event shape; their batch shapes broadcast with the
        weights'. Their own log-scales are ignored (normalised components).
    log_scale : array of the batch shape, optional
    log_norm : array of the batch shape, optional
        ``log Σ_k exp(log_weights_k)``, when the caller has computed it already
        (the rules that build a mixture need it for its scale too): the
        weights are then normalised without a second pass over them.
    """

    component_family: type = Distribution
    _classes: dict = {}  # component family -> mixture class
    _by_component_types: dict = {}  # tuple of component types -> mixture class (for create)

    def __init__(self, log_weights, components, log_scale=None, log_norm=None):
        log_weights = np.asarray(log_weights, dtype=float)
        components = list(components)
        if log_weights.shape[-1:] != (len(components),):
            raise ModelError(
                f"log_weights must end with an axis of length K = {len(components)} (one per component), "
                f"got shape {log_weights.shape}"
            )
        # NaN anywhere in the weights makes their log-sum-exp NaN
        if log_weights.ndim == 1:  # one mixture: a float is cheaper to check and subtract
            log_norm = float(logsumexp(log_weights) if log_norm is None else log_norm)
            invalid = log_norm != log_norm
        else:
            if log_norm is None:
                log_norm = logsumexp(log_weights, axis=-1, keepdims=True)
            else:
                log_norm = np.asarray(log_norm, dtype=float)[..., None]
            invalid = np.isnan(log_norm).any()
        if invalid:
            raise ModelError("log_weights contain NaN")
        self.components = [c.normalised() for c in components]
        first = self.components[0]
        self.event_ndim = first.event_ndim
        self._event_shape = first.event_shape
        batch_shape = log_weights.shape[:-1]
        if any(c.batch_shape != batch_shape for c in self.components):
            batch_shape = np.broadcast_shapes(batch_shape, *(c.batch_shape for c in self.components))
        self._batch_shape = batch_shape
        self.log_weights = log_weights - log_norm
        self._set_log_scale(log_scale)

    @classmethod
    def of(cls, component_family: type) -> type:
        """The mixture class with components of ``component_family`` (cached)."""
        if issubclass(component_family, Mixture):
            component_family = component_family.component_family  # a mixture of mixtures is a mixture
        if issubclass(component_family, ExponentialFamily):
            component_family = component_family.family()
        mixture_class = cls._classes.get(component_family)
        if mixture_class is None:
            namespace = {"component_family": component_family}
            for name in expectation_names(component_family):
                if name not in vars(Mixture):  # mean, second_moment: Mixture's own serve every family
                    namespace[name] = _weighted_expectation(name)
            if issubclass(component_family, ExponentialFamily):
                namespace["expected_statistics"] = _weighted_expected_statistics
            mixture_class = type(f"MixtureOf{component_family.__name__}", (Mixture,), namespace)
            cls._classes[component_family] = mixture_class
        return mixture_class

    @classmethod
    def create(cls, log_weights, components, log_scale=None, log_norm=None) -> "Mixture":
        """A mixture of the class that matches its components' family (arguments as for the constructor)."""
        return cls._class_for(components)(log_weights, components, log_scale, log_norm)

    @classmethod
    def _class_for(cls, components) -> type:
        """The mixture class for these components (cached per tuple of component types)."""
        types = tuple(type(c) for c in components)
        mixture_class = cls._by_component_types.get(types)
        if mixture_class is None:
            family = types[0].family() if issubclass(types[0], ExponentialFamily) else types[0]
            for kind in types[1:]:
                if (kind.family() if issubclass(kind, ExponentialFamily) else kind) is not family:
                    family = Distribution
            mixture_class = cls._by_component_types[types] = cls.of(family)
        return mixture_class

    @classmethod
    def from_floats(cls, log_weights: list, components, log_scale: float, log_norm: float) -> "Mixture":
        """One (unbatched) mixture from Python floats, without conversions or checks: the float paths of rules.

        ``log_weights``: K floats (unnormalised); ``log_norm``: their
        log-sum-exp, finite (the caller has computed it, NaN excluded);
        ``log_scale``: a float. The components must be unbatched, of one event
        shape; anything else goes to :meth:`create`, which checks. The
        result is the mixture :meth:`create` gives for the same numbers: the
        same normalised log-weights (``w_k − log_norm``), and the weights as
        floats (``exp``, as :meth:`_float_weights` computes them) made at once.
        """
        if any(c._batch_shape for c in components):
            return cls.create(np.array(log_weights), components, log_scale, log_norm)
        new = object.__new__(cls._class_for(components))
        new.components = [c.normalised() for c in components]
        first = new.components[0]
        new.event_ndim = first.event_ndim
        new._event_shape = first.event_shape
        new._batch_shape = ()
        normalised = [value - log_norm for value in log_weights]
        new.log_weights = np.array(normalised)
        new._weights_as_floats = [math.exp(value) for value in normalised]
        new._log_scale = ZERO_LOG_SCALE if log_scale == 0.0 else np.float64(log_scale)
        return new

    # ------------------------------------------------------------ moments
    @property
    def weights(self) -> np.ndarray:
        """Normalised weights, shape ``batch + (K,)`` (kept: a mixture's moments and its readers need them)."""
        return self.derived("_weights", lambda: np.exp(self.log_weights))

    def _float_weights(self) -> list:
        """The normalised weights of one (unbatched) mixture as Python floats, computed once."""
        weights = self.__dict__.get("_weights_as_floats")
        if weights is None:
            weights = self._weights_as_floats = [math.exp(value) for value in self.log_weights.tolist()]
        return weights

    def _weighted_sum(self, values: list):
        """``Σ_k w_k values[k]``, ``values[k]`` of shape ``component_k.batch_shape + value event shape``.

        The value's own event rank (``mean_logdet`` of a matrix is a scalar,
        ``second_moment`` of a vector a matrix) is read off each component's
        batch shape, and the weights get that many trailing axes.
        """
        if not self._batch_shape:  # one mixture: a dot product over the components
            if all(type(value) is np.float64 or type(value) is float for value in values):
                # scalars, the common case: K products on Python floats (numpy's per-call cost is most of it)
                total = 0.0
                for weight, value in zip(self._float_weights(), values):
                    total += weight * value
                return np.float64(total)
            weights = self.weights
            if np.ndim(values[0]) == 0:
                return np.dot(weights, stack_last(values))
            return np.tensordot(weights, np.stack(values), axes=1)
        weights = self.weights
        total = 0.0
        for k, (component, value) in enumerate(zip(self.components, values)):
            value = np.asarray(value)
            event_rank = max(value.ndim - len(component.batch_shape), 0)
            total = total + weights[(..., k) + (None,) * event_rank] * value
        return total

    @expectation
    def mean(self):
        """``Σ_k w_k μ_k``, kept once computed (a distribution is never modified; ``var`` reads it too)."""
        value = self.__dict__.get("_mean")
        if value is None:
            value = self._mean = self._weighted_sum([c.mean for c in self.components])
        return value

    @expectation
    def second_moment(self):
        """``E[x²]`` (scalars) or ``E[x xᵀ]`` (vectors), from each component's mean and (co)variance.

        Not every family defines ``second_moment`` (Beta, Gamma do not); every
        one defines ``mean`` and ``var`` (``cov`` for vectors).
        """
        return self._weighted_sum([_component_second_moment(c) for c in self.components])

    @property
    def var(self):
        """Law of total variance, ``Σ_k w_k (v_k + (μ_k − μ)²)``: no cancellation when the spread is small."""
        if self.event_ndim == 0:
            means = [c.mean for c in self.components]
            mean = self.mean
            return self._weighted_sum([c.var + (m - mean) ** 2 for c, m in zip(self.components, means)])
        return np.diagonal(self.cov, axis1=-2, axis2=-1)

    @property
    def cov(self):
        """``Σ_k w_k (Σ_k + (μ_k − μ)(μ_k − μ)ᵀ)``."""
        means = [c.mean for c in self.components]
        mean = self._weighted_sum(means)
        deviations = [m - mean for m in means]
        return self._weighted_sum([c.cov + d[..., :, None] * d[..., None, :] for c, d in zip(self.components, deviations)])

    @property
    def mode(self):
        """The component mode with the highest mixture density (the global mode for separated components)."""
        candidates = [c.mode for c in self.components]
        densities = np.stack([self.logpdf(m) for m in candidates], axis=-1)
        best = np.argmax(densities, axis=-1)
        stacked = np.stack(np.broadcast_arrays(*candidates), axis=0)
        index = best.reshape((1,) + best.shape + (1,) * self.event_ndim)
        return np.take_along_axis(stacked, np.broadcast_to(index, (1,) + stacked.shape[1:]), axis=0)[0]

    def logpdf(self, x):
        terms = np.stack([c.logpdf(x) for c in self.components], axis=-1)
        return logsumexp(self.log_weights + terms, axis=-1)

    def entropy(self):
        raise NotImplementedError(
            "the entropy of a mixture has no closed form; use a point-mass or categorical switch so that "
            "the free energy uses the components' entropies"
        )

    def sample(self, rng, size=()):
        size = (size,) if np.isscalar(size) else tuple(size)
        draws = np.stack([np.broadcast_to(c.sample(rng, size), size + self.batch_shape + self.event_shape)
                          for c in self.components], axis=0)
        u = rng.random(size + self.batch_shape)
        choice = (u[..., None] > np.cumsum(self.weights, axis=-1)).sum(axis=-1)
        choice = np.minimum(choice, len(self.components) - 1)
        index = choice.reshape((1,) + choice.shape + (1,) * self.event_ndim)
        return np.take_along_axis(draws, np.broadcast_to(index, (1,) + draws.shape[1:]), axis=0)[0]

    # ------------------------------------------------------------ batching
    def broadcast_to(self, batch_shape):
        batch_shape = tuple(batch_shape)
        log_weights = np.broadcast_to(self.log_weights, batch_shape + self.log_weights.shape[-1:])
        return type(self)(log_weights, [c.broadcast_to(batch_shape) for c in self.components],
                          np.broadcast_to(self.log_scale, batch_shape))

    def __getitem__(self, index):
        full = self.broadcast_to(self.batch_shape)
        return type(self)(full.log_weights[index], [c[index] for c in full.components], self.log_scale[index])

    def __repr__(self):
        return f"{type(self).__name__}(K={len(self.components)}, batch_shape={self.batch_shape})"


def _component_second_moment(component: Distribution):
    if component.event_ndim == 0:
        return component.var + component.mean ** 2
    kept = getattr(component, "second_moment", None)  # a multivariate normal keeps it once computed
    if kept is not None:
        return kept
    mean = component.mean
    return component.cov + mean[..., :, None] * mean[..., None, :]


def _weighted_expectation(name: str) -> expectation:
    """The expectation ``name`` of a mixture: the components' values weighted by the mixture weights."""

    def weighted(self):
        return self._weighted_sum([getattr(c, name) for c in self.components])

    weighted.__name__ = weighted.__qualname__ = name
    weighted.__doc__ = f"``Σ_k w_k`` times the components' ``{name}``."
    return expectation(weighted)


def _weighted_expected_statistics(self) -> tuple:
    """``E[T(x)] = Σ_k w_k E_k[T(x)]``, statistic by statistic."""
    per_component = [c.expected_statistics() for c in self.components]
    return tuple(self._weighted_sum(list(values)) for values in zip(*per_component))
