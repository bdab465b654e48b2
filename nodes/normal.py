"""Univariate normal factor nodes.

``NormalMeanVariance``:  f(out, mean, var)       = N(out | mean, var)
``NormalMeanPrecision``: f(out, mean, precision) = N(out | mean, 1/precision)

Interfaces are scalars (event rank 0). The DSL constructor :func:`Normal`
picks the node from the keyword given (``var=`` or ``precision=``).
"""
from __future__ import annotations


import numpy as np

from fgraph.errors import ModelError
from fgraph.families import Distribution, PointMass
from fgraph.families.normal import LOG_2PI
from fgraph.model import random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy
from fgraph.support import POSITIVE

__all__ = ["Normal", "NormalMeanVariance", "NormalMeanPrecision"]


class NormalMeanVariance(FactorNode):
    collapsible_plates = True
    interfaces = ("out", "mean", "var")
    event_ndims = {"out": 0, "mean": 0, "var": 0}
    support = {"var": POSITIVE}


class NormalMeanPrecision(FactorNode):
    collapsible_plates = True
    interfaces = ("out", "mean", "precision")
    event_ndims = {"out": 0, "mean": 0, "precision": 0}
    support = {"precision": POSITIVE}


def Normal(name, mean, var=None, precision=None, observed=None, batch_shape=None, power=1.0):
    """A scalar normal variable ``name ~ N(mean, var)`` or ``N(mean, 1/precision)``.

    ``mean``, ``var`` and ``precision`` are numbers, arrays (batched) or variables.
    ``observed`` binds data (shape ``batch_shape``), ``power`` in (0, 1] tempers the factor.
    """
    if (var is None) == (precision is None):
        raise ModelError(f"Normal {name!r}: give exactly one of var= or precision=")
    if var is not None:
        return random_variable(NormalMeanVariance, name, {"mean": mean, "var": var}, observed, batch_shape, power)
    return random_variable(NormalMeanPrecision, name, {"mean": mean, "precision": precision}, observed, batch_shape, power)


def expected_squared_difference(q_out: Distribution, q_mean: Distribution):
    """``E[(out - mean)**2] = (E[out] - E[mean])**2 + Var[out] + Var[mean]`` under independent marginals.

    Over a plate of N observed ``out`` and one global ``mean`` this is one
    N-element array, made by one allocating pass (the difference) and two
    in-place ones. The message to the precision and the node's average energy
    read the same pair of marginals in one sweep, so the result is kept on
    ``q_mean`` (with ``q_out``, compared by identity): marginals are never
    modified, and a new marginal of the mean is a new object.
    """
    memo = getattr(q_mean, "__dict__", None)  # a family with __slots__ keeps nothing
    kept = memo.get("_squared_difference") if memo is not None else None
    if kept is not None and kept[0] is q_out:
        return kept[1]
    difference = q_out.mean - q_mean.mean
    spread = _variance(q_out) + _variance(q_mean)
    if type(difference) is np.ndarray and np.broadcast_shapes(difference.shape, np.shape(spread)) == difference.shape:
        squared = np.multiply(difference, difference, out=difference)  # difference is a fresh array: reuse it
        np.add(squared, spread, out=squared)
    else:
        squared = difference * difference + spread
    if memo is not None:
        if type(squared) is np.ndarray:
            squared.flags.writeable = False  # shared by its readers: none may change it in place
        memo["_squared_difference"] = (q_out, squared)
    return squared


def _variance(q: Distribution):
    if type(q) is PointMass:
        return 0.0
    if getattr(type(q), "var", None) is None:
        return q.second_moment - q.mean**2
    return q.var


def _plus_half_product(constant, weight, squared):
    """``constant + weight * squared / 2`` with one N-element temporary over a plate."""
    result = (0.5 * weight) * squared
    if type(result) is np.ndarray and np.broadcast_shapes(result.shape, np.shape(constant)) == result.shape:
        return np.add(result, constant, out=result)
    return result + constant


@average_energy(NormalMeanVariance)
def _normal_mean_variance_energy(q_out: Distribution, q_mean: Distribution, q_var: Distribution):
    return _plus_half_product(0.5 * (LOG_2PI + q_var.mean_log), q_var.mean_inverse, expected_squared_difference(q_out, q_mean))


@average_energy(NormalMeanPrecision)
def _normal_mean_precision_energy(q_out: Distribution, q_mean: Distribution, q_precision: Distribution):
    return _plus_half_product(0.5 * (LOG_2PI - q_precision.mean_log), q_precision.mean,
                              expected_squared_difference(q_out, q_mean))
