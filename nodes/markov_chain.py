"""A whole discrete Markov chain in one node: f(z_1..z_T) = Cat(z_1 | π) Π_t Cat(z_t | A z_{t-1}).

A hidden Markov model unrolled into T ``Transition`` nodes costs T Python
nodes and 2T messages per sweep. This compound node holds the chain as one
factor over an interface ``out`` of batch shape ``(T,)`` (event ``(K,)``,
one-hot states): its message to each z_t is computed by one forward–backward
pass over the messages the rest of the graph sends to the z_t (emission
likelihoods, the switch messages of mixture nodes, ...). The chain couples
its batch elements (``couples_batch``): every element of the belief holds the
evidence of the whole model, and the engine reads it once.

``initial`` π (length K, or one per chain of a batch: ``batch[:-1] + (K,)``,
a stream's carried state) is a fixed attribute. ``transition`` A (K x K,
column-stochastic: ``A[i, j] = P(z_t = i | z_{t-1} = j)``, the convention of
:class:`~fgraph.nodes.transition.TransitionNode`) is either a fixed attribute too
(the node then has the one interface ``out``) or a variable (see below).
``causal``: the message to z_t is the forward message α_t alone, so the
marginals are the filtering ones p(z_t | data up to t) and the last step
holds the evidence.

Under ``algorithm="vmp"`` the chain stays one structured cluster: its
message is the same forward–backward pass over the incoming (variational)
messages, which is the structured mean-field update of a hidden Markov chain.

**A random transition matrix.** ``MarkovChain("z", π, A, T)`` with ``A`` a
variable (a ``MatrixDirichlet`` prior, column convention as above) learns the
matrix by structured VMP, q(z_1..z_T) q(A), the variational Bayesian HMM of
Beal (2003, ch. 3). The node then has three interfaces:

* ``out``, the states, as before;
* ``transition``, the matrix A: shared by every chain of a batch (batch
  ``()``) or one per chain (batch ``batch[:-1] + (1,)``: the time axis of
  the chain's batch is last, and numpy broadcasting aligns axes from the
  right, so B chains of batch ``(B, T)`` take A of batch ``(B, 1)``). Its
  messages have that batch, one per chain;
* ``pairs``, an auxiliary variable ``<name>_pairs`` that ``MarkovChain``
  creates (batch ``batch``, event ``(K, K)``): the two-slice marginals
  ``q(z_t = i, z_{t-1} = j)`` at every step but the first, which has no
  predecessor and pairs z_1 with itself (``diag q(z_1)``). Its factor is the
  deterministic ``pairs_t = z_t z_{t-1}ᵀ``. It is there to make ``(out,
  pairs)`` a cluster of two interfaces, whose joint marginal (the whole chain
  posterior q(z), held as a :class:`~fgraph.families.Contingency` of its
  two-slice marginals) the engine hands to the update of A and to the
  structured free-energy bookkeeping, as for the cluster ``(out, in)`` of a
  ``Transition`` node; the cluster ``(out,)`` alone has no joint marginal.

With Ã = exp E_q[log A] (columns summing to less than one), the updates are

* to ``out`` (and ``pairs``): the forward–backward pass with A replaced by
  Ã, with log-scales, so the chain's joint marginal is
  ``q(z) ∝ π(z_1) Π_t Ã[z_t, z_{t-1}] Π_t m_t(z_t)`` and the log-scale the
  log-normaliser of that product;
* to ``transition``: ``MatrixDirichlet(1 + Σ_t ξ_t)`` per chain, with
  ``ξ_t = E_q[z_t z_{t-1}ᵀ]`` the two-slice marginals (t ≥ 2, the expected
  transition counts); the plate reduction of A's variable adds the chains
  that share it, so q(A) = MatrixDirichlet(α₀ + Σ_chains Σ_t ξ_t), as from
  the ``Transition`` nodes of the unrolled chains.

The default schedule updates A first (from the chain posterior under the
current q(A)) and then the states, so that every sweep is the batch update
of the VB-HMM and its free energy is that of a q(z) computed under the q(A)
it reports. The average energy under q(z) q(A) is
``U = −E[z_1]ᵀ log π − Σ_t Σ_ij ξ_t[i, j] E[log A_ij]`` (per step; the
engine adds the change of its second term when q(A) moved after the
chain's last message, as for any structured node). A causal chain with a
random matrix, and a random matrix under sum-product (``algorithm="bp"``),
are errors: neither has a closed-form update here. A transition that is an
observed variable (``fg.Data``) is a known matrix read from the data, exact
under either algorithm.
"""
from __future__ import annotations

import numbers

import numpy as np

from fgraph.errors import ModelError
from fgraph.families import Contingency, Distribution
from fgraph.families.categorical import SIMPLEX_TOLERANCE
from fgraph.model import Model, Variable, random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy
from fgraph.support import COLUMN_STOCHASTIC, ONE_HOT
from fgraph.nodes.categorical import times_log
from fgraph.nodes.transition import check_transition_matrix

__all__ = ["MarkovChain", "MarkovChainNode"]


