"""Products of messages, with the log-normaliser that scale factors need.

``product(a, b)`` returns the normalised product ``a * b / Z`` whose
``log_scale`` is ``a.log_scale + b.log_scale + log Z`` with
``Z = integral of a(x) b(x) dx`` for normalised ``a`` and ``b``.

The generic function lives with :class:`~fgraph.families.base.Distribution`
(``a * b`` calls it); this module registers its implementations. It is the
top of the families layer: it imports the families it has closed forms for,
and no family imports it.
"""
from __future__ import annotations

import math

import numpy as np

from fgraph.errors import ModelError, ModelTypeError
from fgraph.families.base import Distribution, ExponentialFamily, logsumexp, logsumexp_of_floats, product, stack_last, sum_last_axis
from fgraph.families.categorical import Categorical
from fgraph.families.gamma import Gamma
from fgraph.families.gamma_shape import GammaShapeLikelihood
from fgraph.families.gaussian_process import GaussianProcessPrior, condition
from fgraph.families.mixture import Mixture
from fgraph.families.mvnormal import GaussianLikelihood, MultivariateNormal
from fgraph.families.normal import (
    NormalMeanPrecision,
    NormalMeanVariance,
    NormalWeightedMeanPrecision,
    UnivariateNormal,
    scalar_moments,
)
from fgraph.families.pointmass import PointMass, Uninformative

# log 2π added, not 2π multiplied in: the variance of a nearly flat message (~1e308) times 2π overflows
LOG_TWO_PI = math.log(2.0 * math.pi)


@product.register(ExponentialFamily, ExponentialFamily)
def _product_exponential_families(a, b):
    if type(a) is Gamma and type(b) is Gamma and not a.batch_shape and not b.batch_shape:
        return _product_gammas_on_floats(a, b)
    if a.family() is not b.family():
        raise ModelTypeError(
            f"cannot multiply a {type(a).__name__} message with a {type(b).__name__} message: "
            "they belong to different families"
        )
    # natural parameters and coefficients add; h(x)² = h · h for the constant base measures here
    eta = tuple(x + y for x, y in zip(a.natural_parameters(), b.natural_parameters()))
    family = a.family()
    return family.from_coefficient(eta, a.log_coefficient() + b.log_coefficient() + family.log_base_measure_of(eta))


def _product_gammas_on_floats(a: Gamma, b: Gamma) -> Gamma:
    """Two unbatched gammas: ``Gamma(a₁ + a₂ - 1, b₁ + b₂)``, scaled by ``A(η₁ + η₂) - A(η₁) - A(η₂)``.

    The generic product on Python floats, ``A(a, b) = log Γ(a) - a log b``
    (the belief of a global precision, once per sweep); an improper result
    takes the generic path.
    """
    shape_a, rate_a, shape_b, rate_b = float(a.shape), float(a.rate), float(b.shape), float(b.rate)
    shape, rate = shape_a + shape_b - 1.0, rate_a + rate_b
    if not (shape > 0.0 and rate > 0.0 and min(shape_a, shape_b, rate_a, rate_b) > 0.0):
        eta = tuple(x + y for x, y in zip(a.natural_parameters(), b.natural_parameters()))
        return Gamma.from_coefficient(eta, a.log_coefficient() + b.log_coefficient())
    log_scale = (float(a._log_scale) + float(b._log_scale) + math.lgamma(shape) - shape * math.log(rate)
                 - math.lgamma(shape_a) + shape_a * math.log(rate_a) - math.lgamma(shape_b) + shape_b * math.log(rate_b))
    return Gamma.unbatched(shape, rate, log_scale)


@product.register(GaussianProcessPrior, MultivariateNormal)
def _product_process_and_normal(a, b):
    """A Gaussian-process prior times observations of its values: conditioned in moment form, never through
    ``K⁻¹`` (:func:`fgraph.families.gaussian_process.condition`). An improper message (a likelihood with flat
    directions) has no covariance to add; it takes the natural-parameter product."""
    if isinstance(b, GaussianLikelihood):
        return _product_exponential_families(a, b)
    return condition(a, b)


