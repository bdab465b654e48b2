"""A whole scalar Gauss–Markov chain in one node: x_1 ~ N(m₀, v₀), x_t ~ N(a x_{t−1}, q).

The linear-Gaussian state-space (first-order auto-regressive) prior over
x_1..x_T, held as one factor over an interface ``out`` of batch shape
``(T,)``. Its message to each x_t is computed by one forward (Kalman) and one
backward pass over the messages the rest of the graph sends to the x_t
(observations through Normal nodes, the input messages of mixture nodes,
...), with log-scales, so the evidence is exact on a tree. The chain couples
its batch elements (``couples_batch``), like :mod:`nodes.markov_chain`.

Attributes (fixed numbers): ``gain`` a (non-zero), ``var`` q > 0 (process
noise variance), ``initial_mean`` m₀ and ``initial_var`` v₀ > 0 (numbers, or
one per chain of a batch, shape ``batch[:-1]``: a stream's carried state),
``causal`` (False: smoothing marginals; True: the message to x_t is the
prediction from the steps before t alone, so the marginals are the filtering
ones and the last step holds the sequence's evidence).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from fgraph.errors import ModelError
from fgraph.families import Distribution
from fgraph.families.normal import LOG_2PI
from fgraph.model import random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy

__all__ = ["GaussMarkovChain", "GaussMarkovChainNode"]


class GaussMarkovChainNode(FactorNode):
    """``out`` (batch ``(..., T)``, scalar): the states of linear-Gaussian chains (time last)."""

    interfaces = ("out",)
    event_ndims = {"out": 0}
    couples_batch = True

    def __init__(self, name, batch_shape=(), power=1.0, gain=None, var=None, initial_mean=0.0, initial_var=None,
                 causal=False, **attributes):
        if len(batch_shape) < 1 or batch_shape[-1] < 1:
            raise ValueError(
                f"node {name!r}: a Gauss-Markov chain needs a batch shape (..., T) with T >= 1, got {batch_shape}")
        numbers = {"gain": gain, "var": var, "initial_mean": initial_mean, "initial_var": initial_var}
        for key, value in numbers.items():
            per_chain = key.startswith("initial") and np.shape(value) == tuple(batch_shape[:-1])
            if value is None or (np.ndim(value) != 0 and not per_chain) or not np.all(np.isfinite(value)):
                raise ValueError(f"node {name!r}: {key} must be a finite number"
                                 f"{' (or one per chain)' if key.startswith('initial') else ''}, got {value!r}")
        if float(gain) == 0.0:
            raise ValueError(f"node {name!r}: a zero gain makes the states independent; use a plated Normal instead")
        for key in ("var", "initial_var"):
            if np.any(np.asarray(numbers[key], dtype=float) <= 0.0):
                raise ValueError(f"node {name!r}: {key} must be strictly positive, got {numbers[key]!r}")
        if power != 1.0:
            raise ValueError(f"node {name!r}: a Gauss-Markov chain node cannot carry a power")
        start = {key: float(value) if np.ndim(value) == 0 else np.asarray(value, dtype=float)
                 for key, value in (("initial_mean", initial_mean), ("initial_var", initial_var))}
        super().__init__(name, batch_shape, power, gain=float(gain), var=float(var), causal=bool(causal), **start,
                         **attributes)

    def mean_field_clusters(self) -> list:
        """Under VMP the chain is one structured cluster (the same forward–backward passes)."""
        return [("out",)]

    def carried_state(self, marginal: Distribution) -> dict:
        """The start of the chain's continuation: the prediction N(a m, a² v + q) from the last step's N(m, v)."""
        mean = np.broadcast_to(marginal.mean, self.batch_shape)[..., -1]
        var = np.broadcast_to(marginal.var, self.batch_shape)[..., -1]
        return {"initial_mean": self.gain * mean, "initial_var": self.gain**2 * var + self.var}


def GaussMarkovChain(name, gain, var, initial_mean, initial_var, length: int, batch_shape=(), causal=False):
    """The states ``x_1..x_T`` (T = ``length``) of ``x_1 ~ N(m₀, v₀)``, ``x_t ~ N(gain · x_{t−1}, var)``.

    One variable of batch shape ``(T,)``; connect it to per-step factors with
    plated nodes, e.g. ``Normal("y", mean=x, var=r, observed=y)`` for y of shape (T,).
    ``batch_shape`` (e.g. ``(B,)``) makes B independent chains with the same
    parameters: the variable's batch is ``batch_shape + (T,)``; ``initial_mean`` and ``initial_var`` may
    give each its own start (shape ``batch_shape``). ``causal=True``: the marginals are the filtering ones.
    """
    if isinstance(length, bool) or not isinstance(length, numbers.Integral) or length < 1:
        raise ModelError(f"GaussMarkovChain {name!r}: length must be a whole number >= 1 (time steps), got {length!r}")
    return random_variable(
        GaussMarkovChainNode, name, {}, None, batch_shape=tuple(batch_shape) + (int(length),), event_shape=(),
        gain=gain, var=var, initial_mean=initial_mean, initial_var=initial_var, causal=causal,
    )


@average_energy(GaussMarkovChainNode)
def _gauss_markov_energy(q_out: Distribution, node):
    """``−E_q[log f]`` under independent ``q(x_t)`` (exact for an observed path), per time step."""
    mean = np.broadcast_to(q_out.mean, node.batch_shape)
    second = np.broadcast_to(q_out.second_moment, node.batch_shape)
    a, q = node.gain, node.var
    energy = np.empty(node.batch_shape)
    energy[..., 0] = 0.5 * (LOG_2PI + np.log(node.initial_var) + (
        second[..., 0] - 2.0 * node.initial_mean * mean[..., 0] + np.square(node.initial_mean)) / node.initial_var)
    squares = second[..., 1:] - 2.0 * a * mean[..., 1:] * mean[..., :-1] + a**2 * second[..., :-1]
    energy[..., 1:] = 0.5 * (LOG_2PI + math.log(q) + squares / q)
    return energy
