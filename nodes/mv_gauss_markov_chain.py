"""A whole linear-Gaussian state-space chain in one node: x_1 ~ N(m₀, P₀), x_t = F x_{t−1} + B u_{t−1} + N(0, Q).

The multivariate counterpart of :mod:`fgraph.nodes.gauss_markov_chain`: the prior over
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

**A random transition (VMP).** ``MvGaussMarkovChain(name, transition=θ, noise=None, ...)`` with θ a variable
of event ``(d, d)`` whose marginal is a :class:`~fgraph.families.matrix_normal_gamma.MatrixNormalGamma` over
(F, λ) (typically the prior :func:`~fgraph.nodes.matrix_normal_gamma.MatrixNormalGamma`: rows f_i | λ_i ~ N(m_i, V/λ_i),
λ_i ~ Gamma) learns the dynamics: x_t = F x_{t−1} + c_t + N(0, Λ⁻¹), Λ = diag(λ), the process noise
Q = Λ⁻¹ coming from the same variable (so ``noise`` must be None). This is the variational Bayesian linear
dynamical system of Beal (2003, ch. 5): under ``algorithm="vmp"`` the structured mean field q(x_1..x_T) q(F, λ),
a :class:`VariationalMvGaussMarkovChainNode` with interfaces ``out`` (the states), ``pairs`` (an auxiliary
variable ``<name>_pairs`` of batch ``(..., T)`` and event ``(2d,)``: the two-slice marginals
q(x_{t−1}, x_t), ``[previous; current]``; element 1, which has no predecessor, pairs q(x_1) with an independent
copy of itself and is never read) and ``transition``. As for :mod:`fgraph.nodes.markov_chain`, ``(out, pairs)`` is a
structured cluster whose joint marginal (the chain posterior q(x), held as its two-slice marginals) the update
of (F, λ) and the node's average energy read, so the engine's structured free-energy bookkeeping applies:

* to ``out`` (and ``pairs``): with E[Λ] = diag(ℓ), E[ΛF] = diag(ℓ) M, E[FᵀΛF] = Mᵀ diag(ℓ) M + d V,
  E_q[log N(x_t | F x_{t−1} + c_t, Λ⁻¹)] = log N(x_t | M x_{t−1} + c_t, diag(ℓ)⁻¹) − ½ x_{t−1}ᵀ (d V) x_{t−1}
  + ½ Σ_i (E[log λ_i] − log ℓ_i): the fixed chain with F̄ = M, Q̄ = diag(1/ℓ), the extra precision
  E[FᵀΛF] − F̄ᵀE[Λ]F̄ = d V on x_1..x_{T−1} (folded into the incoming messages) and a constant; the log-scale is
  log Z' = log ∫ Π_t μ_t exp E_q[log f];
* to ``transition``: the matrix-normal–gamma message of a regression of x_t − c_t on x_{t−1} with the
  second moments of the chain posterior, natural parameters (−½ Σ_t E[x_{t−1}x_{t−1}ᵀ], Σ_t E[(x_t − c_t)
  x_{t−1}ᵀ], −½ Σ_t diag E[(x_t − c_t)(x_t − c_t)ᵀ], ½ (T − 1)) over t = 2..T, the form of
  :func:`fgraph.rules.linear_experts.parameters.plate_statistics` (there with a known input);
* the average energy of the joint (:func:`transition_energy`): the initial term plus, per step,
  (d/2) log 2π − ⟨η_t, E_q[T(F, λ)]⟩ with η_t the step's natural parameters above.

Chains of a batch share (F, λ) (batch ``()``: the messages add over the chains) or have their own (batch
``batch_shape + (1,)``). ``causal=True``, ``algorithm="bp"`` (no sum-product message to or through a random
transition is in a family here), streaming and models with copies are errors that say so.
"""
from __future__ import annotations

import numbers

import numpy as np

from fgraph.errors import ModelError
from fgraph.families import Distribution, MultivariateNormal
from fgraph.families.matrix_normal_gamma import MatrixNormalGamma as MatrixNormalGammaFamily
from fgraph.families.normal import LOG_2PI
from fgraph.model import Model, Variable, random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy

__all__ = ["MvGaussMarkovChain", "MvGaussMarkovChainNode", "VariationalMvGaussMarkovChainNode"]


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


