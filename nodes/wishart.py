"""Wishart factor node: f(out, df, scale) = Wishart(out | df, scale).

``out`` is a symmetric positive-definite d x d matrix (event rank 2), ``df``
the degrees of freedom (a scalar > d - 1) and ``scale`` the scale matrix
(SPD, event rank 2); ``E[out] = df * scale``. It is the conjugate prior of the
precision matrix of :class:`~fgraph.nodes.mvnormal.MvNormalMeanPrecision`.
"""
from __future__ import annotations

import numpy as np

from fgraph.errors import ModelError
from fgraph.families import Distribution, PointMass
from fgraph.families.wishart import LOG_2, log_multivariate_gamma
from fgraph.model import Variable, random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy
from fgraph.support import POSITIVE, POSITIVE_DEFINITE
from fgraph.nodes.mvnormal import trace_of_product

__all__ = ["Wishart", "WishartNode"]


class WishartNode(FactorNode):
    interfaces = ("out", "df", "scale")
    event_ndims = {"out": 2, "df": 0, "scale": 2}
    support = {"out": POSITIVE_DEFINITE, "df": POSITIVE, "scale": POSITIVE_DEFINITE}

    @classmethod
    def out_event_shape(cls, parameters) -> tuple:
        """``out`` has the event shape ``(d, d)`` of ``scale``."""
        scale = parameters["scale"]
        shape = scale.event_shape if isinstance(scale, Variable) else np.shape(scale)[-2:]
        if len(shape) != 2:
            raise ModelError(f"Wishart: scale must be a d x d matrix, got shape {np.shape(scale)}")
        return tuple(shape)


def Wishart(name, df, scale, observed=None, batch_shape=None, power=1.0):
    """Factor: adds to the model a random SPD matrix ``name ~ Wishart(df, scale)`` (mean ``df * scale``), shape ``batch + (d, d)``.

    ``df`` must exceed ``d - 1``; ``scale`` is a symmetric positive-definite matrix.
    """
    if not isinstance(df, Variable) and not isinstance(scale, Variable):
        dimension = np.shape(scale)[-1] if np.ndim(scale) >= 2 else None
        if dimension is not None and np.any(np.asarray(df, dtype=float) <= dimension - 1):
            raise ModelError(
                f"Wishart {name!r}: df must be greater than d - 1 = {dimension - 1} for {dimension}x{dimension} "
                f"matrices, got {df!r}"
            )
    return random_variable(WishartNode, name, {"df": df, "scale": scale}, observed, batch_shape, power)


@average_energy(WishartNode)
def _wishart_energy(q_out: Distribution, q_df: PointMass, q_scale: Distribution):
    """``-E[log Wishart(out | df, S)]``, shape ``batch``.

    ``log Wishart = (df - d - 1)/2 log|out| - tr(S^-1 out)/2 - df d/2 log 2 - df/2 log|S| - log Γ_d(df/2)``;
    the expectation needs ``E[log|out|]``, ``E[out]``, ``E[S^-1]`` and ``E[log|S|]``.
    """
    df = q_df.value
    dimension = q_out.event_shape[-1]
    return -(
        0.5 * (df - dimension - 1.0) * q_out.mean_logdet
        - 0.5 * trace_of_product(q_scale.mean_inverse, q_out.mean)
        - 0.5 * df * dimension * LOG_2
        - 0.5 * df * q_scale.mean_logdet
        - log_multivariate_gamma(0.5 * df, dimension)
    )