_CAUSAL_RANDOM = ("a causal chain (filtering, streaming) with a random transition matrix is not supported: "
                  "the matrix's variational update needs the smoothed two-slice marginals of the whole "
                  "sequence. Use causal=False (structured VMP over the sequence), or a fixed matrix")


class MarkovChainNode(FactorNode):
    """``out`` (batch ``(..., T)``, event ``(K,)``): the states of first-order Markov chains (time last).

    With a random transition matrix also ``pairs`` (batch ``(..., T)``, event ``(K, K)``: the two-slice
    states) and ``transition`` (event ``(K, K)``); see the module docstring.
    """

    interfaces = ("out", "pairs", "transition")
    event_ndims = {"out": 1, "pairs": 2, "transition": 2}
    support = {"out": ONE_HOT, "transition": COLUMN_STOCHASTIC}
    couples_batch = True

    @classmethod
    def interfaces_for(cls, connected: list) -> tuple:
        """``("out",)`` with a fixed transition (an attribute); all three with a transition variable."""
        return cls.interfaces if "transition" in connected or "pairs" in connected else ("out",)

    def __init__(self, name, batch_shape=(), power=1.0, interfaces=None, initial=None, transition=None, causal=False,
                 **attributes):
        if interfaces is None:  # made directly (the rule tables): a fixed transition unless none is given
            interfaces = ("out",) if transition is not None else type(self).interfaces
        random = "transition" in interfaces
        initial = np.asarray(initial, dtype=float)
        if len(batch_shape) < 1 or batch_shape[-1] < 1:
            raise ValueError(f"node {name!r}: a Markov chain needs a batch shape (..., T) with T >= 1, got {batch_shape}")
        if initial.ndim not in (1, len(batch_shape)) or (initial.ndim > 1 and initial.shape[:-1] != batch_shape[:-1]) \
                or not np.all(np.isfinite(initial)) or np.any(initial < 0) \
                or np.any(abs(initial.sum(axis=-1) - 1.0) > SIMPLEX_TOLERANCE):
            raise ValueError(f"node {name!r}: initial must be a probability vector (non-negative, summing to one), "
                             f"or one per chain")
        count = initial.shape[-1]
        if random:
            if transition is not None:
                raise ValueError(f"node {name!r}: the transition is either a fixed matrix or a variable, not both")
            if causal:
                raise ValueError(f"node {name!r}: {_CAUSAL_RANDOM}")
        else:
            transition = np.asarray(transition, dtype=float)
            if transition.shape != (count, count):
                raise ValueError(
                    f"node {name!r}: transition must be {count}x{count} to match initial, got {transition.shape}"
                )
            if not np.all(np.isfinite(transition)):
                raise ValueError(f"node {name!r}: transition contains NaN or infinite values")
            check_transition_matrix(transition, f"node {name!r}: transition")
        if power != 1.0:
            raise ValueError(f"node {name!r}: a Markov chain node cannot carry a power")
        super().__init__(name, batch_shape, power, interfaces, initial=initial, transition=transition,
                         causal=bool(causal), **attributes)

    def interface_batch_shape(self, interface: str) -> tuple:
        """``transition``: one message per chain, ``batch[:-1] + (1,)`` (the steps' counts summed; the engine's
        plate reduction sums the chains for a matrix they share); the others the node's batch."""
        return self.batch_shape[:-1] + (1,) if interface == "transition" else self.batch_shape

    @property
    def random_transition(self) -> bool:
        """Whether the transition matrix is a variable on the interface ``transition`` (else an attribute)."""
        return "transition" in self.interfaces

    def check_event_shapes(self, event_shapes: dict) -> None:
        count = self.initial.shape[-1]
        for interface in ("pairs", "transition"):
            if interface in event_shapes and tuple(event_shapes[interface]) != (count, count):
                raise ValueError(f"{interface} must have event shape ({count}, {count}) to match initial, "
                                 f"got {tuple(event_shapes[interface])}")

    def mean_field_clusters(self) -> list:
        """Under VMP the chain is one structured cluster (forward–backward over the incoming messages); a random
        transition matrix is a cluster of its own beside the chain's, q(z_1..z_T) q(A)."""
        if self.random_transition:
            return [("out", "pairs"), ("transition",)]
        return [("out",)]

    def carried_state(self, marginal: Distribution) -> dict:
        """The start of the chain's continuation: P(z_{T+1}) = A p_T from the last step's marginal p_T."""
        if self.random_transition:
            raise ModelError(f"node {self.name!r}: {_CAUSAL_RANDOM}")
        last = np.broadcast_to(marginal.mean, self.batch_shape + self.transition.shape[:1])[..., -1, :]
        return {"initial": last @ self.transition.T}