@product.register(MultivariateNormal, GaussianProcessPrior)
def _product_normal_and_process(a, b):
    return _product_process_and_normal(b, a)


@product.register(GaussianProcessPrior, GaussianProcessPrior)
def _product_processes(a, b):
    return condition(a, b)


@product.register(UnivariateNormal, UnivariateNormal)
def _product_univariate_normals(a, b):
    """Closed form for the most common product: precisions and weighted means add;
    the normaliser is ``N(μ_a | μ_b, v_a + v_b)``."""
    if not a.batch_shape and not b.batch_shape:  # two scalars: Python floats
        mean_a, var_a, weighted_mean_a, precision_a = scalar_moments(a)
        mean_b, var_b, weighted_mean_b, precision_b = scalar_moments(b)
        total_var = var_a + var_b
        difference = mean_a - mean_b
        if total_var > 0.0:
            log_norm = -0.5 * ((LOG_TWO_PI + math.log(total_var)) + difference * difference / total_var)
            return NormalWeightedMeanPrecision.unbatched(
                weighted_mean_a + weighted_mean_b, precision_a + precision_b,
                float(a._log_scale) + float(b._log_scale) + log_norm)
    mean_a, var_a, mean_b, var_b = a.mean, a.var, b.mean, b.var
    total_var = var_a + var_b
    if type(total_var) is np.float64 and total_var > 0.0:  # one message each: math.log costs a tenth of a ufunc call
        log_norm = -0.5 * ((LOG_TWO_PI + math.log(total_var)) + (mean_a - mean_b) ** 2 / total_var)
    else:
        log_norm = -0.5 * ((LOG_TWO_PI + np.log(total_var)) + (mean_a - mean_b) ** 2 / total_var)
    return NormalWeightedMeanPrecision(
        a.weighted_mean + b.weighted_mean, a.precision + b.precision,
        log_scale=a._log_scale + b._log_scale + log_norm, check=False,
    )


@product.register(Categorical, Categorical)
def _product_categoricals(a, b):
    """Closed form: probabilities multiply; the normaliser is ``Σ_k p_k q_k``."""
    if not a.batch_shape and not b.batch_shape:
        folded = _product_categoricals_on_floats(a, b)
        if folded is not None:
            return folded
    joint = a.probabilities * b.probabilities
    total = sum_last_axis(joint)
    with np.errstate(divide="ignore", invalid="ignore"):  # disjoint supports: -inf scale, NaN probabilities
        probabilities = np.divide(joint, total[..., None], out=joint if joint.ndim else None)  # no second array
        return Categorical(probabilities, log_scale=a.log_scale + b.log_scale + np.log(total), check=False)


def _product_categoricals_on_floats(a, b):
    """:func:`_product_categoricals` of two unbatched categoricals on Python floats (a few categories).

    The same products, sum and quotients as the array path, without
    ``np.errstate`` and numpy's per-call cost on K = 2 or 3 entries. ``None``
    (the array path says how) when the supports are disjoint.
    """
    joint = [p * q for p, q in zip(a.probabilities.tolist(), b.probabilities.tolist())]
    total = 0.0
    for value in joint:
        total += value
    if not total > 0.0:
        return None
    return Categorical.unbatched([value / total for value in joint],
                                 a._log_scale + b._log_scale + np.float64(math.log(total)))


@product.register(PointMass, Distribution)
def _product_point_mass_left(a, b):
    return PointMass(a.value, a.event_ndim, a.log_scale + b.log_scale + b.logpdf(a.value))


@product.register(Distribution, PointMass)
def _product_point_mass_right(a, b):
    return _product_point_mass_left(b, a)


@product.register(PointMass, PointMass)
def _product_point_masses(a, b):
    raise ModelError(
        "cannot multiply two point masses: a variable is observed or constrained to a point on both sides"
    )


