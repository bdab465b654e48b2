"""The state of one run of a compiled plan: one message out of every socket, and what is derived from them.

The state stores one outgoing message per node socket. Messages *into*
sockets and marginals of variables are derived on demand and cached until a
message at that variable changes: across a plain edge the incoming message is
the partner's outgoing one; at an equality node it is the product of the
others (see :mod:`fgraph.equality`); clamped sockets receive point masses.

The plan is only read; the engine (:mod:`fgraph.engine`) computes messages and
sets them here, the free energy (:mod:`fgraph.free_energy`) and the results
(:mod:`fgraph.result`) read them.
"""
from __future__ import annotations

import functools

import numpy as np

from fgraph.binding import clamped_message
from fgraph.equality import EqualityNode, point_mass_at_mode
from fgraph.errors import NumericalError
from fgraph.families.base import Distribution
from fgraph.families.pointmass import PointMass, Uninformative
from fgraph.families.product import product, product_all
from fgraph.plan import Plan


class RunState:
    """The messages of one run (one out of every socket), the messages and marginals derived from them, and
    whether the steady-state rules apply.

    ``data``: variable name -> the array bound to each observed variable, or ``None`` for a run without
    data (the one computing the messages of constants, :func:`fgraph.inference.fold_constants`).
    """

    def __init__(self, plan: Plan, data: dict | None):
        self.plan = plan
        self.graph = plan.graph
        self.data = data
        self.outbound: list = [None] * len(self.graph.sockets)
        self.clamped = dict(plan.constant_messages)  # the constants' point masses, made by the compiler
        copy_ndim = self.graph.model.copy_ndim
        for socket in plan.data_sockets if data is not None else ():  # (None: the compiler folding constants)
            value = data[socket.target.name]
            if type(value) is np.ndarray and value.ndim == 0:  # one number: the message of the last run with it
                self.clamped[socket.index] = plan.derived.scalar_data_message(socket, value, copy_ndim)
            else:
                self.clamped[socket.index] = clamped_message(socket, value, copy_ndim)
        self._equality_cache: dict = {}  # slot index -> {socket index: message} (small equality nodes)
        self._equality_nodes: dict = {}  # slot index -> EqualityNode (variables with plate reductions)
        self._marginal_cache: dict = {}
        self._belief_cache: dict = {}
        # node name -> (steady, {input name: marginal}): the marginals of the other clusters that a structured
        # node's last message on the first interface of its sum-product cluster read (fgraph.free_energy)
        self.cluster_inputs: dict = {}
        self._init = functools.partial(plan.derived.init_message, plan)  # (slot, batch shape) -> initial message
        self.steady = False  # False during the first iteration (rules bound to the init families)
        # socket indices of the plan's on-demand steps whose messages are not computed yet (Engine.complete)
        self.pending = set(plan.on_demand_by_socket)
        self.copy_shape = self.graph.model.copy_shape  # the copies of the model: a batch axis of every sum

    # ----------------------------------------------------------- messages
    def inbound(self, socket) -> Distribution:
        """The message flowing into ``socket`` from its variable's side."""
        if socket.clamped:
            return self.clamped[socket.index]
        slot = socket.slot
        kind = slot.kind
        if kind == "edge":  # (the most common variable: the partner's message)
            message = self.outbound[slot.partner(socket).index]
            return message if message is not None else self._init(slot, socket.batch_shape)
        if kind == "equality" and slot.reduced:
            equality = self._equality(slot)
            k = slot.sockets.index(socket)
            # a plate socket's own other elements are part of its incoming message
            if any(m is None for i, m in enumerate(equality.messages) if i != k or equality.axes[k]):
                return self._init(slot, socket.batch_shape)
            return equality.outgoing(k)
        if kind == "equality":  # a small equality node without plates: multiply the other messages directly
            others = [self.outbound[s.index] for s in slot.sockets if s is not socket]
            if any(m is None for m in others):
                return self._init(slot, socket.batch_shape)
            cache = self._equality_cache.setdefault(slot.index, {})
            message = cache.get(socket.index)
            if message is None:
                message = cache[socket.index] = product_all(others)
            return message
        return Uninformative(socket.batch_shape)  # dangling: nothing at the other end

    def incoming_log_scale(self, row: tuple, positions: tuple):
        """The sum of the log-scales of the messages into the sockets at ``positions`` of a node's ``row`` (a
        float, or an array over a plate)."""
        scale = 0.0
        for k in positions:  # (the messages a rule read, cached at their variables)
            scale = scale + self.inbound(row[k]).log_scale
        return scale

    def _scaled(self, slot) -> bool:
        """Whether log-scales matter at a variable: only where a sum-product node sends messages to it."""
        return slot.index in self.plan.scaled_slots

    def _equality(self, slot) -> EqualityNode:
        """The equality node of a variable with plate reductions, up to date with the current messages."""
        node = self._equality_nodes.get(slot.index)
        if node is None:
            node = self._equality_nodes[slot.index] = EqualityNode(
                [s.batch_shape for s in slot.sockets], slot.variable.batch_shape, scaled=self._scaled(slot)
            )
        node.set_messages([self.outbound[s.index] for s in slot.sockets])
        return node

    # ---------------------------------------------------------- marginals
    def belief(self, slot) -> Distribution | None:
        """Product of every message at a variable (scaled; ``None`` until all exist)."""
        cached = self._belief_cache.get(slot.index)
        if cached is not None:
            return cached
        kind = slot.kind
        if kind == "edge":  # (the most common variable: two messages)
            first, second = slot.sockets
            first, second = self.outbound[first.index], self.outbound[second.index]
            if first is None or second is None:
                return None
            belief = self._belief_cache[slot.index] = product(first, second)
            return belief
        messages = [self.outbound[s.index] for s in slot.sockets]
        if any(m is None for m in messages):
            return None
        if kind == "dangling":
            belief = messages[0]
        elif not slot.reduced:
            belief = product_all(messages)
        else:
            belief = self._equality(slot).total()
        self._belief_cache[slot.index] = belief
        return belief

    def marginal(self, slot) -> Distribution:
        """``q`` of a variable, batch shape of the variable, after any form constraint."""
        cached = self._marginal_cache.get(slot.index)
        if cached is not None:
            return cached
        if slot.kind == "observed":
            value = self.data[slot.name]
            result = PointMass(value, slot.variable.event_ndim)
        else:
            result = self.belief(slot)
            if result is None:
                result = self._init(slot, slot.variable.batch_shape)
                if result is None:
                    raise NumericalError(f"variable {slot.name!r} has no marginal yet; pass init={{'{slot.name}': ...}}")
            else:
                weight = self.entropy_weight(slot)
                if weight is not None:  # q ∝ (Π μ)^{1/τ}: the coordinate step when H[q] is weighted by τ
                    # its log-scale matters only where sum-product nodes send messages
                    result = result.power(1.0 / weight) if self._scaled(slot) else result.power_unscaled(1.0 / weight)
            if self.plan.forms.get(slot.name) == "point_mass":
                result = point_mass_at_mode(result)
        self._marginal_cache[slot.index] = result
        return result

    def entropy_weight(self, slot):
        """τ of a variable whose entropy is weighted (:func:`fgraph.model.entropy_weight`), ``None`` for τ = 1: a
        float, or one τ per copy shaped to broadcast against the variable's batch (``copies + (1,) * plate``)."""
        weight = slot.variable.entropy_weight
        if type(weight) is float:
            return None if weight == 1.0 else weight
        batch = slot.variable.batch_shape
        return np.reshape(weight, weight.shape + (1,) * (len(batch) - weight.ndim))

    def socket_marginal(self, socket) -> Distribution:
        """The marginal a node reads on ``socket``.

        It keeps the variable's batch shape (which broadcasts against the node's,
        numpy-style): a global parameter read by a plate of N factors is not
        copied N times; rules broadcast it.
        """
        if socket.clamped:
            return self.clamped[socket.index]
        return self.marginal(socket.slot)

    def cluster_marginal(self, node_plan, cluster: tuple, others: dict | None = None,
                         steady: bool | None = None) -> Distribution:
        """The joint marginal of a cluster from the messages into it and the marginals of the other clusters.

        ``others`` (input name -> marginal) replaces the current marginals of
        some other clusters, e.g. those an earlier update read; ``steady``
        chooses the rule bound to the first iteration's families (``False``)
        or to the later ones (default: the run's current state).
        """
        rules = node_plan.marginal_rules[cluster]
        steady = self.steady if steady is None else steady
        bound = rules[1] if steady and rules[1] is not None else rules[0]
        inputs = {}
        for interface in cluster:
            inputs[f"m_{interface}"] = self.inbound(node_plan.sockets[interface])
        for other in node_plan.clusters:
            if other is cluster:
                continue
            name = cluster_input_name(other)
            if others is not None and name in others:
                inputs[name] = others[name]
                continue
            inputs[name] = (
                self.socket_marginal(node_plan.sockets[other[0]]) if len(other) == 1 else self.cluster_marginal(node_plan, other)
            )
        for interface, socket in node_plan.sockets.items():
            if socket.clamped:
                inputs[f"q_{interface}"] = self.clamped[socket.index]
        return bound(node_plan.node.group_inputs(inputs, tuple), node_plan.node)

    # ------------------------------------------------------------ changes
    def set_outbound(self, socket, message) -> None:
        """Set the message out of ``socket``; what was derived from the old one at its variable is dropped."""
        if self.outbound[socket.index] is message:  # the same message again (a folded prior): nothing changed
            return
        self.outbound[socket.index] = message
        slot = socket.slot
        self._equality_cache.pop(slot.index, None)
        self._marginal_cache.pop(slot.index, None)
        self._belief_cache.pop(slot.index, None)

    def record_cluster_inputs(self, step) -> None:
        """Remember the marginals of the other clusters the message of ``step`` is made from (what a structured
        node's free-energy term must know of it, see ``fgraph.free_energy._cluster_energy_change``)."""
        row = step.node_plan.row
        self.cluster_inputs[step.node.name] = (self.steady, {
            name: self.socket_marginal(row[k]) for name, k in step.binding.cluster_inputs})

    def snapshot(self) -> tuple:
        """Every outgoing message, whether the steady-state rules apply, and the marginals the structured
        clusters' messages were computed from.

        Messages are never modified in place, so a shallow copy of the list
        keeps them; :meth:`restore` brings the run back to this state (after
        an interrupted sweep).
        """
        return list(self.outbound), self.steady, dict(self.cluster_inputs)

    def restore(self, state: tuple) -> None:
        """Return to a state taken by :meth:`snapshot`; every derived message and marginal is recomputed."""
        outbound, self.steady, cluster_inputs = state
        self.outbound = list(outbound)
        self.pending = {step.socket.index for step in self.plan.on_demand if outbound[step.socket.index] is None}
        self.cluster_inputs = dict(cluster_inputs)
        self._equality_cache.clear()
        self._marginal_cache.clear()
        self._belief_cache.clear()


def cluster_input_name(cluster: tuple) -> str:
    """The input name under which a rule or energy receives the joint marginal of ``cluster``."""
    return "q_" + "_".join(cluster)


class StateView:
    """What a node's hook reads of a run (``cluster_log_evidence(state, node_plan)``): messages and marginals,
    never written through it."""

    __slots__ = ("_state",)

    def __init__(self, state: RunState):
        self._state = state

    def message_out(self, socket) -> Distribution | None:
        """The message out of the node on ``socket`` (``None`` before it is computed)."""
        return self._state.outbound[socket.index]

    def message_in(self, socket) -> Distribution:
        """The message into ``socket`` from its variable's side (a point mass on a clamped socket)."""
        return self._state.inbound(socket)

    def marginal(self, socket) -> Distribution:
        """The marginal of the variable on ``socket`` (its point mass where clamped)."""
        return self._state.socket_marginal(socket)
