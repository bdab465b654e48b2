"""Multivariate normal factor nodes.

``MvNormalMeanCovariance``: f(out, mean, cov)       = N(out | mean, cov)
``MvNormalMeanPrecision``:  f(out, mean, precision) = N(out | mean, precision^-1)

``out`` and ``mean`` are vectors of dimension d (event rank 1), ``cov`` and
``precision`` symmetric positive-definite d x d matrices (event rank 2). The
DSL constructor :func:`MvNormal` picks the node from the keyword given
(``cov=`` or ``precision=``).
"""
from __future__ import annotations

import numpy as np

from fgraph.errors import ModelError
from fgraph.families import Distribution
from fgraph.families.base import check_finite
from fgraph.families.linalg import check_square, check_symmetric, cholesky, outer
from fgraph.families.mvnormal import LOG_2PI
from fgraph.model import Variable, random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy
from fgraph.support import POSITIVE_DEFINITE

__all__ = ["MvNormal", "MvNormalMeanCovariance", "MvNormalMeanPrecision"]


def check_positive_definite(matrix: np.ndarray, name: str) -> None:
    """Raise ValueError unless ``matrix`` (shape ``(..., d, d)``) is symmetric positive definite."""
    check_square(matrix, name)
    check_finite(matrix, name)
    check_symmetric(matrix, name)
    cholesky(matrix, name)


def _vector_event_shape(mean) -> tuple:
    """Event shape ``(d,)`` of a mean given as a variable or an array whose last axis is the event axis."""
    if isinstance(mean, Variable):
        return mean.event_shape
    shape = np.shape(mean)
    if len(shape) < 1:
        raise ModelError("MvNormal: mean must be a vector (an array whose last axis has length d), got a scalar")
    return shape[-1:]


def _matrix_dimension(matrix):
    if isinstance(matrix, Variable):
        return matrix.event_shape[-1] if matrix.event_shape else None
    shape = np.shape(matrix)
    return shape[-1] if len(shape) >= 2 else None


class _MvNormal(FactorNode):
    matrix_interface = ""
    energy_is_log_density = True

    @classmethod
    def out_event_shape(cls, parameters) -> tuple:
        """``out`` has the event shape ``(d,)`` of ``mean``."""
        return _vector_event_shape(parameters["mean"])


class MvNormalMeanCovariance(_MvNormal):
    interfaces = ("out", "mean", "cov")
    event_ndims = {"out": 1, "mean": 1, "cov": 2}
    support = {"cov": POSITIVE_DEFINITE}
    matrix_interface = "cov"


class MvNormalMeanPrecision(_MvNormal):
    interfaces = ("out", "mean", "precision")
    event_ndims = {"out": 1, "mean": 1, "precision": 2}
    support = {"precision": POSITIVE_DEFINITE}
    matrix_interface = "precision"


def MvNormal(name, mean, cov=None, precision=None, observed=None, batch_shape=None, power=1.0):
    """Factor: adds to the model a d-dimensional normal variable ``name ~ N(mean, cov)`` or ``N(mean, precision^-1)``.

    ``mean`` is a vector (shape ``batch + (d,)``) or a vector variable; ``cov``
    or ``precision`` a symmetric positive-definite matrix (shape ``batch + (d, d)``)
    or a matrix variable (e.g. a ``Wishart`` precision). ``observed`` binds data of
    shape ``batch + (d,)``; ``power`` in (0, 1] tempers the factor.
    """
    if (cov is None) == (precision is None):
        raise ModelError(f"MvNormal {name!r}: give exactly one of cov= or precision=")
    matrix, matrix_name = (cov, "cov") if cov is not None else (precision, "precision")
    dimension = _vector_event_shape(mean)[0]
    matrix_dimension = _matrix_dimension(matrix)
    if matrix_dimension is not None and matrix_dimension != dimension:
        raise ModelError(
            f"MvNormal {name!r}: mean has dimension {dimension} but {matrix_name} is "
            f"{matrix_dimension}x{matrix_dimension}; they must match"
        )
    node_type = MvNormalMeanCovariance if cov is not None else MvNormalMeanPrecision
    return random_variable(node_type, name, {"mean": mean, matrix_name: matrix}, observed, batch_shape, power)


def expected_outer_difference(q_out: Distribution, q_mean: Distribution) -> np.ndarray:
    """``E[(out - mean)(out - mean)^T]`` under independent marginals, shape ``batch + (d, d)``."""
    cross = outer(q_out.mean, q_mean.mean)
    return q_out.second_moment - cross - np.swapaxes(cross, -1, -2) + q_mean.second_moment


def trace_of_product(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``tr(left @ right)`` over batches, shape ``batch``."""
    return np.einsum("...ij,...ji->...", left, right)


@average_energy(MvNormalMeanCovariance)
def _mean_covariance_energy(q_out: Distribution, q_mean: Distribution, q_cov: Distribution):
    """``½ (d log 2π + E log|Σ| + tr(E[Σ^-1] E[(out - mean)(out - mean)^T]))``."""
    dimension = q_out.event_shape[-1]
    squared = expected_outer_difference(q_out, q_mean)
    return 0.5 * (dimension * LOG_2PI + q_cov.mean_logdet + trace_of_product(q_cov.mean_inverse, squared))


@average_energy(MvNormalMeanPrecision)
def _mean_precision_energy(q_out: Distribution, q_mean: Distribution, q_precision: Distribution):
    """``½ (d log 2π - E log|Λ| + tr(E[Λ] E[(out - mean)(out - mean)^T]))``."""
    dimension = q_out.event_shape[-1]
    squared = expected_outer_difference(q_out, q_mean)
    return 0.5 * (dimension * LOG_2PI - q_precision.mean_logdet + trace_of_product(q_precision.mean, squared))
