"""Base classes for message and marginal families.

Every distribution in fgraph is *batched*: its parameters are numpy arrays
whose leading axes form the ``batch_shape`` (the plates) and whose trailing
axes form the ``event_shape`` (e.g. ``(d,)`` for a d-dimensional Gaussian).
Every distribution also carries a ``log_scale`` array of the batch shape: a
message in sum-product message passing is a *scaled* density
``exp(log_scale) * p(x)``, and the scales of the two messages on an edge
combine into the model evidence (van Erp et al. 2023, Theorem 3.1).

Most families are exponential families,

    p(x) = h(x) exp(<eta, T(x)> - A(eta)),

and subclass :class:`ExponentialFamily`, which then gets for free:
products with their log-normalisers, powers (fractional messages), entropy,
cross-entropy, and the leave-one-out reductions the equality node needs.
A family only has to say how to map its parameters to ``eta`` and back, its
log-partition ``A``, its base measure ``log h`` (a constant in every family
here) and the expected sufficient statistics ``E[T(x)]``.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from multipledispatch import Dispatcher

from fgraph.errors import ModelError, ModelTypeError

Array = np.ndarray
ZERO_LOG_SCALE = np.float64(0.0)  # the log-scale of every unbatched normalised distribution (shared)


def as_float_array(value, name: str) -> Array:
    """Convert ``value`` to a float array, raising a clear error if it is not numeric.

    A scalar becomes a ``np.float64`` rather than a 0-d array: it behaves the
    same in numpy expressions, and its arithmetic is several times cheaper,
    which matters for unbatched messages (one parameter, a few flops).
    """
    kind = type(value)
    if kind is np.float64:
        return value
    if kind is float or kind is int:
        return np.float64(value)
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as error:
        raise ModelTypeError(f"{name} must be numeric, got {value!r}") from error
    return array[()] if array.ndim == 0 else array


def check_finite(array: Array, name: str) -> None:
    if not np.all(np.isfinite(array)):
        raise ModelError(f"{name} contains NaN or infinite values; pass finite numbers")


def check_positive(array: Array, name: str) -> None:
    check_finite(array, name)
    if np.any(array <= 0):
        raise ModelError(f"{name} must be strictly positive, got minimum {np.min(array)!r}")


#: the function :meth:`Distribution.to_scipy` calls, registered by :mod:`fgraph.families.scipy_view`
SCIPY_VIEW: dict = {}


class expectation(property):
    """A property that is an expected value ``E_p[g(x)]`` (``mean``, ``second_moment``, ``mean_log``, …).

    An expectation is linear in the distribution, so a mixture ``Σ_k w_k p_k``
    has it as ``Σ_k w_k E_{p_k}[g(x)]``: marking a family's expectations this
    way is all it takes for mixtures of that family to offer them too
    (:meth:`fgraph.families.mixture.Mixture.of`), and so to serve every
    variational rule and average energy that reads them. Variances, modes and
    parameters are not linear in the distribution; they stay plain properties.
    """


def expectation_names(cls: type) -> tuple:
    """The expectations that instances of ``cls`` offer: the :class:`expectation` properties of it and its bases."""
    names = []
    for klass in cls.__mro__:
        names.extend(name for name, value in vars(klass).items() if isinstance(value, expectation) and name not in names)
    return tuple(sorted(names))


class Product:
    """``product(a, b)``: multiple dispatch on the two families, with the choice remembered per pair of types.

    This is the generic function alone; its implementations (the generic
    exponential-family product, the closed forms, point masses, mixtures) are
    registered in :mod:`fgraph.families.product`, which sits above every
    family so that no family has to import it. ``a * b`` calls it.

    Messages are multiplied many times per sweep; looking the implementation up
    once per pair of concrete types keeps dispatch out of the cost.
    """

    def __init__(self):
        self._dispatcher = Dispatcher("product")
        self._chosen: dict = {}

    def register(self, *types):
        self._chosen.clear()
        return self._dispatcher.register(*types)

    def __call__(self, a, b):
        key = (type(a), type(b))
        implementation = self._chosen.get(key)
        if implementation is None:
            implementation = self._dispatcher.dispatch(*key)
            if implementation is None:
                raise NotImplementedError(f"no product of a {key[0].__name__} and a {key[1].__name__} message")
            self._chosen[key] = implementation
        return implementation(a, b)


product = Product()


#: family -> the constructor of fgraph.nodes that adds a variable with a factor of that family to a model
_FACTOR_CONSTRUCTORS = {
    "Gamma": "Gamma", "GammaShapeScale": "Gamma", "InverseGamma": "InverseGamma", "Beta": "Beta",
    "Bernoulli": "Bernoulli", "Categorical": "Categorical", "Dirichlet": "Dirichlet",
    "MatrixDirichlet": "MatrixDirichlet", "Wishart": "Wishart", "NormalMeanVariance": "Normal",
    "NormalMeanPrecision": "Normal", "MvNormalMeanCovariance": "MvNormal", "MvNormalMeanPrecision": "MvNormal",
}


class Distribution:
    """A batched (optionally scaled) probability distribution.

    Subclasses set the class attribute ``event_ndim`` (0 for scalars,
    1 for vectors, 2 for matrices) and implement the moments they support.

    Attributes
    ----------
    log_scale : ndarray, shape ``batch_shape``
        Logarithm of the scale factor of a message; zero for a plain density.
    """

    event_ndim: int = 0

    def __new__(cls, *args, **kwargs):
        # ``fg.Gamma("tau", shape=2, rate=1)`` in a model: a factor was meant (the families and the factor
        # constructors of fgraph.nodes share names); say so rather than fail on the parameters.
        if args and isinstance(args[0], str):
            node = _FACTOR_CONSTRUCTORS.get(cls.__name__)
            meant = (f"fgraph.nodes.{node}({args[0]!r}, ...)" if node is not None
                     else "the factor constructor of fgraph.nodes")
            import inspect  # (only on this error path)

            first = next(iter(list(inspect.signature(cls.__init__).parameters)[1:]), "parameter")
            raise ModelTypeError(
                f"fg.{cls.__name__}({args[0]!r}, ...): {first} must be numeric, got {args[0]!r}; fg.{cls.__name__} "
                f"is a distribution (a family of messages and marginals, e.g. an init= value), not a factor: to add "
                f"a variable {args[0]!r} and its factor to a model, use {meant}"
            )
        return object.__new__(cls)

    # A distribution is never modified, so a quantity derived from it (a solve or an inverse per batch
    # element, the expectations a node reads) can be computed once and kept: rules, energies and the free
    # energy read the same moments of one marginal several times per sweep.
    def derived(self, name: str, compute):
        """``compute()``, computed on the first call for ``name`` and kept on this distribution."""
        value = self.__dict__.get(name)
        if value is None:
            value = self.__dict__[name] = compute()
        return value

    def derived_with(self, name: str, others: tuple, compute):
        """``compute()`` for this distribution and the distributions ``others`` (e.g. a node's expectations
        under several marginals), kept with them and computed again when asked with different ones."""
        kept = self.__dict__.get(name)
        if kept is None or len(kept[0]) != len(others) or any(a is not b for a, b in zip(kept[0], others)):
            kept = self.__dict__[name] = (others, compute())
        return kept[1]

    # ------------------------------------------------------------------ shapes
    @property
    def batch_shape(self) -> tuple:
        return self._batch_shape

    @property
    def event_shape(self) -> tuple:
        return self._event_shape

    @property
    def log_scale(self) -> Array:
        return self._log_scale

    def _set_log_scale(self, log_scale) -> None:
        batch_shape = self._batch_shape
        if not batch_shape:  # unbatched: a np.float64 (see as_float_array)
            if log_scale is None:
                self._log_scale = ZERO_LOG_SCALE
            else:
                log_scale = as_float_array(log_scale, "log_scale")
                self._log_scale = log_scale if type(log_scale) is np.float64 else np.broadcast_to(log_scale, ())[()]
        elif log_scale is None:
            # a plate of N normalised messages shares one zero (a stride-0 view), not N of them
            self._log_scale = np.zeros(batch_shape) if math.prod(batch_shape) < 64 else _zeros_over(batch_shape)
        else:
            log_scale = np.asarray(log_scale, dtype=float)
            self._log_scale = log_scale if log_scale.shape == batch_shape else broadcast_view(log_scale, batch_shape)

    def with_log_scale(self, log_scale) -> "Distribution":
        """A shallow copy of this distribution with another ``log_scale``."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new._set_log_scale(log_scale)
        return new

    def power_unscaled(self, exponent) -> "Distribution":
        """:meth:`power` where no one reads the log-scale (a mean-field message into a variable without
        sum-product neighbours): the same density; families may leave the log-scale zero."""
        return self.power(exponent)

    def normalised(self) -> "Distribution":
        """The same distribution with ``log_scale`` zero."""
        if self._log_scale is ZERO_LOG_SCALE:  # distributions are never modified in place: share it
            return self
        return self.with_log_scale(None)

    # ------------------------------------------------------------- interface
    @expectation
    def mean(self) -> Array:
        raise NotImplementedError

    @property
    def mode(self) -> Array:
        raise NotImplementedError

    def entropy(self) -> Array:
        raise NotImplementedError

    def logpdf(self, x) -> Array:
        raise NotImplementedError

    def sample(self, rng: np.random.Generator, size: Sequence[int] | int = ()) -> Array:
        raise NotImplementedError

    def __mul__(self, other: "Distribution") -> "Distribution":
        return product(self, other)

    def to_scipy(self):
        """This distribution as a frozen ``scipy.stats`` distribution (:mod:`fgraph.families.scipy_view`, which
        registers the mapping: it sits above every family, as :mod:`fgraph.families.product` does)."""
        view = SCIPY_VIEW.get("to_scipy")
        if view is None:
            raise NotImplementedError("import fgraph.families (it registers fgraph.families.scipy_view) first")
        return view(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(batch_shape={self.batch_shape}, event_shape={self.event_shape})"

    # -------------------------------------------------------------- batching
    def broadcast_to(self, batch_shape: tuple) -> "Distribution":
        """This distribution broadcast to a larger batch shape (views, no copies)."""
        raise NotImplementedError

    def __getitem__(self, index) -> "Distribution":
        """Select batch elements, e.g. ``q[3]`` or ``q[:, 0]``."""
        raise NotImplementedError


class ExponentialFamily(Distribution):
    """An exponential-family distribution in natural parameterisation.

    Subclasses define:

    * ``natural_event_ndims``: tuple, the event rank of each natural parameter
      (e.g. ``(0, 0)`` for the univariate normal, ``(1, 2)`` for the
      multivariate normal);
    * ``natural_parameters()`` -> tuple of arrays;
    * ``from_natural(eta, log_scale=None)`` (classmethod) -> instance;
    * ``log_partition_of(eta)`` (classmethod) -> array of batch shape;
    * ``log_base_measure_of(eta)`` (classmethod) -> array or float, ``log h``
      (constant in x for every family here);
    * ``expected_statistics()`` -> tuple of arrays ``E[T(x)]``.

    ``family`` names the class whose members can be multiplied together; the
    univariate normal parameterisations, for example, all share one family.
    """

    natural_event_ndims: tuple = ()

    @classmethod
    def family(cls) -> type:
        return cls

    def natural_parameters(self) -> tuple:
        raise NotImplementedError

    def checked_parameters(self) -> tuple:
        """Arrays that hold NaN or +inf exactly when the natural parameters do (the engine checks them)."""
        return self.natural_parameters()

    def natural_parameter_totals(self, keep: int = 0) -> tuple:
        """Each natural parameter summed over every batch axis but the first ``keep`` (event axes kept).

        This is all that the reduction of a plate onto a global variable reads,
        and a sum holds NaN or +inf whenever an element does, so the engine's
        check reads it too: one pass over a plate serves both. ``keep`` leading
        axes are not summed: the copies of a model with copies
        (``fg.Model(copies=R)``), whose global variables have a batch of their
        own; the sums then have the shape ``batch_shape[:keep] + event``. Kept
        once computed (a distribution is never modified). A rule that knows
        the sums without forming the per-element parameters gives them with
        :meth:`with_natural_parameter_totals`; sums over fewer axes give the
        sums over more of them (they are added up), and over axes of length 1
        they are the same numbers.
        """
        memo = getattr(self, "__dict__", None)  # a family with __slots__ keeps nothing
        if memo is None:
            return self._batch_totals(keep)
        totals = memo.get("_natural_parameter_totals") if keep == 0 else memo.get("_kept_totals", {}).get(keep)
        if totals is None:
            totals = self._totals_from_known(keep)
            if totals is None:
                totals = self._batch_totals(keep)
            self._remember_totals(totals, keep)
        return totals

    def _batch_totals(self, keep: int) -> tuple:
        return tuple(batch_total(e, nd, keep) for e, nd in zip(self.natural_parameters(), self.natural_event_ndims))

    def _totals_from_known(self, keep: int) -> tuple | None:
        """Sums over the batch axes after ``keep`` from sums kept over other axes, where they give them."""
        known = dict(self.__dict__.get("_kept_totals", {}))
        if "_natural_parameter_totals" in self.__dict__:
            known[0] = self.__dict__["_natural_parameter_totals"]
        batch = self.batch_shape
        for kept, totals in known.items():
            if kept > keep and all(size == 1 for size in batch[keep:kept]) or kept < keep and all(
                    size == 1 for size in batch[kept:keep]):  # the axes between are of length 1: reshaped
                return tuple(np.reshape(t, batch[:keep] + np.shape(t)[np.ndim(t) - nd:] if nd else batch[:keep])
                             for t, nd in zip(totals, self.natural_event_ndims))
            if kept > keep:  # sums over fewer axes: add them up over the rest
                axes = tuple(range(keep, kept))
                return tuple(np.sum(t, axis=axes) for t in totals)
        return None

    def _remember_totals(self, totals: tuple, keep: int) -> None:
        if keep == 0:
            self._natural_parameter_totals = tuple(totals)
        else:
            self.__dict__.setdefault("_kept_totals", {})[keep] = tuple(totals)

    def knows_natural_parameter_totals(self) -> bool:
        """Whether :meth:`natural_parameter_totals` costs nothing (given by the rule or computed already)."""
        memo = getattr(self, "__dict__", ())
        return "_natural_parameter_totals" in memo or "_kept_totals" in memo

    def with_natural_parameter_totals(self, totals: tuple, keep: int = 0) -> "ExponentialFamily":
        """This (newly made) message, told the sums of its natural parameters over its batch; returns it.

        The caller vouches that ``totals[j]`` is the sum over the batch axes of
        ``natural_parameters()[j]`` (to rounding), all but the first ``keep``
        (see :meth:`natural_parameter_totals`): e.g. ``Σ_i y_i w = w Σ_i y_i``
        for N normal messages of one shared precision ``w``.
        """
        self._remember_totals(totals, keep)
        return self

    @classmethod
    def from_natural(cls, eta: tuple, log_scale=None) -> "ExponentialFamily":
        raise NotImplementedError

    @classmethod
    def log_partition_of(cls, eta: tuple) -> Array:
        raise NotImplementedError

    @classmethod
    def log_base_measure_of(cls, eta: tuple):
        raise NotImplementedError

    def expected_statistics(self) -> tuple:
        raise NotImplementedError

    # ------------------------------------------------------------- generic
    @classmethod
    def inner(cls, eta: tuple, statistics: tuple) -> Array:
        """``<eta, T>``: the sum over parameters of the event-axis inner products."""
        total = 0.0
        for eta_k, stat_k, ndim in zip(eta, statistics, cls.natural_event_ndims):
            product_k = eta_k * stat_k
            if ndim:
                product_k = product_k.sum(axis=tuple(range(-ndim, 0)))
            total = total + product_k
        return total

    def log_partition(self) -> Array:
        # kept: a prior's message enters a product every sweep, and distributions are never modified
        return self.derived("_log_partition", lambda: self.log_partition_of(self.natural_parameters()))

    def log_coefficient(self) -> Array:
        """``κ = log_scale - A(eta)``: the scaled density is ``exp(κ) h(x) exp(<eta, T(x)>)``.

        Products and plate reductions add coefficients (and natural
        parameters), which also works for a message that is not normalisable
        (:class:`~fgraph.families.mvnormal.GaussianLikelihood`).
        """
        return self.log_scale - self.log_partition()

    @classmethod
    def from_coefficient(cls, eta: tuple, log_coefficient) -> "ExponentialFamily":
        """The scaled density ``exp(log_coefficient) h(x) exp(<eta, T(x)>)`` (see :meth:`log_coefficient`)."""
        return cls.from_natural(eta, log_coefficient + cls.log_partition_of(eta))

    def entropy(self) -> Array:
        """Differential entropy ``A(eta) - <eta, E[T]> - log h``, shape ``batch_shape``."""
        eta = self.natural_parameters()
        return self.log_partition_of(eta) - self.inner(eta, self.expected_statistics()) - self.log_base_measure_of(eta)

    def cross_entropy(self, other: "ExponentialFamily") -> Array:
        """``-E_self[log other(x)]`` for ``other`` of the same family (normalised).

        ``other``'s own class gives its log-partition: a message that is not normalisable
        (:class:`~fgraph.families.mvnormal.GaussianLikelihood`) takes it as zero, so this is then
        ``-E_self[log h(x) + <eta, T(x)>]``, the expectation of the function itself.
        """
        eta = other.natural_parameters()
        family = type(other)
        return -(self.inner(eta, self.expected_statistics()) - family.log_partition_of(eta)
                 + family.log_base_measure_of(eta))

    def power(self, exponent) -> "ExponentialFamily":
        """The scaled density ``(exp(log_scale) p(x)) ** exponent``, renormalised.

        Natural parameters are multiplied by ``exponent``; the log-scale picks up
        ``A(w eta) - w A(eta) + (w - 1) log h`` so that it stays the integral.
        """
        exponent = as_float_array(exponent, "exponent")  # a np.float64 for one exponent: cheap scalar arithmetic
        eta = self.natural_parameters()
        powered = tuple((append_event_axes(exponent, e, nd) if nd else exponent) * e
                        for e, nd in zip(eta, self.natural_event_ndims))
        log_scale = (
            exponent * self.log_scale
            + self.log_partition_of(powered)
            - exponent * self.log_partition_of(eta)
            + (exponent - 1.0) * self.log_base_measure_of(eta)
        )
        return self.from_natural(powered, log_scale)

    def power_unscaled(self, exponent) -> "ExponentialFamily":
        """:meth:`power` with log-scale zero: the natural parameters times ``exponent``, without the
        log-partitions (for N messages of a plate, N of them twice). Sums of the natural parameters the message
        was given (:meth:`with_natural_parameter_totals`) are carried over, times the exponent."""
        exponent = as_float_array(exponent, "exponent")
        if type(exponent) is np.float64 and not self.batch_shape:  # one message: no totals to carry over
            return self.from_natural(tuple(exponent * e for e in self.natural_parameters()), None)
        powered = tuple((append_event_axes(exponent, e, nd) if nd else exponent) * e
                        for e, nd in zip(self.natural_parameters(), self.natural_event_ndims))
        result = self.from_natural(powered, None)
        memo = getattr(self, "__dict__", None)  # a family with __slots__ keeps no totals
        if memo is None or getattr(result, "__dict__", None) is None:
            return result
        known = dict(memo.get("_kept_totals", {}))
        if "_natural_parameter_totals" in memo:
            known[0] = memo["_natural_parameter_totals"]
        for keep, totals in known.items():
            if exponent.ndim and (exponent.ndim < keep or any(size != 1 for size in exponent.shape[keep:])):
                continue  # an exponent that varies over the summed axes: the totals are summed afresh when asked
            factor = exponent.reshape(exponent.shape[:keep]) if exponent.ndim else exponent
            result._remember_totals(tuple((append_event_axes(factor, t, nd) if nd else factor) * t
                                          for t, nd in zip(totals, self.natural_event_ndims)), keep)
        return result

    def broadcast_to(self, batch_shape: tuple) -> "ExponentialFamily":
        batch_shape = tuple(batch_shape)
        eta = tuple(
            np.broadcast_to(e, batch_shape + e.shape[e.ndim - nd :] if nd else batch_shape)
            for e, nd in zip(self.natural_parameters(), self.natural_event_ndims)
        )
        return self.from_natural(eta, np.broadcast_to(self.log_scale, batch_shape))

    def __getitem__(self, index) -> "ExponentialFamily":
        eta = tuple(e[index] if nd == 0 else e[(index if isinstance(index, tuple) else (index,)) + (Ellipsis,)]
                    for e, nd in zip(self.natural_parameters(), self.natural_event_ndims))
        return self.from_natural(eta, self.log_scale[index])


def append_event_axes(scalar_per_batch: Array, like: Array, event_ndim: int) -> Array:
    """Append ``event_ndim`` unit axes to a batch-shaped array so it broadcasts against ``like``."""
    scalar_per_batch = np.asarray(scalar_per_batch)
    if scalar_per_batch.ndim == 0 or event_ndim == 0:
        return scalar_per_batch
    return scalar_per_batch.reshape(scalar_per_batch.shape + (1,) * event_ndim)


def broadcast_params(params: Sequence[Array], event_ndims: Sequence[int]) -> tuple:
    """Broadcast the batch axes of several parameters to a common batch shape."""
    for p, nd in zip(params, event_ndims):
        if p.ndim != nd:
            break
    else:  # unbatched: nothing to broadcast
        return (), tuple(params)
    shapes = [p.shape[: p.ndim - nd] if nd else p.shape for p, nd in zip(params, event_ndims)]
    if all(shape == shapes[0] for shape in shapes):  # one batch shape already: nothing to broadcast
        return shapes[0], tuple(params)
    batch = np.broadcast_shapes(*shapes)
    out = []
    for p, nd in zip(params, event_ndims):
        event = p.shape[p.ndim - nd :] if nd else ()
        out.append(np.broadcast_to(p, batch + event))
    return batch, tuple(out)


def compressed(array):
    """The smallest view that broadcasts back to ``array``: axes of stride 0 cut to length 1.

    A parameter broadcast over a plate (one variance shared by N messages) is
    a view with stride 0 along the plate; its distinct values are few.
    """
    if type(array) is not np.ndarray or 0 not in array.strides:
        return array
    return array[tuple(slice(0, 1) if stride == 0 else slice(None) for stride in array.strides)]


def batch_total(array, event_ndim: int = 0, keep: int = 0):
    """The sum of ``array`` over its batch (leading) axes, its last ``event_ndim`` axes kept.

    A value broadcast along a batch axis (stride 0) is summed once and
    multiplied by that axis' length, as the equality node's reduction does.
    ``keep`` leading axes are not summed (the copies of a model with copies).
    """
    if not isinstance(array, np.ndarray):
        return array
    batch_ndim = array.ndim - event_ndim
    if batch_ndim <= keep:
        return array
    axes = tuple(range(keep, batch_ndim))
    small = compressed(array)
    repeats = math.prod(array.shape[a] for a in axes if small.shape[a] != array.shape[a])
    total = _sum_over_middle_axes(small, keep, batch_ndim)
    total = total * repeats if repeats != 1 else total
    if keep and total.shape[:keep] != array.shape[:keep]:  # kept axes that were broadcast (stride 0)
        total = np.broadcast_to(total, array.shape[:keep] + total.shape[keep:])
    return total


def _sum_over_middle_axes(array: np.ndarray, keep: int, stop: int) -> np.ndarray:
    """``array.sum(axis=tuple(range(keep, stop)))``; for a contiguous array with a few numbers per element
    (K categories, d moments) as one matrix product with a vector of ones: numpy's reduction over a long axis
    with a short contiguous one behind it runs about ten times slower (1.2 ms against 0.15 ms for 10^5 × 5)."""
    count = math.prod(array.shape[keep:stop])
    width = math.prod(array.shape[stop:])
    if not array.flags.c_contiguous or width < 2 or count < 1024 or array.dtype != np.float64:
        return array.sum(axis=tuple(range(keep, stop)))
    rows = array.reshape(array.shape[:keep] + (count, width))
    return (np.ones(count) @ rows).reshape(array.shape[:keep] + array.shape[stop:])


def elementwise(function, *arrays):
    """``function(*arrays)`` (numpy-broadcasting, element by element), computed once per distinct element.

    For inputs broadcast over a plate (stride-0 views) the function runs on
    their compressed form and its result is broadcast back, so a derived
    parameter of N messages sharing one variance costs one operation, not N.
    """
    if not any(type(a) is np.ndarray and 0 in a.strides for a in arrays):
        return function(*arrays)
    shapes = [np.shape(a) for a in arrays]
    shape = shapes[0] if shapes.count(shapes[0]) == len(shapes) else np.broadcast_shapes(*shapes)
    result = function(*(compressed(a) for a in arrays))
    return result if result.shape == shape else broadcast_view(result, shape)


def _zeros_over(batch_shape: tuple) -> np.ndarray:
    """A read-only zero broadcast over ``batch_shape`` (stride 0), one per shape: the log-scale of a plate of
    normalised messages."""
    zeros = _ZERO_VIEWS.get(batch_shape)
    if zeros is None:
        if len(_ZERO_VIEWS) >= 256:  # plates of many sizes: keep the cache small
            _ZERO_VIEWS.clear()
        zeros = _ZERO_VIEWS[batch_shape] = np.broadcast_to(ZERO_LOG_SCALE, batch_shape)
    return zeros


_ZERO_VIEWS: dict = {}


def broadcast_view(array: np.ndarray, shape: tuple) -> np.ndarray:
    """``np.broadcast_to(array, shape)`` (a read-only view, stride 0 along the broadcast axes), made directly
    for a contiguous array of at most the rank of ``shape``: numpy's general function costs several times
    more, and a plate's parameters and constants are broadcast this way on every message of constants."""
    if type(array) is not np.ndarray or array.ndim > len(shape) or not array.flags.c_contiguous:
        return np.broadcast_to(array, shape)
    if array.ndim < len(shape):
        array = array.reshape((1,) * (len(shape) - array.ndim) + array.shape)
    strides = []
    for size, target, stride in zip(array.shape, shape, array.strides):
        if size == target:
            strides.append(stride)
        elif size == 1:
            strides.append(0)
        else:
            return np.broadcast_to(array, shape)  # (numpy names the shapes that do not broadcast)
    view = np.ndarray(shape, array.dtype, array, 0, tuple(strides))
    view.flags.writeable = False
    return view


def stack_last(arrays: Sequence) -> Array:
    """Broadcast ``arrays`` together and stack them along a new last axis (shape ``broadcast + (K,)``).

    The same as ``np.stack(np.broadcast_arrays(*arrays), axis=-1)``, without its
    fixed cost of several microseconds when every entry is a scalar (one
    weight or log-scale per sub-model).
    """
    if all(type(a) is np.float64 or type(a) is float for a in arrays):
        return np.array(arrays, dtype=float)
    return np.stack(np.broadcast_arrays(*arrays), axis=-1)


def logsumexp_of_floats(values: list) -> float:
    """``log Σ exp(values)`` of a few Python floats (non-empty): :func:`logsumexp` of a short vector.

    NaN anywhere gives NaN; all ``-inf`` gives ``-inf``; a ``+inf`` gives ``+inf``.
    """
    total = sum(values)
    if total != total and any(v != v for v in values):  # NaN propagates, as in numpy
        return math.nan
    peak = max(values)
    if not math.isfinite(peak):
        return peak
    total = 0.0
    for value in values:
        total += math.exp(value - peak)
    return peak + math.log(total)


def logsumexp(a: Array, axis=-1, keepdims: bool = False) -> Array:
    """``log(sum(exp(a)))`` along ``axis``, stable, with all ``-inf`` slices giving ``-inf``.

    scipy.special.logsumexp computes the same; this numpy version avoids its
    per-call overhead (~100 µs), which dominates on the small arrays of
    discrete messages.
    """
    a = np.asarray(a, dtype=float)
    if a.ndim == 1 and axis in (-1, 0, (-1,)) and a.size <= 16:
        # a handful of scalars (one switch, one categorical message): plain floats are several times faster
        result = logsumexp_of_floats(a.tolist())
        return np.array([result]) if keepdims else np.float64(result)
    if axis in (-1, (-1,), a.ndim - 1) and 1 < a.shape[-1] <= FEW_CATEGORIES and a.size > 64 * a.shape[-1]:
        out = _logsumexp_of_slices(a)
        return out[..., None] if keepdims else out
    peak = np.max(a, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(a - peak), axis=axis, keepdims=True)) + peak
    return out if keepdims else np.squeeze(out, axis=axis)