class VariationalMvGaussMarkovChainNode(FactorNode):
    """``out`` (batch ``(..., T)``, event ``(d,)``): the states of x_t = F x_{t−1} + c_t + N(0, diag(λ)⁻¹) with a
    random (F, λ) on ``transition`` (event ``(d, d)``, batch ``transition_batch``: ``()`` shared by the chains or
    ``(..., 1)`` one per chain); ``pairs`` (batch ``(..., T)``, event ``(2d,)``): the two-slice marginals.

    Variational only: under ``algorithm="vmp"`` the clusters are ``(out, pairs)`` and ``(transition,)``, the
    structured mean field of the module docstring.
    """

    interfaces = ("out", "pairs", "transition")
    event_ndims = {"out": 1, "pairs": 1, "transition": 2}
    couples_batch = True

    def __init__(self, name, batch_shape=(), power=1.0, interfaces=None, initial_mean=None, initial_cov=None,
                 offset=None, transition_batch=(), **attributes):
        if len(batch_shape) < 1 or batch_shape[-1] < 2:
            raise ValueError(f"node {name!r}: a Gauss-Markov chain with a random transition needs a batch shape "
                             f"(..., T) with T >= 2 (one transition to learn it from), got {batch_shape}")
        chains = tuple(batch_shape[:-1])
        d = np.shape(initial_mean)[-1] if np.ndim(initial_mean) >= 1 else 0
        initial_mean = _finite_matrix(initial_mean, "initial_mean", name, ((d,), chains + (d,)))
        if d < 1:
            raise ValueError(f"node {name!r}: initial_mean must be a vector (d,) with d >= 1")
        initial_cov = _finite_matrix(initial_cov, "initial_cov", name, ((d, d), chains + (d, d)))
        _check_covariance(initial_cov, "initial_cov", name, definite=True)
        if offset is not None:
            offset = _finite_matrix(offset, "offset", name, (tuple(batch_shape) + (d,),))
        transition_batch = tuple(transition_batch)
        if transition_batch not in ((), chains + (1,)):
            raise ValueError(f"node {name!r}: the transition must have batch () (shared by the chains) or "
                             f"{chains + (1,)} (one per chain), got {transition_batch}")
        if power != 1.0:
            raise ValueError(f"node {name!r}: a Gauss-Markov chain node cannot carry a power")
        super().__init__(name, batch_shape, power, interfaces, initial_mean=initial_mean, initial_cov=initial_cov,
                         offset=offset, transition_batch=transition_batch, **attributes)

    @property
    def state_dim(self) -> int:
        return self.initial_mean.shape[-1]

    def interface_batch_shape(self, interface: str) -> tuple:
        """The states and the pairs have the node's batch, the transition its variable's."""
        return self.transition_batch if interface == "transition" else self.batch_shape

    def check_event_shapes(self, event_shapes: dict) -> None:
        d = self.state_dim
        for interface, shape in (("transition", (d, d)), ("pairs", (2 * d,))):
            if interface in event_shapes and tuple(event_shapes[interface]) != shape:
                raise ValueError(f"{interface} must have event shape {shape} to match initial_mean, got "
                                 f"{tuple(event_shapes[interface])}")

    def mean_field_clusters(self) -> list:
        """Structured mean field: q(x_1..x_T) (one cluster with its two-slice marginals) and q(F, λ)."""
        return [("out", "pairs"), ("transition",)]

    def carried_state(self, marginal: Distribution) -> dict:
        raise ModelError(f"node {self.name!r}: a Gauss-Markov chain with a random transition cannot carry its state "
                         "into the next chunk (the prediction would need q(F, λ)); stream a chain with a fixed "
                         "transition and noise")


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

    ``transition`` may also be a variable of event ``(d, d)`` with a matrix-normal–gamma marginal over (F, λ),
    e.g. ``MatrixNormalGamma("theta", M0, V0, a0, b0)``, shared by the chains (batch ``()``) or one per chain
    (batch ``batch_shape + (1,)``): the process noise is then diag(λ)⁻¹ from that variable (``noise=None``) and
    the chain is learnt under ``algorithm="vmp"`` (:class:`VariationalMvGaussMarkovChainNode`, module
    docstring), with ``init={"theta": ...}`` for the first q(F, λ). The chain then also makes the variable
    ``<name>_pairs``.
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
    if isinstance(transition, Variable):
        return _random_transition_chain(name, transition, noise, initial_mean, initial_cov, batch, offset, causal)
    if noise is None:
        raise ModelError(f"MvGaussMarkovChain {name!r}: noise (the process-noise covariance Q) is needed with a "
                         "fixed transition matrix; only a random transition (a MatrixNormalGamma variable) brings "
                         "its own noise")
    return random_variable(
        MvGaussMarkovChainNode, name, {}, None, batch_shape=batch, event_shape=(d,),
        transition=transition, noise=noise, initial_mean=initial_mean, initial_cov=initial_cov, offset=offset,
        causal=causal,
    )