@product.register(Uninformative, Distribution)
def _product_uninformative_left(a, b):
    return b


@product.register(Distribution, Uninformative)
def _product_uninformative_right(a, b):
    return a


@product.register(Uninformative, Uninformative)
def _product_uninformatives(a, b):
    return a


@product.register(Uninformative, PointMass)
def _product_uninformative_point_mass(a, b):
    return b


@product.register(PointMass, Uninformative)
def _product_point_mass_uninformative(a, b):
    return a


#: The parameterisations of one normal whose pairwise products are :func:`_product_univariate_normals`.
_SCALAR_NORMALS = (NormalMeanVariance, NormalMeanPrecision, NormalWeightedMeanPrecision)


def product_all(messages) -> Distribution:
    """Fold :func:`product` over a sequence of messages."""
    messages = list(messages)
    if len(messages) > 2 and all(type(m) in _SCALAR_NORMALS and not m.batch_shape for m in messages):
        folded = _product_scalar_normals(messages)
        if folded is not None:
            return folded
    result = messages[0]
    for message in messages[1:]:
        result = product(result, message)
    return result


def _product_scalar_normals(messages: list):
    """The fold of :func:`_product_univariate_normals` over three or more unbatched normals, on Python floats.

    The same operations in the same order as the pairwise fold (so the same
    numbers to the last bit), without a message object per intermediate
    product: a belief at a variable of degree three is read once per
    variable. ``None`` where a pairwise product would leave the float path
    (a total variance that is not positive, from an improper message).
    """
    mean, var, weighted_mean, precision = scalar_moments(messages[0])
    log_scale = float(messages[0]._log_scale)
    for message in messages[1:]:
        mean_b, var_b, weighted_mean_b, precision_b = scalar_moments(message)
        total_var = var + var_b
        if not total_var > 0.0:
            return None
        difference = mean - mean_b
        log_norm = -0.5 * ((LOG_TWO_PI + math.log(total_var)) + difference * difference / total_var)
        weighted_mean, precision = weighted_mean + weighted_mean_b, precision + precision_b
        log_scale = log_scale + float(message._log_scale) + log_norm
        # the moments of the intermediate product as scalar_moments reads them from its natural parameters
        mean, var = weighted_mean / precision, 1.0 / precision
    return NormalWeightedMeanPrecision.unbatched(weighted_mean, precision, log_scale)


# ------------------------------------------------------------------ mixtures
def mixture_product(mixture: Mixture, other: Distribution) -> Distribution:
    """``(Σ_k w_k p_k) · q``: each component times ``q``, weights times the components' normalisers."""
    if not mixture._batch_shape and isinstance(other, UnivariateNormal) and not other._batch_shape:
        folded = _mixture_of_normals_times_normal(mixture, other)
        if folded is not None:
            return folded
    other_normalised = other.normalised()
    products = [product(c, other_normalised) for c in mixture.components]
    if (not mixture._batch_shape and not other.batch_shape and len(products) > 1
            and all(type(p._log_scale) is np.float64 for p in products)):
        # one mixture of unbatched components (a few sub-models): the same sums on Python floats
        log_weights = [w + float(p._log_scale) for w, p in zip(mixture.log_weights.tolist(), products)]
        log_norm = logsumexp_of_floats(log_weights)
        if math.isfinite(log_norm):  # else the array path below says what NaN or all-zero weights give
            log_scale = float(mixture._log_scale) + float(other.log_scale) + log_norm
            return Mixture.from_floats(log_weights, products, log_scale, log_norm)
    log_weights = mixture.log_weights + stack_last([p.log_scale for p in products])
    log_norm = logsumexp(log_weights, axis=-1)
    log_scale = mixture.log_scale + other.log_scale + log_norm
    if len(products) == 1:
        return products[0].with_log_scale(log_scale)
    return Mixture.create(log_weights, products, log_scale, log_norm)


