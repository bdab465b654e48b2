"""A whole linear-Gaussian state-space chain in one node: x_1 ~ N(m₀, P₀), x_t = F x_{t−1} + B u_{t−1} + N(0, Q).

The multivariate counterpart of :mod:`nodes.gauss_markov_chain`: the prior over
the d-dimensional states x_1..x_T held as one factor over an interface ``out``
of batch shape ``(..., T)`` and event shape ``(d,)``. Its message to each x_t
is computed from the messages the rest of the graph sends to the x_t (an
observation through ``MvLinear`` or ``MvNormal``, which may be a rank-deficient
``GaussianLikelihood`` when only part of the state is observed) by a forward
and a backward associative scan, with log-scales, so the evidence is exact on a
tree. The chain couples its batch elements (``couples_batch``).

Attributes (fixed numbers; the shapes are checked when the node is built):

* ``transition`` F: (d, d), or one per step (T − 1, d, d), F_t mapping x_t to x_{t+1};
* ``noise`` Q: the process-noise covariance, (d, d) or (T − 1, d, d), symmetric
  positive semi-definite (a singular Q, e.g. a position integrating a velocity, is fine);
* ``initial_mean`` m₀ (d,) and ``initial_cov`` P₀ (d, d), positive definite; or one per chain,
  ``batch[:-1] + (d,)`` and ``batch[:-1] + (d, d)`` (a stream's filter state, :mod:`fgraph.models.streaming`);
* ``offset``: None or the per-step input c_t = B u_{t−1} of shape ``batch + (T, d)``
  (c_1 unused), built by :func:`MvGaussMarkovChain` from a control matrix and inputs;
* ``causal``: False (the default) sends α_t β_t, whose belief is the smoothing marginal
  p(x_t | everything); True sends α_t alone, the prediction from the messages before t, whose belief is
  the filtering marginal p(x_t | μ_1..μ_t) and whose last step holds the evidence of the whole sequence.
"""
from __future__ import annotations

import numbers

import numpy as np

from fgraph.errors import ModelError
from fgraph.families import Distribution
from fgraph.families.normal import LOG_2PI
from fgraph.model import random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy

__all__ = ["MvGaussMarkovChain", "MvGaussMarkovChainNode"]