def MarkovChain(name, initial, transition, length: int, batch_shape=(), causal=False):
    """The states ``z_1..z_T`` (T = ``length``) of a Markov chain, as one variable of batch shape ``(T,)``.

    ``initial`` is P(z_1) (length K); ``transition[i, j] = P(z_t = i | z_{t-1} = j)``
    (columns sum to one). Index the variable's elements through the nodes
    that take it, e.g. ``Mixture("y", z, [...], observed=y)`` with inputs of
    batch shape ``(T,)``. ``batch_shape`` (e.g. ``(B,)``) makes B independent
    chains with the same parameters: the variable's batch is ``batch_shape + (T,)``; ``initial`` may give each
    its own start (``batch_shape + (K,)``). ``causal=True``: the marginals are the filtering ones.

    ``transition`` may also be a variable of event shape ``(K, K)``, e.g. ``MatrixDirichlet("A", alpha)``:
    the matrix is then learnt under ``algorithm="vmp"`` (``init={"A": ...}`` starts q(A), as for unrolled
    ``Transition`` nodes), shared by every chain of the batch (batch ``()``) or one per chain (batch
    ``batch_shape + (1,)``). This also creates the variable ``<name>_pairs``, the two-slice marginals of the
    chain (see the module docstring).
    """
    initial = np.asarray(initial, dtype=float)
    if initial.ndim < 1:
        raise ModelError(f"MarkovChain {name!r}: initial must be a vector of K probabilities, got shape {initial.shape}")
    if isinstance(length, bool) or not isinstance(length, numbers.Integral) or length < 1:
        raise ModelError(f"MarkovChain {name!r}: length must be a whole number >= 1 (time steps), got {length!r}")
    batch = tuple(batch_shape) + (int(length),)
    count = initial.shape[-1]
    if not isinstance(transition, Variable):
        return random_variable(
            MarkovChainNode, name, {}, None, batch_shape=batch, event_shape=(count,), initial=initial,
            transition=np.asarray(transition, dtype=float), causal=causal,
        )
    if transition.event_shape != (count, count):
        raise ModelError(f"MarkovChain {name!r}: the transition variable {transition.name!r} must have event shape "
                         f"({count}, {count}) to match initial, got {transition.event_shape}")
    if causal:
        raise ModelError(f"MarkovChain {name!r}: {_CAUSAL_RANDOM}")
    plate = transition.plate_shape
    if plate and (len(plate) > len(batch) or plate[-1] != 1 or not _broadcasts(plate[:-1], batch[:-1])):
        raise ModelError(
            f"MarkovChain {name!r}: the transition variable {transition.name!r} has batch shape {plate}; a matrix "
            f"shared by the chains has batch (), one per chain batch {batch[:-1] + (1,)} (the chains' batch "
            f"{batch[:-1]} and a unit axis for time, which is last)"
        )
    model = Model.current()
    pairs = model.add_variable(f"{name}_pairs", batch, (count, count))
    try:
        return random_variable(
            MarkovChainNode, name, {"pairs": pairs, "transition": transition}, None, batch_shape=batch,
            event_shape=(count,), initial=initial, causal=False,
        )
    except BaseException:
        model._discard(pairs, None)
        raise


def _broadcasts(shape: tuple, target: tuple) -> bool:
    """Whether ``shape`` broadcasts to ``target`` (numpy's rules, axes aligned from the right)."""
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


@average_energy(MarkovChainNode)
def _markov_chain_energy(q_out: Distribution, node):
    """``−E_q[log f]`` with independent ``q(z_t)`` (exact for an observed path): per time step, shape (T,)."""
    means = np.broadcast_to(q_out.mean, node.batch_shape + node.initial.shape[-1:])  # (..., T, K)
    with np.errstate(divide="ignore"):
        log_initial, log_transition = np.log(node.initial), np.log(node.transition)
    energy = np.zeros(node.batch_shape)
    energy[..., 0] = -np.sum(times_log(means[..., 0, :], log_initial), axis=-1)
    # E[z_t]ᵀ log A E[z_{t-1}], with 0 · log 0 = 0 for impossible transitions
    pairs = means[..., 1:, :, None] * means[..., :-1, None, :]
    energy[..., 1:] = -np.sum(times_log(pairs, log_transition), axis=(-2, -1))
    return energy


@average_energy(MarkovChainNode)
def _markov_chain_energy_structured(q_out_pairs: Contingency, q_transition: Distribution, node):
    """``−E_q[log f]`` under the chain's joint q(z) and q(A), per time step (shape ``batch = (..., T)``).

    ``q_out_pairs`` holds the two-slice marginals ξ_t (element 0: ``diag q(z_1)``), so
    ``U_1 = −q(z_1)ᵀ log π`` and ``U_t = −Σ_ij ξ_t[i, j] E[log A_ij]`` for t ≥ 2: the energy of the
    unrolled chain's ``Transition`` nodes under their joint marginals q(out, in).
    """
    count = node.initial.shape[-1]
    pairs = np.broadcast_to(q_out_pairs.probabilities, node.batch_shape + (count, count))
    with np.errstate(divide="ignore"):
        log_initial = np.log(node.initial)
    energy = np.empty(node.batch_shape)
    energy[..., 0] = -np.sum(times_log(pairs[..., 0, :, :].sum(axis=-1), log_initial), axis=-1)
    # E[log A] of batch () or one per chain (..., 1): the same for every step
    energy[..., 1:] = -np.sum(times_log(pairs[..., 1:, :, :], q_transition.mean_log), axis=(-2, -1))
    return energy