def _mixture_of_normals_times_normal(mixture: Mixture, other: UnivariateNormal) -> Mixture | None:
    """:func:`mixture_product` of one mixture of scalar normals and one normal, on Python floats.

    The same operations as the general path (each component times the
    normalised ``other`` by :func:`_product_univariate_normals`, whose
    log-scale is the normaliser ``N(μ_k | μ, v_k + v)``; the weights times the
    normalisers), without a scaled product per component and its normalised
    copy. ``None`` (the general path decides) unless every component is one
    unbatched univariate normal, every total variance positive and the
    weights' log-sum-exp finite.
    """
    mean_b, var_b, weighted_mean_b, precision_b = scalar_moments(other)
    log_weights, components = [], []
    for log_weight, component in zip(mixture.log_weights.tolist(), mixture.components):
        if not isinstance(component, UnivariateNormal) or component._batch_shape:
            return None
        mean_a, var_a, weighted_mean_a, precision_a = scalar_moments(component)
        total_var = var_a + var_b
        if not total_var > 0.0:
            return None
        difference = mean_a - mean_b
        log_norm = -0.5 * ((LOG_TWO_PI + math.log(total_var)) + difference * difference / total_var)
        # the product's log-scale as _product_univariate_normals forms it (``other`` normalised: its scale is 0)
        log_weights.append(log_weight + (float(component._log_scale) + 0.0 + log_norm))
        components.append(NormalWeightedMeanPrecision.unbatched(weighted_mean_a + weighted_mean_b,
                                                                precision_a + precision_b, 0.0))
    if len(components) == 1:
        return None
    log_norm = logsumexp_of_floats(log_weights)
    if not math.isfinite(log_norm):
        return None
    return Mixture.from_floats(log_weights, components, float(mixture._log_scale) + float(other._log_scale) + log_norm,
                               log_norm)


@product.register(Mixture, Distribution)
def _product_mixture_left(a, b):
    return mixture_product(a, b)


@product.register(Distribution, Mixture)
def _product_mixture_right(a, b):
    return mixture_product(b, a)


@product.register(Mixture, Mixture)
def _product_mixtures(a, b):
    """K·L components: every pair of components, weights times the pair's normaliser."""
    terms = [mixture_product(a, component.with_log_scale(None)) for component in b.components]
    components, log_weights = [], []
    for j, term in enumerate(terms):
        parts = term.components if isinstance(term, Mixture) else [term]
        weights = term.log_weights if isinstance(term, Mixture) else np.zeros(term.batch_shape + (1,))
        for i, part in enumerate(parts):
            components.append(part)
            log_weights.append(b.log_weights[..., j] + term.log_scale - a.log_scale + weights[..., i])
    log_weights = stack_last(log_weights)
    return Mixture.create(log_weights, components, a.log_scale + b.log_scale + logsumexp(log_weights, axis=-1))


@product.register(Mixture, PointMass)
def _product_mixture_point_mass(a, b):
    return _product_point_mass_left(b, a)


@product.register(PointMass, Mixture)
def _product_point_mass_mixture(a, b):
    return _product_point_mass_left(a, b)


@product.register(Mixture, Uninformative)
def _product_mixture_uninformative(a, b):
    return a


@product.register(Uninformative, Mixture)
def _product_uninformative_mixture(a, b):
    return b


def _product_with_gamma(gamma: Gamma, other: GammaShapeLikelihood) -> GammaShapeLikelihood:
    """A gamma density is the member with ``count = 0``: natural parameters and coefficients add."""
    g1, g2 = gamma.natural_parameters()
    o1, o2, o3 = other.natural_parameters()
    eta = (g1 + o1, g2 + o2, o3)
    return GammaShapeLikelihood.from_coefficient(eta, gamma.log_coefficient() + other.log_coefficient())


@product.register(Gamma, GammaShapeLikelihood)
def _product_gamma_left(a, b):
    return _product_with_gamma(a, b)


@product.register(GammaShapeLikelihood, Gamma)
def _product_gamma_right(a, b):
    return _product_with_gamma(b, a)
