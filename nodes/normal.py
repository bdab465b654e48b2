"""Univariate normal factor nodes.

``NormalMeanVariance``:  f(out, mean, var)       = N(out | mean, var)
``NormalMeanPrecision``: f(out, mean, precision) = N(out | mean, 1/precision)

Interfaces are scalars (event rank 0). The DSL constructor :func:`Normal`
picks the node from the keyword given (``var=`` or ``precision=``).
"""
from __future__ import annotations


from fgraph.errors import ModelError
from fgraph.families import Distribution
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
    """``E[(out - mean)**2]`` under independent marginals."""
    return q_out.second_moment - 2.0 * q_out.mean * q_mean.mean + q_mean.second_moment


@average_energy(NormalMeanVariance)
def _normal_mean_variance_energy(q_out: Distribution, q_mean: Distribution, q_var: Distribution):
    return 0.5 * (LOG_2PI + q_var.mean_log + q_var.mean_inverse * expected_squared_difference(q_out, q_mean))


@average_energy(NormalMeanPrecision)
def _normal_mean_precision_energy(q_out: Distribution, q_mean: Distribution, q_precision: Distribution):
    return 0.5 * (LOG_2PI - q_precision.mean_log + q_precision.mean * expected_squared_difference(q_out, q_mean))
