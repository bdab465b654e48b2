"""The equality node: products of messages, with reductions over plates.

A variable connected to more than two factor interfaces, or to an interface
whose batch shape is larger than its own (a global parameter shared by a
plate of N factors), is an equality node. Its outgoing message on socket
``k`` is the product of every *other* incoming message, and its marginal is
the product of all of them. With exponential-family messages these are sums
of natural parameters; a plate socket contributes the sum over its extra
batch axes (a reduction), and its own leave-one-out messages use exclusive
prefix and suffix sums, so that zero probabilities (``-inf`` natural
parameters) never meet ``inf - inf``.

Log-scales follow the product rule: for ``m`` normalised densities with
natural parameters ``eta_j`` and scales ``s_j``,
``log integral prod = A(sum eta) - sum A(eta_j) + (m - 1) log h``.
"""
from __future__ import annotations

import numpy as np

from fgraph.families.base import Distribution, ExponentialFamily
from fgraph.families.pointmass import PointMass, Uninformative
from fgraph.families.product import product_all


def reduction_axes(socket_batch: tuple, variable_batch: tuple) -> tuple:
    """Axes of a socket's batch that are summed to reach the variable's batch shape."""
    lead = len(socket_batch) - len(variable_batch)
    axes = list(range(lead))
    for i, size in enumerate(variable_batch):
        if size == 1 and socket_batch[lead + i] != 1:
            axes.append(lead + i)
    return tuple(axes)


def _sum_to(x: np.ndarray, axes: tuple, variable_batch: tuple, event_shape: tuple) -> np.ndarray:
    if axes:
        x = x.sum(axis=axes)
    return np.broadcast_to(x, variable_batch + event_shape) if x.shape != variable_batch + event_shape else x


def _exclusive_sum(x: np.ndarray, axes: tuple) -> np.ndarray:
    """For every element, the sum over ``axes`` of all *other* elements (no subtraction)."""
    if not axes:
        return np.zeros_like(x)
    front = tuple(range(len(axes)))
    moved = np.moveaxis(x, axes, front)
    shape = moved.shape
    flat = moved.reshape((-1,) + shape[len(axes):])
    prefix = np.cumsum(flat, axis=0)
    suffix = np.cumsum(flat[::-1], axis=0)[::-1]
    zeros = np.zeros((1,) + flat.shape[1:])
    before = np.concatenate([zeros, prefix[:-1]], axis=0)
    after = np.concatenate([suffix[1:], zeros], axis=0)
    return np.moveaxis((before + after).reshape(shape), front, axes)


def _count(socket_batch: tuple, axes: tuple) -> int:
    return int(np.prod([socket_batch[a] for a in axes], dtype=int)) if axes else 1


def equality_messages(messages: list, socket_batches: list, variable_batch: tuple, want_outgoing: bool = True,
                      scaled: bool = True):
    """Outgoing messages of an equality node and its marginal.

    Parameters
    ----------
    messages : list of Distribution
        Incoming message on each socket (``None`` entries are skipped as flat).
    socket_batches : list of tuple
        Batch shape of each socket; each broadcasts down to ``variable_batch``.
    variable_batch : tuple
        Batch shape of the variable.

    Returns
    -------
    (outgoing, total) : list of Distribution (one per socket, batch of the
        socket; ``None`` if not ``want_outgoing``), and the product of all
        messages with batch ``variable_batch`` (its log-scale is the evidence
        when every message is a sum-product message).
    scaled : bool
        Compute log-scales; variational messages do not need them, and
        skipping them saves a log-partition per plate element.
    """
    informative = [i for i, m in enumerate(messages) if m is not None and not isinstance(m, Uninformative)]
    if not informative:
        flat = [Uninformative(b) for b in socket_batches]
        return flat, Uninformative(variable_batch)
    present = [messages[i] for i in informative]
    if all(isinstance(m, ExponentialFamily) for m in present) and len({m.family() for m in present}) == 1:
        return _exponential_family_equality(messages, informative, socket_batches, variable_batch, want_outgoing, scaled)
    return _generic_equality(messages, informative, socket_batches, variable_batch, want_outgoing)


