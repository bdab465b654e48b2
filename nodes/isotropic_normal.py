"""Isotropic multivariate normal: f(out, mean, precision) = N(out | mean, precision⁻¹ I_d).

``out`` and ``mean`` are vectors of dimension d (event rank 1), ``precision`` τ a positive *scalar* (event rank
0) that scales the identity: one precision for every coordinate. With a Gamma prior on τ it is the hierarchical
(ridge / automatic-relevance) prior of a regression coefficient vector, ``β | τ ~ N(0, τ⁻¹ I_p)``,
``τ ~ Gamma(a₀, b₀)`` — the coefficient prior of the Bayesian mixture linear regression of the TVB paper (§5.2,
eq. 21; :mod:`fgraph.models.mixtures.bmlr`). :func:`~fgraph.nodes.mvnormal.MvNormal` takes a d × d precision (a ``Wishart``
variable); a scalar Gamma precision is not a matrix variable, hence this node.

**Messages** (mean field q(out) q(mean) q(τ); exact for the clamped cases noted):

* to ``out``: ``exp E_q[log f] ∝ N(out | E[mean], (E[τ] I)⁻¹)`` — exact (log-scale 0) for a known mean and τ;
* to ``mean``: ``N(mean | E[out], (E[τ] I)⁻¹)``, the same by symmetry;
* to ``precision``: ``exp E_q[log f] = (2π)^(−d/2) τ^(d/2) exp(−τ S/2) ∝ Gamma(τ | d/2 + 1, S/2)`` with
  ``S = E[‖out − mean‖²] = ‖E[out] − E[mean]‖² + tr Cov[out] + tr Cov[mean]``; for a known out and mean it is the
  factor itself, with log-scale ``−(d/2) log 2π + log Γ(d/2 + 1) − (d/2 + 1) log(S/2)``.

The average energy is ``½ (d log 2π − d E[log τ] + E[τ] S)``. The node is variational (``"mf"``); under
sum-product it has rules only where every other interface is clamped.
"""
from __future__ import annotations

import numpy as np

from fgraph.errors import ModelError
from fgraph.families import Distribution
from fgraph.families.mvnormal import LOG_2PI
from fgraph.model import Variable, random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy
from fgraph.support import POSITIVE
from fgraph.nodes.mvnormal import _vector_event_shape

__all__ = ["IsotropicNormal", "IsotropicNormalNode"]


class IsotropicNormalNode(FactorNode):
    """``out ~ N(mean, precision⁻¹ I_d)`` with ``out``, ``mean`` d-vectors and ``precision`` a positive scalar."""

    interfaces = ("out", "mean", "precision")
    event_ndims = {"out": 1, "mean": 1, "precision": 0}
    support = {"precision": POSITIVE}
    default_factorization = "mf"

    @classmethod
    def out_event_shape(cls, parameters) -> tuple:
        """``out`` has the event shape ``(d,)`` of ``mean``."""
        return _vector_event_shape(parameters["mean"])


def IsotropicNormal(name, mean, precision, observed=None, batch_shape=None, power=1.0):
    """A d-dimensional normal variable ``name ~ N(mean, precision⁻¹ I_d)``.

    ``mean`` is a vector (shape ``batch + (d,)``) or a vector variable; ``precision`` a positive number or array
    (batched) or a scalar variable (e.g. a ``Gamma``). ``observed`` binds data of shape ``batch + (d,)``;
    ``power`` in (0, 1] tempers the factor. Run it with ``algorithm="vmp"``.
    """
    if isinstance(precision, Variable) and precision.event_shape != ():
        raise ModelError(f"IsotropicNormal {name!r}: precision must be a scalar variable (e.g. a Gamma), got one of "
                         f"event shape {precision.event_shape}")
    return random_variable(IsotropicNormalNode, name, {"mean": mean, "precision": precision}, observed, batch_shape,
                           power)


def trace_of(matrix: np.ndarray) -> np.ndarray:
    """``tr`` over the last two axes."""
    return np.trace(matrix, axis1=-2, axis2=-1)


def expected_squared_distance(q_out: Distribution, q_mean: Distribution) -> np.ndarray:
    """``S = E[‖out − mean‖²] = tr E[out outᵀ] − 2 E[out]ᵀE[mean] + tr E[mean meanᵀ]`` under independent marginals
    (point masses included), shape the broadcast batch."""
    return (trace_of(np.asarray(q_out.second_moment, dtype=float))
            - 2.0 * np.sum(np.asarray(q_out.mean, dtype=float) * np.asarray(q_mean.mean, dtype=float), axis=-1)
            + trace_of(np.asarray(q_mean.second_moment, dtype=float)))


@average_energy(IsotropicNormalNode)
def _isotropic_normal_energy(q_out: Distribution, q_mean: Distribution, q_precision: Distribution):
    """``½ (d log 2π − d E[log τ] + E[τ] E[‖out − mean‖²])``."""
    dimension = q_out.event_shape[-1]
    return 0.5 * (dimension * (LOG_2PI - q_precision.mean_log)
                  + q_precision.mean * expected_squared_distance(q_out, q_mean))
