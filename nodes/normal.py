"""Univariate normal factor nodes.

``NormalMeanVariance``:  f(out, mean, var)       = N(out | mean, var)
``NormalMeanPrecision``: f(out, mean, precision) = N(out | mean, 1/precision)

Interfaces are scalars (event rank 0). The DSL constructor :func:`Normal`
picks the node from the keyword given (``var=`` or ``precision=``).
"""
from __future__ import annotations


import numpy as np

from fgraph.errors import ModelError
from fgraph.families import Distribution, MultivariateNormal, PointMass
from fgraph.families.base import batch_total
from fgraph.families.normal import LOG_2PI
from fgraph.model import random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy, energy_total
from fgraph.support import POSITIVE
from fgraph.float_twins import expected_squared_difference as expected_squared_difference_on_floats, float_energy

__all__ = ["Normal", "NormalMeanVariance", "NormalMeanPrecision"]


class NormalMeanVariance(FactorNode):
    collapsible_plates = True
    energy_is_log_density = True
    interfaces = ("out", "mean", "var")
    event_ndims = {"out": 0, "mean": 0, "var": 0}
    support = {"var": POSITIVE}


class NormalMeanPrecision(FactorNode):
    collapsible_plates = True
    energy_is_log_density = True
    interfaces = ("out", "mean", "precision")
    event_ndims = {"out": 0, "mean": 0, "precision": 0}
    support = {"precision": POSITIVE}


def Normal(name, mean, var=None, precision=None, observed=None, batch_shape=None, power=1.0):
    """Factor: adds to the model a scalar normal variable ``name ~ N(mean, var)`` or ``N(mean, 1/precision)``.

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


def squared_difference_total(q_out: Distribution, q_mean: Distribution) -> float:
    """``Σ_i E[(out_i - mean)**2]`` over the batch of ``q_out`` (a plate) for one global ``mean``.

    The message to a global precision and the node's average energy over a
    plate read only this sum of :func:`expected_squared_difference`. With
    one unbatched ``q_mean`` it is ``Σ_i (E[out_i] - E[mean])² + Σ_i Var[out_i]
    + N Var[mean]``: one allocating pass (the difference) and one ``dot``,
    without the N-element residuals. Kept on ``q_mean`` for ``q_out`` like the
    residuals themselves (both are read once per change of ``q(mean)``).
    """
    memo = getattr(q_mean, "__dict__", None)
    kept = memo.get("_squared_difference_total") if memo is not None else None
    if kept is not None and kept[0] is q_out:
        return kept[1]
    out_mean, mean = q_out.mean, q_mean.mean
    residuals = memo.get("_squared_difference") if memo is not None else None
    if residuals is not None and residuals[0] is q_out:  # the residuals exist already: sum them
        total = float(batch_total(residuals[1]))
    elif isinstance(out_mean, np.ndarray) and out_mean.ndim >= 1 and np.ndim(mean) == 0:
        difference = (out_mean - mean).ravel()
        spread = batch_total(np.broadcast_to(_variance(q_out), out_mean.shape)) + out_mean.size * _variance(q_mean)
        total = float(np.dot(difference, difference)) + float(spread)
    else:
        total = float(batch_total(expected_squared_difference(q_out, q_mean)))
    if memo is not None:
        memo["_squared_difference_total"] = (q_out, total)
    return total


def mean_total(q: Distribution) -> float:
    """``Σ_i E[x_i]`` over the batch of ``q``, kept on ``q`` (data: one pass per run, not per sweep)."""
    memo = getattr(q, "__dict__", None)
    total = memo.get("_mean_total") if memo is not None else None
    if total is None:
        total = float(batch_total(q.mean))
        if memo is not None:
            memo["_mean_total"] = total
    return total


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


@energy_total(_normal_mean_precision_energy)
def _normal_mean_precision_energy_total(q_out: Distribution, q_mean: Distribution, q_precision: Distribution):
    """``(Σ_i U_i, count)`` of the average energy above over a plate of ``out`` with global mean and precision.

    ``Σ_i U_i = N/2 (log 2π - E[log τ]) + E[τ]/2 Σ_i E[(out_i - mean)²]``: the
    sum of the residuals, which the message to the precision computed already
    (:func:`squared_difference_total`). ``None`` for anything else (the engine
    then sums the per-element energies).
    """
    out_mean = q_out.mean
    if not isinstance(out_mean, np.ndarray) or out_mean.ndim == 0 or np.ndim(q_mean.mean) or np.ndim(q_precision.mean):
        return None
    count = out_mean.size
    total = (0.5 * count * (LOG_2PI - float(q_precision.mean_log))
             + 0.5 * float(q_precision.mean) * squared_difference_total(q_out, q_mean))
    return total, count


def joint_squared_difference(q_out_mean: MultivariateNormal):
    """``E[(out - mean)**2] = (E[out] - E[mean])**2 + Var[out] + Var[mean] - 2 Cov[out, mean]`` under the joint
    marginal of the structured cluster (out, mean), a bivariate normal of event shape ``(2,)``."""
    mean, cov = q_out_mean.mean, q_out_mean.cov
    difference = mean[..., 0] - mean[..., 1]
    return difference * difference + cov[..., 0, 0] + cov[..., 1, 1] - 2.0 * cov[..., 0, 1]


@average_energy(NormalMeanVariance)
def _normal_mean_variance_energy_structured(q_out_mean: MultivariateNormal, q_var: Distribution):
    """``½ (log 2π + E[log v]) + ½ E[1/v] E[(out − mean)²]`` under q(out, mean) q(v)."""
    return _plus_half_product(0.5 * (LOG_2PI + q_var.mean_log), q_var.mean_inverse, joint_squared_difference(q_out_mean))


@average_energy(NormalMeanPrecision)
def _normal_mean_precision_energy_structured(q_out_mean: MultivariateNormal, q_precision: Distribution):
    """``½ (log 2π − E[log τ]) + ½ E[τ] E[(out − mean)²]`` under q(out, mean) q(τ)."""
    return _plus_half_product(0.5 * (LOG_2PI - q_precision.mean_log), q_precision.mean,
                              joint_squared_difference(q_out_mean))


@float_energy(_normal_mean_variance_energy, q_out=("mean", "var"), q_mean=("mean", "var"),
              q_var=("mean_log", "mean_inverse"))
def _normal_mean_variance_energy_on_floats(out_mean, out_var, mean_mean, mean_var, var_mean_log, var_mean_inverse):
    """The average energy of one element on floats (:mod:`fgraph.floats`)."""
    squared = expected_squared_difference_on_floats(out_mean, out_var, mean_mean, mean_var)
    return 0.5 * (LOG_2PI + var_mean_log) + 0.5 * var_mean_inverse * squared


@float_energy(_normal_mean_precision_energy, q_out=("mean", "var"), q_mean=("mean", "var"),
              q_precision=("mean", "mean_log"))
def _normal_mean_precision_energy_on_floats(out_mean, out_var, mean_mean, mean_var, precision_mean,
                                            precision_mean_log):
    """The average energy of one element on floats (:mod:`fgraph.floats`)."""
    squared = expected_squared_difference_on_floats(out_mean, out_var, mean_mean, mean_var)
    return 0.5 * (LOG_2PI - precision_mean_log) + 0.5 * precision_mean * squared