def _random_transition_chain(name, transition: Variable, noise, initial_mean, initial_cov, batch: tuple, offset,
                             causal):
    """The chain with a random (F, λ) (:class:`VariationalMvGaussMarkovChainNode`) and its ``<name>_pairs``."""
    d = initial_mean.shape[-1]
    chains = batch[:-1]
    where = f"MvGaussMarkovChain {name!r}"
    if noise is not None:
        raise ModelError(f"{where}: with a random transition {transition.name!r} the process noise is diag(λ)⁻¹ "
                         "from the same MatrixNormalGamma variable over (F, λ); pass noise=None")
    if causal:
        raise ModelError(f"{where}: causal=True needs a fixed transition (filtering with a random transition is "
                         "not a forward pass: its update needs the smoothed pairs of the whole sequence); learn "
                         "the transition with causal=False and algorithm='vmp'")
    if batch[-1] < 2:
        raise ModelError(f"{where}: a random transition needs length >= 2 (one transition to learn it from)")
    if transition.event_shape != (d, d):
        raise ModelError(f"{where}: the transition variable {transition.name!r} must have event shape ({d}, {d}) "
                         f"(F maps x_(t-1) to x_t), got {transition.event_shape}")
    plate = tuple(transition.plate_shape)
    if plate not in ((), chains + (1,)):
        raise ModelError(f"{where}: the transition variable {transition.name!r} has batch shape {plate}; (F, λ) "
                         f"shared by the chains has batch (), one per chain batch {chains + (1,)} (the chains' "
                         f"batch {chains} and a unit axis for time, which is last)")
    model = Model.current()
    if model.copy_shape:
        raise ModelError(f"{where}: a random transition is not available in a model with copies; build one model "
                         "per copy")
    pairs = model.add_variable(f"{name}_pairs", batch, (2 * d,))
    try:
        return random_variable(
            VariationalMvGaussMarkovChainNode, name, {"pairs": pairs, "transition": transition}, None,
            batch_shape=batch, event_shape=(d,), initial_mean=initial_mean, initial_cov=initial_cov, offset=offset,
            transition_batch=plate,
        )
    except BaseException:
        model._discard(pairs, None)
        raise


def _initial_energy(mean, second, node):
    """``−E_q[log N(x_1 | m₀, P₀)]`` per chain from E[x_1] (..., d) and E[x_1 x_1ᵀ] (..., d, d)."""
    d = node.state_dim
    m0, P0 = node.initial_mean, node.initial_cov  # (d,), (d, d) or one per chain
    centred = (second - mean[..., :, None] * m0[..., None, :] - m0[..., :, None] * mean[..., None, :]
               + m0[..., :, None] * m0[..., None, :])
    return 0.5 * (d * LOG_2PI + np.linalg.slogdet(P0)[1] + np.einsum("...ij,...ji->...", np.linalg.inv(P0), centred))


@average_energy(MvGaussMarkovChainNode)
def _mv_gauss_markov_energy(q_out: Distribution, node):
    """``−E_q[log f]`` under independent ``q(x_t)`` (exact for an observed path), per time step.

    Step t ≥ 2: ½ (d log 2π + log|Q| + tr Q⁻¹ E[(x_t − F x_{t−1} − c_t)(…)ᵀ]) with
    E[x_t x_{t−1}ᵀ] = E[x_t] E[x_{t−1}]ᵀ under the independence. Needs a positive definite Q.
    """
    d = node.state_dim
    mean = np.broadcast_to(q_out.mean, node.batch_shape + (d,))
    second = np.broadcast_to(q_out.second_moment, node.batch_shape + (d, d))
    energy = np.empty(node.batch_shape)
    outer = lambda a, b: a[..., :, None] * b[..., None, :]  # noqa: E731
    energy[..., 0] = _initial_energy(mean[..., 0, :], second[..., 0, :, :], node)
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


# ---- a random transition (VariationalMvGaussMarkovChainNode, algorithm="vmp") ----