# Up to this many categories, a sum or log-sum-exp over the last axis of a large array adds its slices
# elementwise: numpy's reductions along a short contiguous axis pay a per-row cost that makes them
# tens of times slower than K − 1 whole-array additions (e.g. the switch of every sample of a signal).
FEW_CATEGORIES = 8


def sum_last_axis(a, keepdims: bool = False):
    """``a.sum(axis=-1)``, by adding the slices when the last axis is short and the array large."""
    a = np.asarray(a)
    if a.ndim < 2 or not 1 < a.shape[-1] <= FEW_CATEGORIES or a.size <= 64 * a.shape[-1]:
        return a.sum(axis=-1, keepdims=keepdims)
    total = a[..., 0] + a[..., 1]
    for k in range(2, a.shape[-1]):
        total += a[..., k]
    return total[..., None] if keepdims else total


def _logsumexp_of_slices(a: np.ndarray) -> np.ndarray:
    """:func:`logsumexp` over the last axis of ``a`` (..., K) for small K, slice by slice."""
    slices = [a[..., k] for k in range(a.shape[-1])]
    peak = slices[0]
    for value in slices[1:]:
        peak = np.maximum(peak, value)  # NaN propagates
    peak = np.where(np.isfinite(peak), peak, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        total = np.exp(slices[0] - peak)
        for value in slices[1:]:
            total += np.exp(value - peak)
        return np.log(total) + peak


def damped(new: "Distribution", old: "Distribution", damping: float) -> "Distribution":
    """``new`` with its natural parameters moved towards ``old`` by ``damping`` (loopy BP):
    ``(1 − d) η_new + d η_old``, the log-scale of ``new``; ``new`` itself unless both are of one family."""
    if not (isinstance(new, ExponentialFamily) and isinstance(old, ExponentialFamily) and new.family() is old.family()):
        return new
    eta = tuple((1 - damping) * a + damping * b for a, b in zip(new.natural_parameters(), old.natural_parameters()))
    return new.family().from_natural(eta, new.log_scale)
