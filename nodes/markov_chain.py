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
a stream's carried state) and ``transition`` A (K x K, column-stochastic:
``A[i, j] = P(z_t = i | z_{t-1} = j)``, the convention of
:class:`~nodes.transition.TransitionNode`) are fixed attributes. ``causal``:
the message to z_t is the forward message α_t alone, so the marginals are the
filtering ones p(z_t | data up to t) and the last step holds the evidence.

Under ``algorithm="vmp"`` the chain stays one structured cluster: its
message is the same forward–backward pass over the incoming (variational)
messages, which is the structured mean-field update of a hidden Markov chain.
"""
from __future__ import annotations

import numbers

import numpy as np

from fgraph.errors import ModelError
from fgraph.families import Distribution
from fgraph.families.categorical import SIMPLEX_TOLERANCE
from fgraph.model import random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy
from fgraph.support import ONE_HOT
from nodes.categorical import times_log
from nodes.transition import check_transition_matrix

__all__ = ["MarkovChain", "MarkovChainNode"]


class MarkovChainNode(FactorNode):
    """``out`` (batch ``(..., T)``, event ``(K,)``): the states of first-order Markov chains (time last)."""

    interfaces = ("out",)
    event_ndims = {"out": 1}
    support = {"out": ONE_HOT}
    couples_batch = True

    def __init__(self, name, batch_shape=(), power=1.0, initial=None, transition=None, causal=False, **attributes):
        initial = np.asarray(initial, dtype=float)
        transition = np.asarray(transition, dtype=float)
        if len(batch_shape) < 1 or batch_shape[-1] < 1:
            raise ValueError(f"node {name!r}: a Markov chain needs a batch shape (..., T) with T >= 1, got {batch_shape}")
        if initial.ndim not in (1, len(batch_shape)) or (initial.ndim > 1 and initial.shape[:-1] != batch_shape[:-1]) \
                or not np.all(np.isfinite(initial)) or np.any(initial < 0) \
                or np.any(abs(initial.sum(axis=-1) - 1.0) > SIMPLEX_TOLERANCE):
            raise ValueError(f"node {name!r}: initial must be a probability vector (non-negative, summing to one), "
                             f"or one per chain")
        count = initial.shape[-1]
        if transition.shape != (count, count):
            raise ValueError(
                f"node {name!r}: transition must be {count}x{count} to match initial, got {transition.shape}"
            )
        if not np.all(np.isfinite(transition)):
            raise ValueError(f"node {name!r}: transition contains NaN or infinite values")
        check_transition_matrix(transition, f"node {name!r}: transition")
        if power != 1.0:
            raise ValueError(f"node {name!r}: a Markov chain node cannot carry a power")
        super().__init__(name, batch_shape, power, initial=initial, transition=transition, causal=bool(causal),
                         **attributes)

    def mean_field_clusters(self) -> list:
        """Under VMP the chain is one structured cluster (forward–backward over the incoming messages)."""
        return [("out",)]

    def carried_state(self, marginal: Distribution) -> dict:
        """The start of the chain's continuation: P(z_{T+1}) = A p_T from the last step's marginal p_T."""
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
    """
    initial = np.asarray(initial, dtype=float)
    if initial.ndim < 1:
        raise ModelError(f"MarkovChain {name!r}: initial must be a vector of K probabilities, got shape {initial.shape}")
    if isinstance(length, bool) or not isinstance(length, numbers.Integral) or length < 1:
        raise ModelError(f"MarkovChain {name!r}: length must be a whole number >= 1 (time steps), got {length!r}")
    return random_variable(
        MarkovChainNode, name, {}, None, batch_shape=tuple(batch_shape) + (int(length),),
        event_shape=(initial.shape[-1],), initial=initial, transition=np.asarray(transition, dtype=float),
        causal=causal,
    )


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