def pair_statistics(q_out_pairs: MultivariateNormal, node) -> tuple:
    """The second moments of every transition t = 2..T from the two-slice marginals ``q_out_pairs`` (batch
    ``(..., T)``, event ``(2d,)``, element t = q(x_{t−1}, x_t), element 1 unused):

    ``(E[x_{t−1} x_{t−1}ᵀ] (..., T − 1, d, d), E[(x_t − c_t) x_{t−1}ᵀ] (..., T − 1, d, d),
    diag E[(x_t − c_t)(x_t − c_t)ᵀ] (..., T − 1, d))``, c_t the offset (0 without a control input).
    """
    d, batch = node.state_dim, node.batch_shape
    mean = np.broadcast_to(q_out_pairs.mean, batch + (2 * d,))[..., 1:, :]
    second = np.broadcast_to(q_out_pairs.second_moment, batch + (2 * d, 2 * d))[..., 1:, :, :]
    previous, cross = second[..., :d, :d], second[..., d:, :d]
    current = np.diagonal(second[..., d:, d:], axis1=-2, axis2=-1)
    if node.offset is not None:
        c, before, after = node.offset[..., 1:, :], mean[..., :d], mean[..., d:]
        cross = cross - c[..., :, None] * before[..., None, :]
        current = current - 2.0 * c * after + c * c
    return previous, cross, current


def transition_natural_parameters(previous, cross, current, count) -> tuple:
    """The matrix-normal–gamma natural parameters of the regression of x_t − c_t on x_{t−1}, from sums (or single
    steps) of :func:`pair_statistics` over ``count`` transitions: ``(−½ Σ E[x_{t−1}x_{t−1}ᵀ],
    Σ E[(x_t − c_t) x_{t−1}ᵀ], −½ Σ diag E[(x_t − c_t)(…)ᵀ], ½ count)``, the form of
    :func:`fgraph.rules.linear_experts.parameters.plate_statistics` with the input's second moments in place of
    known outer products. With the coefficient ``(d/2)(d − count) log 2π`` the function
    exp(κ) h(F, λ) exp(⟨η, T(F, λ)⟩) is exp E_q(x)[Σ_t log N(x_t | F x_{t−1} + c_t, diag(λ)⁻¹)]."""
    count = np.asarray(count, dtype=float)
    return (-0.5 * previous, cross, -0.5 * current,
            np.broadcast_to(0.5 * count[..., None], np.shape(current)))


def transition_energy(q_out_pairs: MultivariateNormal, q_transition: Distribution, node):
    """``−E_q[log N(x_t | F x_{t−1} + c_t, diag(λ)⁻¹)]`` for t = 2..T (shape ``(..., T − 1)``) under the chain's
    two-slice marginals and q(F, λ): (d/2) log 2π − ⟨η_t, E_q[T(F, λ)]⟩, η_t the step's natural parameters
    (:func:`transition_natural_parameters`) and E_q[T] = (E[Σ_i λ_i f_i f_iᵀ], E[λ_i f_i], E[λ_i], E[log λ_i])."""
    previous, cross, current = pair_statistics(q_out_pairs, node)
    eta = transition_natural_parameters(previous, cross, current, np.ones(np.shape(current)[:-1]))
    statistics = q_transition.expected_statistics()  # batch () or one per chain (..., 1): broadcast over steps
    return 0.5 * node.state_dim * LOG_2PI - MatrixNormalGammaFamily.inner(eta, statistics)


@average_energy(VariationalMvGaussMarkovChainNode)
def _variational_mv_gauss_markov_energy(q_out_pairs: MultivariateNormal, q_transition: Distribution, node):
    """``−E_q[log f]`` under the chain's joint q(x) (its two-slice marginals) and q(F, λ), per time step:
    U_1 = −E[log N(x_1 | m₀, P₀)] and U_t from :func:`transition_energy` (the energy of the cluster
    ``(out, pairs)`` the engine's structured free-energy bookkeeping reads)."""
    d, batch = node.state_dim, node.batch_shape
    first = np.broadcast_to(q_out_pairs.mean, batch + (2 * d,))[..., 0, :d]
    second = np.broadcast_to(q_out_pairs.second_moment, batch + (2 * d, 2 * d))[..., 0, :d, :d]
    energy = np.empty(batch)
    energy[..., 0] = _initial_energy(first, second, node)
    energy[..., 1:] = transition_energy(q_out_pairs, q_transition, node)
    return energy
