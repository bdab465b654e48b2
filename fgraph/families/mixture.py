"""Finite mixtures ``Σ_k w_k p_k(x)`` of distributions of one family.

A mixture message arises wherever a discrete switch selects between
alternatives: the forward message of the mixture node, a message through a
linear node whose input is a mixture. Products with other messages stay
mixtures (each component multiplied, the weights multiplied by the
components' normalisers), so scale factors and evidence flow through them.

``Mixture.of(family)`` returns the mixture class whose components belong to
``family`` (e.g. ``Mixture.of(UnivariateNormal)``); the compiler uses it to
type the messages of rules that take mixtures apart component by component.
"""
from __future__ import annotations

import numpy as np

from fgraph.errors import ModelError
from fgraph.families.base import Distribution, ExponentialFamily, logsumexp, stack_last


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
    """

    component_family: type = Distribution
    _classes: dict = {}  # component family -> mixture class
    _by_component_types: dict = {}  # tuple of component types -> mixture class (for create)

    def __init__(self, log_weights, components, log_scale=None):
        log_weights = np.asarray(log_weights, dtype=float)
        components = list(components)
        if log_weights.shape[-1:] != (len(components),):
            raise ModelError(
                f"log_weights must end with an axis of length K = {len(components)} (one per component), "
                f"got shape {log_weights.shape}"
            )
        # NaN anywhere in the weights makes their log-sum-exp NaN
        if log_weights.ndim == 1:  # one mixture: a float is cheaper to check and subtract
            log_norm = float(logsumexp(log_weights))
            invalid = log_norm != log_norm
        else:
            log_norm = logsumexp(log_weights, axis=-1, keepdims=True)
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
            mixture_class = type(f"MixtureOf{component_family.__name__}", (Mixture,), {"component_family": component_family})
            cls._classes[component_family] = mixture_class
        return mixture_class

    @classmethod
    def create(cls, log_weights, components, log_scale=None) -> "Mixture":
        """A mixture of the class that matches its components' family."""
        types = tuple(type(c) for c in components)
        mixture_class = cls._by_component_types.get(types)
        if mixture_class is None:
            family = types[0].family() if issubclass(types[0], ExponentialFamily) else types[0]
            for kind in types[1:]:
                if (kind.family() if issubclass(kind, ExponentialFamily) else kind) is not family:
                    family = Distribution
            mixture_class = cls._by_component_types[types] = cls.of(family)
        return mixture_class(log_weights, components, log_scale)

    # ------------------------------------------------------------ moments
    @property
    def weights(self) -> np.ndarray:
        """Normalised weights, shape ``batch + (K,)``."""
        return np.exp(self.log_weights)

    def _weighted_sum(self, values: list):
        """``Σ_k w_k values[k]`` for per-component values of event rank ``event_ndim``."""
        if self.event_ndim == 0 and not self._batch_shape:  # one mixture of scalars: a dot product
            return np.dot(np.exp(self.log_weights), stack_last(values))
        weights = np.exp(self.log_weights)
        return sum(weights[(..., k) + (None,) * self.event_ndim] * v for k, v in enumerate(values))

    @property
    def mean(self):
        return self._weighted_sum([c.mean for c in self.components])

    @property
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
            mean = self._weighted_sum(means)
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
    mean = component.mean
    if component.event_ndim == 0:
        return component.var + mean**2
    return component.cov + mean[..., :, None] * mean[..., None, :]


def mixture_product(mixture: Mixture, other: Distribution) -> Distribution:
    """``(Σ_k w_k p_k) · q``: each component times ``q``, weights times the components' normalisers."""
    from fgraph.families.product import product

    other_normalised = other.normalised()
    products = [product(c, other_normalised) for c in mixture.components]
    log_weights = mixture.log_weights + stack_last([p.log_scale for p in products])
    log_norm = logsumexp(log_weights, axis=-1)
    log_scale = mixture.log_scale + other.log_scale + log_norm
    if len(products) == 1:
        return products[0].with_log_scale(log_scale)
    return Mixture.create(log_weights, products, log_scale)
