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

:class:`EqualityNode` keeps these products for one variable. Log-scales
follow the product rule: for ``m`` normalised densities with
natural parameters ``eta_j`` and scales ``s_j``,
``log integral prod = A(sum eta) - sum A(eta_j) + (m - 1) log h``; the node
adds the coefficients ``κ_j = s_j - A(eta_j)``, which also exist for
messages that are not normalisable (a rank-one Gaussian likelihood).
"""
from __future__ import annotations

import numpy as np

from fgraph.families.base import Distribution, ExponentialFamily, compressed
from fgraph.families.pointmass import PointMass, Uninformative
from fgraph.families.product import product_all


def reduction_axes(socket_batch: tuple, variable_batch: tuple) -> tuple:
    """Axes of a socket's batch that are summed to reach the variable's batch shape.

    Shapes align on the right (numpy): the socket's extra leading axes and the
    axes where the variable has length 1 and the socket does not. In a model
    with copies every batch is ``copies + padded plate`` (see :mod:`fgraph.model`),
    so the copy axes, equal in both, are never summed.
    """
    lead = len(socket_batch) - len(variable_batch)
    axes = list(range(lead))
    for i, size in enumerate(variable_batch):
        if size == 1 and socket_batch[lead + i] != 1:
            axes.append(lead + i)
    return tuple(axes)


def _sum_to(x: np.ndarray, axes: tuple, variable_batch: tuple, event_shape: tuple) -> np.ndarray:
    if axes:
        # a value broadcast along a plate axis (stride 0) sums to its length times the value
        small = compressed(x)
        repeats = int(np.prod([x.shape[a] for a in axes if small.shape[a] != x.shape[a]], dtype=int))
        lead = x.ndim - len(variable_batch) - len(event_shape)
        if len(axes) == lead:  # only extra leading axes: the sum has the variable's axes
            x = small.sum(axis=axes)
        else:  # axes of length 1 in the variable (e.g. the plate of a model with copies) are kept as such
            summed = small.sum(axis=axes, keepdims=True)
            x = summed.reshape(summed.shape[lead:])
        x = x * repeats if repeats != 1 else x
    return np.broadcast_to(x, variable_batch + event_shape) if x.shape != variable_batch + event_shape else x


def _kept_axes(socket_batch: tuple, variable_batch: tuple, axes: tuple) -> int | None:
    """``k`` when a socket reduces onto its variable by summing every batch axis from ``k`` on, else ``None``.

    The first ``k`` axes (the copies of a model with copies) are the variable's
    own; after them the variable has only axes of length 1 (it is global to the
    plate), so the sums :meth:`~fgraph.families.base.ExponentialFamily.natural_parameter_totals`
    keeps are all the reduction needs.
    """
    lead = len(socket_batch) - len(variable_batch)
    if lead == len(socket_batch):  # a variable without batch axes (the plain plate onto a global)
        return 0 if len(axes) == lead else None
    if lead:
        return None
    keep = min(axes)
    while keep and socket_batch[keep - 1] == 1 and variable_batch[keep - 1] == 1:
        keep -= 1
    if all(size == 1 for size in variable_batch[keep:]) and socket_batch[:keep] == variable_batch[:keep]:
        return keep
    return None


def _at_batch(total: np.ndarray, variable_batch: tuple, event_ndim: int) -> np.ndarray:
    """Sums with the leading batch axes kept, reshaped to the variable's batch (its axes of length 1 restored)."""
    event = total.shape[total.ndim - event_ndim:] if event_ndim else ()
    return np.reshape(total, variable_batch + event)


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


