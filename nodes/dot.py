"""Inner product with known vectors: f(out, in, x) = δ(out − xᵀ in).

``in`` is a latent vector (dimension d), ``x`` a known vector of the same
dimension (a constant, or data: an array of shape ``(N, d)`` makes a plate
of N factors, one per row), ``out`` the scalar ``xᵀ in``. With a Gaussian
likelihood on ``out`` this is Bayesian linear regression by message passing:

    w ~ N(μ₀, Σ₀),   f_n = x_nᵀ w,   y_n ~ N(f_n, v).

Messages: to ``out``, the push-forward N(xᵀμ, xᵀΣx) (log-scale 0); to ``in``,
``m_out(xᵀ in)``, a :class:`~fgraph.families.mvnormal.GaussianLikelihood` of
rank one (flat orthogonally to x), which becomes proper at ``in`` once
multiplied with the prior and the other observations. The evidence stays
exact.

The factor is deterministic: no average energy, sum-product only (in a VMP
model give it ``"bp"``, as for :mod:`fgraph.nodes.addition`).
"""
from __future__ import annotations

import numpy as np

from fgraph.errors import ModelError
from fgraph.model import Variable, random_variable
from fgraph.node import FactorNode

__all__ = ["Dot", "DotProduct"]


class DotProduct(FactorNode):
    """``out = xᵀ in`` with ``in`` a vector variable and ``x`` a known vector."""

    interfaces = ("out", "in", "x")
    event_ndims = {"out": 0, "in": 1, "x": 1}

    @staticmethod
    def check_parameter(interface, value):
        if interface == "x" and not np.all(np.isfinite(value)):
            raise ValueError("x contains NaN or infinite values")


def Dot(name, x, w, observed=None, batch_shape=None):
    """The scalar variable ``name = xᵀ w``.

    ``w`` is a vector variable (event shape ``(d,)``); ``x`` a known vector of
    length d, or an array of shape ``(N, d)`` (or ``fg.Data``) giving one
    inner product per row: a plate of N. ``observed`` binds data to the
    product itself (a noise-free observation; usually a Normal likelihood on
    ``name`` is what a regression wants).
    """
    if not isinstance(w, Variable) or w.event_ndim != 1:
        raise ModelError(f"Dot {name!r}: w must be a vector variable (event shape (d,)), got {w!r}")
    if isinstance(x, Variable) and not x.observed:
        raise ModelError(f"Dot {name!r}: x must be known (numbers or fg.Data); a latent x has no rule here")
    dimension = w.event_shape[0]
    if not isinstance(x, Variable) and np.shape(x)[-1:] != (dimension,):
        raise ModelError(
            f"Dot {name!r}: x has shape {np.shape(x)}, but w has dimension {dimension}; "
            "give x a last axis of that length (one row per observation)"
        )
    return random_variable(DotProduct, name, {"in": w, "x": x}, observed, batch_shape=batch_shape, event_shape=())