def _finite_matrix(value, name: str, node: str, shapes: tuple) -> np.ndarray:
    matrix = np.asarray(value, dtype=float)
    if matrix.shape not in shapes:
        raise ValueError(f"node {node!r}: {name} must have shape {' or '.join(map(str, shapes))}, got {matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        raise ValueError(f"node {node!r}: {name} contains NaN or infinite values")
    return matrix


def _check_covariance(matrix: np.ndarray, name: str, node: str, definite: bool) -> None:
    """Symmetric, and positive definite (``definite``) or semi-definite, for every matrix of a stack."""
    if not np.allclose(matrix, np.swapaxes(matrix, -1, -2), rtol=1e-10, atol=1e-12):
        raise ValueError(f"node {node!r}: {name} must be symmetric")
    eigenvalues = np.linalg.eigvalsh(matrix)
    smallest, largest = eigenvalues.min(axis=-1), np.abs(eigenvalues).max(axis=-1)
    floor = 0.0 if definite else -1e-12 * np.maximum(largest, 1.0)
    if np.any(smallest <= floor if definite else smallest < floor):
        kind = "positive definite" if definite else "positive semi-definite"
        raise ValueError(f"node {node!r}: {name} must be {kind} (smallest eigenvalue {float(np.min(smallest)):.3g})")


class MvGaussMarkovChainNode(FactorNode):
    """``out`` (batch ``(..., T)``, event ``(d,)``): the states of linear-Gaussian chains (time on the last batch axis)."""

    interfaces = ("out",)
    event_ndims = {"out": 1}
    couples_batch = True

    def __init__(self, name, batch_shape=(), power=1.0, transition=None, noise=None, initial_mean=None,
                 initial_cov=None, offset=None, causal=False, **attributes):
        if len(batch_shape) < 1 or batch_shape[-1] < 1:
            raise ValueError(f"node {name!r}: a Gauss-Markov chain needs a batch shape (..., T) with T >= 1, "
                             f"got {batch_shape}")
        steps, chains = batch_shape[-1], tuple(batch_shape[:-1])
        d = np.shape(initial_mean)[-1] if np.ndim(initial_mean) >= 1 else 0
        initial_mean = _finite_matrix(initial_mean, "initial_mean", name, ((d,), chains + (d,)))
        if d < 1:
            raise ValueError(f"node {name!r}: initial_mean must be a vector (d,) with d >= 1")
        per_step = ((d, d), (steps - 1, d, d))
        transition = _finite_matrix(transition, "transition", name, per_step)
        noise = _finite_matrix(noise, "noise", name, per_step)
        initial_cov = _finite_matrix(initial_cov, "initial_cov", name, ((d, d), chains + (d, d)))
        _check_covariance(noise, "noise", name, definite=False)
        _check_covariance(initial_cov, "initial_cov", name, definite=True)
        if offset is not None:
            offset = _finite_matrix(offset, "offset", name, (tuple(batch_shape) + (d,),))
        if power != 1.0:
            raise ValueError(f"node {name!r}: a Gauss-Markov chain node cannot carry a power")
        super().__init__(name, batch_shape, power, transition=transition, noise=noise, initial_mean=initial_mean,
                         initial_cov=initial_cov, offset=offset, causal=bool(causal), **attributes)

    @property
    def state_dim(self) -> int:
        return self.initial_mean.shape[-1]

    def mean_field_clusters(self) -> list:
        """Under VMP the chain is one structured cluster (the same forward–backward scans)."""
        return [("out",)]

    def carried_state(self, marginal: Distribution) -> dict:
        """The start of the chain's continuation from its marginal (batch ``(..., T)``, event ``(d,)``): the
        prediction N(F m + 0, F P Fᵀ + Q) from the last step's N(m, P), as ``initial_mean``/``initial_cov``.

        Needs constant dynamics and no control input (the step across a chunk boundary has neither).
        """
        if self.transition.ndim != 2 or self.noise.ndim != 2 or self.offset is not None:
            raise ValueError(f"node {self.name!r}: carrying the state into another chunk needs a constant transition "
                             f"and noise and no control input (the step between chunks has neither)")
        d = self.state_dim
        mean = np.broadcast_to(marginal.mean, self.batch_shape + (d,))[..., -1, :]
        cov = np.broadcast_to(marginal.cov, self.batch_shape + (d, d))[..., -1, :, :]
        F = self.transition
        return {"initial_mean": mean @ F.T, "initial_cov": F @ cov @ F.T + self.noise}


def MvGaussMarkovChain(name, transition, noise, initial_mean, initial_cov, length: int, batch_shape=(),
                       control_matrix=None, control=None, causal=False):
    """The d-dimensional states ``x_1..x_T`` (T = ``length``) of ``x_1 ~ N(m₀, P₀)``,
    ``x_t = F x_{t−1} + B u_{t−1} + N(0, Q)``.

    One variable of batch shape ``batch_shape + (T,)`` and event shape ``(d,)``; connect it to per-step
    factors with plated nodes, e.g. ``MvLinear("y", x, C, R, observed=y)`` for y of shape (T, m).
    ``transition`` F and ``noise`` Q are (d, d) or one per step (T − 1, d, d). ``control_matrix`` B (d, k)
    and ``control`` u (``batch_shape`` + (T − 1, k), u_t acting between steps t and t + 1) are optional
    and go together. ``batch_shape`` (e.g. ``(B,)``) makes independent chains with the same dynamics;
    ``initial_mean``/``initial_cov`` may give each its own, ``batch_shape + (d,)`` / ``+ (d, d)``.
    ``causal=True``: the states' marginals are the filtering ones, p(x_t | data up to t) (module docstring).
    """
    if isinstance(length, bool) or not isinstance(length, numbers.Integral) or length < 1:
        raise ModelError(f"MvGaussMarkovChain {name!r}: length must be a whole number >= 1 (time steps), "
                         f"got {length!r}")
    initial_mean = np.asarray(initial_mean, dtype=float)
    if initial_mean.ndim < 1 or initial_mean.shape[-1] < 1:
        raise ModelError(f"MvGaussMarkovChain {name!r}: initial_mean must be a vector (d,) or one per chain "
                         f"(..., d), got shape {initial_mean.shape}")
    d = initial_mean.shape[-1]
    batch = tuple(batch_shape) + (int(length),)
    offset = None
    if (control_matrix is None) != (control is None):
        raise ModelError(f"MvGaussMarkovChain {name!r}: control_matrix and control go together (B and u of "
                         f"x_t = F x_(t-1) + B u_(t-1) + noise); give both or neither")
    if control is not None:
        B = np.asarray(control_matrix, dtype=float)
        u = np.asarray(control, dtype=float)
        if B.ndim != 2 or B.shape[0] != d:
            raise ModelError(f"MvGaussMarkovChain {name!r}: control_matrix must be (d, k) = ({d}, k), got shape "
                             f"{B.shape}")
        if u.shape != tuple(batch_shape) + (int(length) - 1, B.shape[1]):
            raise ModelError(f"MvGaussMarkovChain {name!r}: control must have shape batch + (T - 1, k) = "
                             f"{tuple(batch_shape) + (int(length) - 1, B.shape[1])}, got {u.shape}")
        offset = np.zeros(batch + (d,))
        offset[..., 1:, :] = u @ B.T
    return random_variable(
        MvGaussMarkovChainNode, name, {}, None, batch_shape=batch, event_shape=(d,),
        transition=transition, noise=noise, initial_mean=initial_mean, initial_cov=initial_cov, offset=offset,
        causal=causal,
    )


@average_energy(MvGaussMarkovChainNode)
def _mv_gauss_markov_energy(q_out: Distribution, node):
    """``−E_q[log f]`` under independent ``q(x_t)`` (exact for an observed path), per time step.

    Step t ≥ 2: ½ (d log 2π + log|Q| + tr Q⁻¹ E[(x_t − F x_{t−1} − c_t)(…)ᵀ]) with
    E[x_t x_{t−1}ᵀ] = E[x_t] E[x_{t−1}]ᵀ under the independence. Needs a positive definite Q.
    """
    d = node.state_dim
    mean = np.broadcast_to(q_out.mean, node.batch_shape + (d,))
    second = np.broadcast_to(q_out.second_moment, node.batch_shape + (d, d))
    m0, P0 = node.initial_mean, node.initial_cov  # (d,), (d, d) or one per chain
    energy = np.empty(node.batch_shape)
    outer = lambda a, b: a[..., :, None] * b[..., None, :]  # noqa: E731
    centred = second[..., 0, :, :] - outer(mean[..., 0, :], m0) - outer(m0, mean[..., 0, :]) + outer(m0, m0)
    energy[..., 0] = 0.5 * (d * LOG_2PI + np.linalg.slogdet(P0)[1]
                            + np.einsum("...ij,...ji->...", np.linalg.inv(P0), centred))
    if node.batch_shape[-1] > 1:
        F, Q = node.transition, node.noise  # (d, d) or (T − 1, d, d)
        Q_inv = np.linalg.inv(Q)
        _, log_det_Q = np.linalg.slogdet(Q)
        offset = np.zeros(node.batch_shape[-1:] + (d,)) if node.offset is None else node.offset
        c = offset[..., 1:, :]
        previous, current = mean[..., :-1, :], mean[..., 1:, :]
        predicted = np.einsum("...ij,...tj->...ti", F, previous) if F.ndim == 2 else np.einsum(
            "tij,...tj->...ti", F, previous)
        # E[(x_t − F x_{t−1} − c)(…)ᵀ] = E[x_t x_tᵀ] − E[x_t] a_tᵀ − a_t E[x_t]ᵀ + F E[x_{t−1} x_{t−1}ᵀ] Fᵀ
        #   + c (F E[x_{t−1}])ᵀ + F E[x_{t−1}] cᵀ + c cᵀ,  a_t = F E[x_{t−1}] + c
        shift = predicted + c
        propagated = (np.einsum("ij,...tjk,lk->...til", F, second[..., :-1, :, :], F) if F.ndim == 2
                      else np.einsum("tij,...tjk,tlk->...til", F, second[..., :-1, :, :], F))
        residual = (second[..., 1:, :, :] - outer(current, shift) - outer(shift, current) + propagated
                    + outer(c, predicted) + outer(predicted, c) + outer(c, c))
        trace = (np.einsum("ij,...tji->...t", Q_inv, residual) if Q.ndim == 2
                 else np.einsum("tij,...tji->...t", Q_inv, residual))
        energy[..., 1:] = 0.5 * (d * LOG_2PI + log_det_Q + trace)
    return energy
