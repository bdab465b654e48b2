"""Gaussian-process prior: f(out, mean) = N(out | mean, K), with K = k(X, X) a kernel matrix.

``out`` is the vector of the function's values at N fixed inputs ``X`` (shape ``(N, d)``), ``mean`` its prior
mean there (a constant vector, or a number broadcast to all N). The kernel ``k``
(:mod:`fgraph.families.kernels`), the inputs (attribute ``points``) and the jitter policy are attributes of the
node, not interfaces: the hyperparameters are learnt by maximising the evidence the graph returns
(:mod:`fgraph.models.gp`), not by messages.

The message towards ``out`` is a :class:`~fgraph.families.gaussian_process.GaussianProcessPrior`; its product
with the message of independent observations (:func:`~fgraph.nodes.diagonal_normal.DiagonalNormal`) is computed in
moment form (Rasmussen and Williams, Algorithm 2.1) and carries ``log N(ỹ | m, K + V)``, so the posterior at
the inputs and the log marginal likelihood come out of belief propagation.
"""
from __future__ import annotations

import numpy as np

from fgraph.errors import ModelError
from fgraph.families import Distribution
from fgraph.families.gaussian_process import kernel_cholesky, solve_triangular
from fgraph.families.kernels import Kernel, check_inputs
from fgraph.families.mvnormal import LOG_2PI
from fgraph.model import random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy

__all__ = ["GaussianProcess", "GaussianProcessNode"]


class GaussianProcessNode(FactorNode):
    interfaces = ("out", "mean")
    event_ndims = {"out": 1, "mean": 1}

    def __init__(self, name, batch_shape=(), power=1.0, kernel=None, points=None, jitter="auto", **attributes):
        if not isinstance(kernel, Kernel):
            raise ModelError(f"node {name!r}: kernel must be a kernel from fgraph.families.kernels "
                             f"(e.g. ExponentiatedQuadratic()), got {type(kernel).__name__}")
        points = check_inputs(points, f"the inputs of {name!r}", kernel.input_dimension)
        if jitter != "auto" and not (np.isscalar(jitter) and np.isfinite(jitter) and jitter >= 0):
            raise ModelError(f"node {name!r}: jitter must be 'auto' or a number ≥ 0, got {jitter!r}")
        super().__init__(name, batch_shape, power, kernel=kernel, points=points, jitter=jitter, **attributes)

    def kernel_matrix(self) -> np.ndarray:
        """``K = k(X, X)``, shape ``(N, N)``, computed once per node (the node's attributes are fixed)."""
        matrix = self.__dict__.get("_kernel_matrix")
        if matrix is None:
            matrix = self.__dict__["_kernel_matrix"] = self.kernel(self.points)
            matrix.flags.writeable = False
        return matrix

    @classmethod
    def out_event_shape(cls, parameters) -> tuple:
        mean = parameters["mean"]
        if np.ndim(mean) == 0:
            raise ValueError("the mean of a Gaussian process must be a vector of its N values "
                             "(GaussianProcess broadcasts a number)")
        return np.shape(mean)[-1:]


def GaussianProcess(name, inputs, kernel, mean=0.0, jitter="auto", observed=None, batch_shape=None):
    """The values ``name = f(X)`` of a function with a Gaussian-process prior, ``f ~ GP(m, k)``.

    ``inputs`` X of shape ``(N, d)`` (or ``(N,)`` for d = 1), ``kernel`` a kernel from
    :mod:`fgraph.families.kernels`, ``mean`` the prior mean at the inputs: a number or an array whose last
    axis has length N (batched: one process per batch element, e.g. one latent function per class).
    ``jitter``: ``"auto"`` (the smallest from a fixed ladder that lets the matrix be factored, reported as a
    :class:`~fgraph.errors.JitterWarning` when positive) or a number added to the diagonal.
    """
    points = check_inputs(inputs, f"the inputs of {name!r}", getattr(kernel, "input_dimension", None))
    mean_array = np.asarray(mean, dtype=float) if not hasattr(mean, "event_shape") else mean
    if not hasattr(mean_array, "event_shape"):
        if mean_array.ndim == 0:
            mean_array = np.full(points.shape[0], float(mean_array))
        elif mean_array.shape[-1] != points.shape[0]:
            raise ModelError(f"variable {name!r}: the mean has {mean_array.shape[-1]} values for "
                             f"{points.shape[0]} inputs")
    return random_variable(GaussianProcessNode, name, {"mean": mean_array}, observed, batch_shape,
                           kernel=kernel, points=points, jitter=jitter)


@average_energy(GaussianProcessNode)
def _gaussian_process_energy(q_out: Distribution, q_mean: Distribution, node):
    """``½ (N log 2π + log|K| + tr(K⁻¹ (Σ_out + Σ_mean)) + (μ_out − μ_mean)ᵀ K⁻¹ (μ_out − μ_mean))``.

    Through ``K = L Lᵀ``: ``tr(K⁻¹ Σ) = ‖L⁻¹ C‖²`` for ``Σ = C Cᵀ`` is not needed; ``tr(K⁻¹ Σ)`` is the sum of
    the diagonal of ``L⁻ᵀ L⁻¹ Σ``, from one solve with ``Σ`` as right-hand side.
    """
    factor, _ = kernel_cholesky(node.kernel_matrix(), f"the kernel matrix of {node.name!r}", node.jitter)
    size = factor.shape[0]
    difference = np.asarray(q_out.mean - q_mean.mean, dtype=float)
    cov = np.asarray(_covariance(q_out) + _covariance(q_mean), dtype=float)
    batch = np.broadcast_shapes(difference.shape[:-1], cov.shape[:-2])
    difference = np.broadcast_to(difference, batch + (size,))
    cov = np.broadcast_to(cov, batch + (size, size))
    log_det = 2.0 * np.sum(np.log(np.diagonal(factor)))
    energy = np.empty(batch)
    for index in np.ndindex(*batch):
        whitened = solve_triangular(factor, difference[index], lower=True)
        spread = solve_triangular(factor, cov[index], lower=True)
        spread = solve_triangular(factor, spread.T, lower=True)  # L⁻¹ Σ L⁻ᵀ (Σ symmetric)
        energy[index] = 0.5 * (size * LOG_2PI + log_det + np.trace(spread) + whitened @ whitened)
    return energy if batch else energy[()]


def _covariance(q: Distribution):
    """The covariance of a marginal, zero for a point mass (a clamped mean or observed values)."""
    if hasattr(q, "cov"):
        return q.cov
    return np.zeros(np.shape(q.mean)[-1:] * 2)