class EqualityNode:
    """The equality node of one variable: its belief and its outgoing messages, computed on demand.

    Each socket's message is summarised once (natural parameters, scale and
    log-partition summed over its plate axes) and the summary is kept until
    that socket's message changes, so a global parameter tied to a plate of N
    factors does not re-reduce the N messages when only its prior changed.
    Outgoing messages are computed per socket when asked: messages back to
    an observed plate are never needed and never computed.

    Parameters
    ----------
    socket_batches : list of tuple
        Batch shape of each socket; each broadcasts down to ``variable_batch``.
    variable_batch : tuple
        Batch shape of the variable.
    scaled : bool
        Track log-scales; variational messages do not need them, and skipping
        them saves a log-partition per plate element.
    """

    def __init__(self, socket_batches: list, variable_batch: tuple, scaled: bool = True):
        self.socket_batches = list(socket_batches)
        self.variable_batch = tuple(variable_batch)
        self.scaled = scaled
        self.axes = [reduction_axes(b, self.variable_batch) for b in self.socket_batches]
        self.counts = [_count(b, a) for b, a in zip(self.socket_batches, self.axes)]
        self.messages = [None] * len(self.socket_batches)
        self._summaries = [None] * len(self.socket_batches)
        self._total = None
        self._outgoing = {}

    def set_messages(self, messages: list) -> None:
        """Take the current incoming messages (``None`` = not yet computed, treated as flat)."""
        changed = False
        for k, message in enumerate(messages):
            if message is not self.messages[k]:
                self.messages[k] = message
                self._summaries[k] = None
                changed = True
        if changed:
            self._total = None
            self._outgoing = {}

    # ------------------------------------------------------------ structure
    def _informative(self) -> list:
        return [i for i, m in enumerate(self.messages) if m is not None and not isinstance(m, Uninformative)]

    def _reducible(self) -> tuple:
        """(family, sockets reduced by natural parameters, sockets multiplied explicitly)."""
        informative = self._informative()
        groups = {}
        for i in informative:
            if isinstance(self.messages[i], ExponentialFamily):
                groups.setdefault(self.messages[i].family(), []).append(i)
        if not groups:
            family, reducible = None, []
        else:
            # only a reduction sums a plate, so the family holding plate sockets is the one reduced
            # (a Gamma prior meeting a plate of GammaShapeLikelihood messages is then multiplied in)
            family, reducible = max(groups.items(), key=lambda item: (any(self.axes[i] for i in item[1]), len(item[1])))
        explicit = [i for i in informative if i not in reducible]
        for i in explicit:
            if self.axes[i]:
                raise NotImplementedError(
                    f"a plate reduction of {type(self.messages[i]).__name__} messages is not supported; "
                    "only exponential-family messages can be reduced over a plate"
                )
        return family, reducible, explicit

    def _summary(self, k: int, family) -> tuple:
        """(message, log-coefficient) of socket k, and its natural parameters and coefficient summed over its plate axes.

        The log-coefficient ``κ = log_scale - A(eta)`` of each message (see
        :meth:`ExponentialFamily.log_coefficient`) is what a product adds.
        """
        if self._summaries[k] is None:
            message = self.messages[k]
            if self.scaled:
                coefficient = message.log_coefficient()
            else:  # the products carry no log-scale information (one zero for the plate, a stride-0 view)
                coefficient = np.broadcast_to(0.0, self.socket_batches[k])
            axes = self.axes[k]
            keep = _kept_axes(self.socket_batches[k], self.variable_batch, axes) if axes else None
            if keep is not None:
                # a plate onto a global variable (one per copy of a model with copies): the sums the message
                # keeps (the engine's check read them), summed over every axis after the first `keep`
                summed_eta = message.natural_parameter_totals(keep)
                if self.variable_batch:
                    summed_eta = tuple(_at_batch(t, self.variable_batch, nd)
                                       for t, nd in zip(summed_eta, family.natural_event_ndims))
            else:
                summed_eta = tuple(_sum_to(e, axes, self.variable_batch, _event_shape(e, nd))
                                   for e, nd in zip(message.natural_parameters(), family.natural_event_ndims))
            # the per-element parameters are read from the message only for its own leave-one-out messages
            self._summaries[k] = ((message, coefficient), (summed_eta, _sum_to(coefficient, axes, self.variable_batch, ())))
        return self._summaries[k]

    # -------------------------------------------------------------- belief
    def total(self) -> Distribution:
        """Product of every incoming message, batch shape of the variable (scaled)."""
        if self._total is None:
            informative = self._informative()
            if not informative:
                self._total = Uninformative(self.variable_batch)
                return self._total
            family, reducible, explicit = self._reducible()
            parts = [self.messages[i] for i in explicit]
            if reducible:
                parts.insert(0, self._reduced_product(family, reducible, exclude=None))
            self._total = product_all(parts)
        return self._total

    def outgoing(self, k: int) -> Distribution:
        """The message out on socket ``k``: the product of all others (and of its own plate's other elements)."""
        message = self._outgoing.get(k)
        if message is None:
            message = self._outgoing[k] = self._compute_outgoing(k)
        return message

    def _compute_outgoing(self, k: int) -> Distribution:
        batch = self.socket_batches[k]
        if not self._informative():
            return Uninformative(batch)
        family, reducible, explicit = self._reducible()
        parts = [self.messages[i].broadcast_to(batch) for i in explicit if i != k]
        if reducible and (set(reducible) - {k} or (k in reducible and self.axes[k])):
            parts.insert(0, self._reduced_product(family, reducible, exclude=k))
        parts = [p for p in parts if not isinstance(p, Uninformative)]
        return product_all(parts) if parts else Uninformative(batch)

    def _reduced_product(self, family, reducible: list, exclude) -> Distribution:
        """Product of the exponential-family messages; with ``exclude = k``, of all but socket k's own element.

        For ``exclude = None`` the result has the variable's batch shape, else socket k's.
        """
        event_ndims = family.natural_event_ndims
        others = [i for i in reducible if i != exclude]
        eta = [list(self._summary(i, family)[1][0]) for i in others]
        coefficient = [self._summary(i, family)[1][1] for i in others]
        count = sum(self.counts[i] for i in others)
        batch = self.variable_batch
        if exclude is not None and exclude in reducible and self.axes[exclude]:
            (own_message, own_coefficient), _ = self._summary(exclude, family)
            own_eta = own_message.natural_parameters()
            axes = self.axes[exclude]
            eta.append([_exclusive_sum(e, axes) for e in own_eta])
            coefficient.append(_exclusive_sum(own_coefficient, axes))
            count += self.counts[exclude] - 1
        if exclude is not None:
            batch = self.socket_batches[exclude]
        total_eta = tuple(
            np.broadcast_to(sum(parts[j] for parts in eta), batch + _event_shape(eta[0][j], nd))
            for j, nd in enumerate(event_ndims)
        )
        if not self.scaled:
            return family.from_natural(total_eta, None)
        # a product of m densities has m factors h(x) = h^(m-1) · h (constant base measures)
        total_coefficient = sum(coefficient) + (count - 1) * family.log_base_measure_of(total_eta)
        return family.from_coefficient(total_eta, np.broadcast_to(total_coefficient, batch))


def _event_shape(array: np.ndarray, event_ndim: int) -> tuple:
    return array.shape[array.ndim - event_ndim:] if event_ndim else ()


def point_mass_at_mode(distribution: Distribution) -> PointMass:
    """The point-mass form constraint: ``q(x) = delta(x - argmax p(x))``."""
    if isinstance(distribution, PointMass):
        return distribution
    return PointMass(distribution.mode, distribution.event_ndim, distribution.log_scale)
