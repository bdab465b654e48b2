"""Independent normal observations of a vector: f(out, mean, variances) = Π_n N(out_n | mean_n, v_n).

``out`` and ``mean`` are vectors of dimension N (event rank 1) and ``variances`` a positive vector of the same
length (a constant): a multivariate normal with a diagonal covariance, kept as a vector so that N can be
in the thousands. It is how noisy targets — or the Gaussian pseudo-observations of class labels
(:mod:`fgraph.families.basis_matching`) — enter a model of the whole vector, e.g. the values of a Gaussian
process (:func:`~fgraph.nodes.gaussian_process.GaussianProcess`): ``DiagonalNormal("y", mean=f, variances=v,
observed=ỹ)``.
"""
from __future__ import annotations

import numpy as np

from fgraph.families import Distribution
from fgraph.families.mvnormal import LOG_2PI
from fgraph.model import Variable, random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy
from fgraph.support import POSITIVE

__all__ = ["DiagonalNormal", "DiagonalNormalNode"]


class DiagonalNormalNode(FactorNode):
    interfaces = ("out", "mean", "variances")
    event_ndims = {"out": 1, "mean": 1, "variances": 1}
    support = {"variances": POSITIVE}

    @classmethod
    def out_event_shape(cls, parameters) -> tuple:
        mean = parameters["mean"]
        if isinstance(mean, Variable):
            return mean.event_shape
        if np.ndim(mean) < 1:
            raise ValueError("the mean of a DiagonalNormal must be a vector (an array whose last axis has length N)")
        return np.shape(mean)[-1:]


def DiagonalNormal(name, mean, variances, observed=None, batch_shape=None, power=1.0):
    """A vector ``name ~ N(mean, diag(variances))``: N independent normals.

    ``mean`` a vector variable (e.g. a :func:`~fgraph.nodes.gaussian_process.GaussianProcess`) or an array whose last
    axis has length N; ``variances`` positive, shape ``(N,)`` or batched. ``observed`` binds the N values.
    """
    return random_variable(DiagonalNormalNode, name, {"mean": mean, "variances": variances}, observed,
                           batch_shape, power)


@average_energy(DiagonalNormalNode)
def _diagonal_normal_energy(q_out: Distribution, q_mean: Distribution, q_variances: Distribution):
    """``½ Σ_n (log 2π v_n + (Var out_n + Var mean_n + (E out_n − E mean_n)²) / v_n)`` for known ``v``."""
    variances = q_variances.mean
    spread = _variances_of(q_out) + _variances_of(q_mean) + (q_out.mean - q_mean.mean) ** 2
    return 0.5 * np.sum(LOG_2PI + np.log(variances) + spread / variances, axis=-1)


def _variances_of(q: Distribution):
    return q.var if hasattr(q, "var") else 0.0