def _exponential_family_equality(messages, informative, socket_batches, variable_batch, want_outgoing, scaled=True):
    family = messages[informative[0]].family()
    event_ndims = family.natural_event_ndims
    axes = {i: reduction_axes(socket_batches[i], variable_batch) for i in informative}
    eta = {i: messages[i].natural_parameters() for i in informative}
    log_scale = {i: messages[i].log_scale for i in informative}
    if scaled:
        log_partition = {i: family.log_partition_of(eta[i]) for i in informative}
    else:  # zero scales and partitions: the products below then carry no log-scale information
        log_scale = {i: np.zeros(socket_batches[i]) for i in informative}
        log_partition = dict(log_scale)
    count = {i: _count(socket_batches[i], axes[i]) for i in informative}

    def event_shape(array, nd):
        return array.shape[array.ndim - nd:] if nd else ()

    summed_eta = {i: tuple(_sum_to(e, axes[i], variable_batch, event_shape(e, nd)) for e, nd in zip(eta[i], event_ndims)) for i in informative}
    summed_scale = {i: _sum_to(log_scale[i], axes[i], variable_batch, ()) for i in informative}
    summed_partition = {i: _sum_to(log_partition[i], axes[i], variable_batch, ()) for i in informative}

    total_eta = tuple(sum(summed_eta[i][k] for i in informative) for k in range(len(event_ndims)))
    total_count = sum(count.values())
    log_h = family.log_base_measure_of(total_eta)
    total_scale = (
        sum(summed_scale.values())
        + family.log_partition_of(total_eta)
        - sum(summed_partition.values())
        + (total_count - 1) * log_h
    ) if scaled else np.zeros(variable_batch)
    total = family.from_natural(total_eta, total_scale)
    if not want_outgoing:
        return None, total

    outgoing = []
    for k, batch in enumerate(socket_batches):
        others = [i for i in informative if i != k]
        own = k in informative and axes[k]
        if not others and not own:
            outgoing.append(Uninformative(batch))
            continue
        # natural parameters, scales and partitions of every other message, at the socket's batch
        parts_eta, parts_scale, parts_partition, m = [], [], [], 0
        for i in others:
            parts_eta.append(summed_eta[i])
            parts_scale.append(summed_scale[i])
            parts_partition.append(summed_partition[i])
            m += count[i]
        if own:
            parts_eta.append(tuple(_exclusive_sum(e, axes[k]) for e in eta[k]))
            parts_scale.append(_exclusive_sum(log_scale[k], axes[k]))
            parts_partition.append(_exclusive_sum(log_partition[k], axes[k]))
            m += count[k] - 1
        out_eta = tuple(
            np.broadcast_to(sum(p[j] for p in parts_eta), batch + event_shape(eta_shape, nd))
            for j, (eta_shape, nd) in enumerate(zip(total_eta, event_ndims))
        )
        out_scale = (
            sum(parts_scale) + family.log_partition_of(out_eta) - sum(parts_partition) + (m - 1) * log_h
        ) if scaled else np.zeros(batch)
        outgoing.append(family.from_natural(out_eta, np.broadcast_to(out_scale, batch)))
    return outgoing, total


def _generic_equality(messages, informative, socket_batches, variable_batch, want_outgoing):
    """Point masses and non-exponential families (mixtures) times a reduced exponential-family part.

    The exponential-family messages of the largest family are reduced as usual
    (they may come from plates); every other message must come from a socket
    without a plate reduction and is multiplied in explicitly.
    """
    families = {}
    for i in informative:
        if isinstance(messages[i], ExponentialFamily):
            families.setdefault(messages[i].family(), []).append(i)
    reducible = max(families.values(), key=len) if families else []
    explicit = [i for i in informative if i not in reducible]
    for i in explicit:
        if reduction_axes(socket_batches[i], variable_batch):
            raise NotImplementedError(
                f"a plate reduction of {type(messages[i]).__name__} messages is not supported; "
                "only exponential-family messages can be reduced over a plate"
            )
    if reducible:
        part_out, part_total = _exponential_family_equality(
            messages, reducible, socket_batches, variable_batch, want_outgoing
        )
    total = product_all(([part_total] if reducible else []) + [messages[i] for i in explicit])
    if not want_outgoing:
        return None, total
    outgoing = []
    for k, batch in enumerate(socket_batches):
        if k in reducible:
            others = [part_out[k]] + [messages[i].broadcast_to(batch) for i in explicit]
        else:
            others = ([part_total.broadcast_to(batch)] if reducible else []) + [
                messages[i].broadcast_to(batch) for i in explicit if i != k
            ]
        others = [m for m in others if not isinstance(m, Uninformative)]
        outgoing.append(product_all(others) if others else Uninformative(batch))
    return outgoing, total


def point_mass_at_mode(distribution: Distribution) -> PointMass:
    """The point-mass form constraint: ``q(x) = delta(x - argmax p(x))``."""
    if isinstance(distribution, PointMass):
        return distribution
    return PointMass(distribution.mode, distribution.event_ndim, distribution.log_scale)
