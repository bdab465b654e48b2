"""Categorical factor node: f(out, p) = Cat(out | p) = prod_k p_k**out_k.

``out`` is a one-hot vector of length K and ``p`` a probability vector of the
same length (event rank 1 for both). The DSL constructor :func:`Categorical`
accepts observations as integer labels (shape ``batch``) or one-hot arrays
(shape ``batch + (K,)``); labels are converted to one-hot here, since every
categorical value inside the engine is one-hot.

This module also holds the helpers the other discrete nodes share:
:func:`times_log` (``w log v`` with ``0 log 0 = 0``) and
:func:`one_hot_observations`.
"""
from __future__ import annotations

import math

import numpy as np

from fgraph.errors import DataError, ModelError
from fgraph.families import Distribution
from fgraph.families.base import batch_total, compressed, sum_last_axis
from fgraph.model import PerCopy, Variable, numeric_array, random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy, energy_total
from fgraph.support import ONE_HOT, SIMPLEX

__all__ = ["Categorical", "CategoricalNode"]


class CategoricalNode(FactorNode):
    energy_is_log_density = True
    interfaces = ("out", "p")
    event_ndims = {"out": 1, "p": 1}
    support = {"out": ONE_HOT, "p": SIMPLEX}

    @classmethod
    def out_event_shape(cls, parameters) -> tuple:
        return (num_categories_of(parameters["p"], axis=-1),)


def num_categories_of(value, axis: int) -> int:
    """The number of categories K along ``axis`` of a parameter (a Variable's event shape or an array's shape)."""
    if isinstance(value, Variable):
        shape = value.event_shape
    else:
        shape = np.shape(value)
    if len(shape) < -axis:
        raise ModelError(f"expected at least {-axis} axis/axes holding the categories, got shape {tuple(shape)}")
    return int(shape[axis])


def one_hot_observations(name: str, observed, num_categories: int) -> np.ndarray:
    """Observed categorical data as one-hot vectors, shape ``batch + (K,)``.

    Integer arrays are labels in ``0 .. K-1`` (shape ``batch``); any other
    numeric or boolean array must already be one-hot (shape ``batch + (K,)``,
    entries 0/1, one 1 per row). Raises DataError naming the variable.
    Values per copy of a model with copies (:func:`fgraph.model.per_copy`) stay marked.
    """
    if isinstance(observed, PerCopy):
        return PerCopy(one_hot_observations(name, observed.value, num_categories))
    try:
        labels = np.asarray(observed)
    except ValueError:  # a ragged list: named below
        labels = None
    if labels is not None and np.issubdtype(labels.dtype, np.integer):
        array = labels
        outside = (array < 0) | (array >= num_categories)
        if outside.any():
            first = tuple(int(i) for i in np.argwhere(outside)[0])
            raise DataError(
                f"data for {name!r}: labels must lie in 0..{num_categories - 1}, "
                f"got {int(array[first])} at index {first}"
            )
        return (array[..., None] == np.arange(num_categories)).astype(float)
    # anything else must be numbers forming one-hot rows (strings, complex values, ... are named here)
    array = numeric_array(observed, f"data for {name!r} (integer labels or one-hot arrays)")
    if array.ndim < 1 or array.shape[-1] != num_categories:
        raise DataError(
            f"data for {name!r}: a non-integer array must be one-hot with a last axis of K = {num_categories}, "
            f"got shape {array.shape}; pass labels as an integer array (e.g. labels.astype(int))"
        )
    is_one_hot = np.all((array == 0.0) | (array == 1.0), axis=-1) & (array.sum(axis=-1) == 1.0)
    if not is_one_hot.all():
        first = tuple(int(i) for i in np.argwhere(~is_one_hot)[0])
        raise DataError(
            f"data for {name!r}: row {first} is not one-hot ({array[first]!r}); "
            "every row needs exactly one 1 and zeros elsewhere"
        )
    return array


def times_log(weight, log_value):
    """``weight * log_value`` with ``0 * log 0 = 0``: an impossible outcome of zero weight adds nothing."""
    weight = np.asarray(weight, dtype=float)
    log_value = np.asarray(log_value, dtype=float)
    if log_value.size < weight.size and np.all(np.isfinite(log_value)):  # no log 0: the where is not needed
        return weight * log_value
    with np.errstate(invalid="ignore"):
        return np.where(weight == 0.0, 0.0, weight * log_value)


def Categorical(name, p, observed=None, batch_shape=None, power=1.0):
    """Factor: adds to the model a one-hot variable ``name ~ Cat(p)`` with ``K = p.shape[-1]`` categories.

    ``p`` is a probability vector (array, batched over leading axes) or a
    vector variable (e.g. Dirichlet). ``observed`` is an integer label array
    of shape ``batch`` or a one-hot array of shape ``batch + (K,)``; data
    bound later (``observed=True`` then ``fg.infer(data=...)``) must be one-hot.
    """
    if observed is not None and observed is not True and observed is not False:
        observed = one_hot_observations(name, observed, num_categories_of(p, axis=-1))
    return random_variable(CategoricalNode, name, {"p": p}, observed, batch_shape, power)


@average_energy(CategoricalNode)
def _categorical_energy(q_out: Distribution, q_p: Distribution, node):
    """``-sum_k E[out_k] E[log p_k]``."""
    return -sum_last_axis(times_log(q_out.mean, q_p.mean_log))


@energy_total(_categorical_energy, per_copy=True)
def _categorical_energy_total(q_out: Distribution, q_p: Distribution, node):
    """``(Σ_n U_n, n)`` per copy for a ``p`` shared by the plate: ``−Σ_k (Σ_n E[out_nk]) E[log p_k]``, the counts
    summed once rather than an energy per element. ``None`` (the engine sums the energies above) when ``p``
    varies over the plate or has an impossible category (0 · log 0 needs the elementwise form)."""
    copies = node.copy_ndim
    weights = np.asarray(q_out.mean, dtype=float)
    log_p = compressed(np.asarray(q_p.mean_log, dtype=float))
    if log_p.ndim > weights.ndim:
        return None
    log_p = log_p.reshape((1,) * (weights.ndim - log_p.ndim) + log_p.shape)
    if any(size != 1 for size in log_p.shape[copies:-1]) or not np.all(np.isfinite(log_p)):
        return None
    counts = batch_total(weights, 1, keep=copies)  # copies + (K,)
    total = -sum_last_axis(counts * log_p.reshape(log_p.shape[:copies] + log_p.shape[-1:]))
    count = math.prod(node.batch_shape[copies:])
    return (float(total) if not copies else total), count


