"""The runtime of a compiled plan: messages, marginals, free energy and evidence.

The engine stores one outgoing message per node socket. Messages *into*
sockets and marginals of variables are derived on demand (and cached until a
message at that variable changes): across a plain edge the incoming message is
the partner's outgoing one; at an equality node it is the product of the
others (see :mod:`fgraph.equality`); clamped sockets receive point masses.

Sum-product rules compute messages as if their incoming messages were
normalised; the engine adds the incoming log-scales, so that every message
carries the scale of the evidence of the sub-graph behind it. Nodes whose
rules weigh the scales themselves (a mixture weighs its inputs by their
evidence; a compound node combines many time steps) set
``rules_handle_scales`` or ``couples_batch`` and receive scaled messages.
"""
from __future__ import annotations

import math

import numpy as np

from fgraph.collection import cycle_collection_paused
from fgraph.equality import EqualityNode, point_mass_at_mode
from fgraph.errors import FgraphError, NumericalError, RuleError
from fgraph.families.base import Distribution, ExponentialFamily, compressed, damped
from fgraph.families.pointmass import PointMass, Uninformative
from fgraph.families.product import product, product_all
from fgraph.model import Constant
from fgraph.binding import clamped_message
from fgraph.plan import Plan
from fgraph.schedule import needed_steps


class Engine:
    """One run of a compiled plan: the messages (one out of every socket), derived messages and marginals.

    ``data``: variable name -> the array bound to each observed variable, or ``None`` for an engine
    without data (the one computing the messages of constants, :func:`fgraph.inference.fold_constants`).
    The plan is only read.
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
        self._init_messages: dict = {}  # (slot index, batch shape) -> the initial value broadcast to that shape
        self._reduced_slots = plan.derived.reduced_slots
        self.steady = False  # False during the first iteration (rules bound to the init families)
        # socket indices of the plan's on-demand steps whose messages are not computed yet (see complete)
        self._pending = set(plan.on_demand_by_socket)
        self.copy_shape = self.graph.model.copy_shape  # the copies of the model: a batch axis of every sum

    # ----------------------------------------------------------- messages
    def _init_for(self, slot, batch_shape):
        init = self.plan.init.get(slot.name)
        if init is None:
            return None
        # the same init broadcast to the same shape is the same message (distributions are never modified)
        key = (slot.index, batch_shape)
        message = self._init_messages.get(key)
        if message is None:
            message = self._init_messages[key] = init.broadcast_to(batch_shape)
        return message

    def inbound(self, socket) -> Distribution:
        """The message flowing into ``socket`` from its variable's side."""
        if socket.clamped:
            return self.clamped[socket.index]
        slot = socket.slot
        if slot.kind == "dangling":
            return Uninformative(socket.batch_shape)
        if slot.kind == "edge":
            message = self.outbound[slot.partner(socket).index]
            return message if message is not None else self._init_for(slot, socket.batch_shape)
        if not self._has_reductions(slot):
            # small equality node without plates: multiply the other messages directly
            others = [self.outbound[s.index] for s in slot.sockets if s is not socket]
            if any(m is None for m in others):
                return self._init_for(slot, socket.batch_shape)
            cache = self._equality_cache.setdefault(slot.index, {})
            message = cache.get(socket.index)
            if message is None:
                message = cache[socket.index] = product_all(others)
            return message
        equality = self._equality(slot)
        k = slot.sockets.index(socket)
        # a plate socket's own other elements are part of its incoming message
        if any(m is None for i, m in enumerate(equality.messages) if i != k or equality.axes[k]):
            return self._init_for(slot, socket.batch_shape)
        return equality.outgoing(k)

    def _scaled(self, slot) -> bool:
        """Whether log-scales matter at a variable: only where a sum-product node sends messages to it."""
        return slot.index in self.plan.scaled_slots

    def _has_reductions(self, slot) -> bool:
        reduced = self._reduced_slots.get(slot.index)
        if reduced is None:
            batch = slot.variable.batch_shape
            reduced = any(s.batch_shape != batch for s in slot.sockets)
            self._reduced_slots[slot.index] = reduced
        return reduced

    def _equality(self, slot) -> EqualityNode:
        """The equality node of a variable with plate reductions, up to date with the current messages."""
        node = self._equality_nodes.get(slot.index)
        if node is None:
            node = self._equality_nodes[slot.index] = EqualityNode(
                [s.batch_shape for s in slot.sockets], slot.variable.batch_shape, scaled=self._scaled(slot)
            )
        node.set_messages([self.outbound[s.index] for s in slot.sockets])
        return node

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
        elif not self._has_reductions(slot):
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
                result = self._init_for(slot, slot.variable.batch_shape)
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
        or to the later ones (default: the engine's current state).
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
            name = self._cluster_name(other)
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

    @staticmethod
    def _cluster_name(cluster) -> str:
        return "q_" + "_".join(cluster)

    # ------------------------------------------------------------ updates
    def update(self, step, damping: float = 0.0) -> None:
        """Compute the message of ``step`` (see :meth:`message`) and set it: the interpreted update, the
        reference of the generated sweeps (:mod:`fgraph.codegen`) and the one on-demand steps take."""
        binding = step.binding
        if binding.folded is not None:  # a message of constants only, computed by the compiler
            self.set_outbound(step.socket, binding.folded)
            return
        message = self.message(step, damping)
        if binding.cluster_inputs:
            self.record_cluster_inputs(step)
        self.set_outbound(step.socket, message)

    def message(self, step, damping: float = 0.0):
        """The message of ``step`` from the current state: its rule's output (the first iteration's or the
        steady state's), broadcast to the socket's batch, raised to the node's power, with the incoming
        log-scales added, damped, and checked for NaN and infinities (see :class:`~fgraph.binding.StepBinding`)."""
        binding = step.binding
        try:
            message = binding.calls[1 if self.steady else 0].run(self)
        except (ValueError, ArithmeticError, np.linalg.LinAlgError) as error:
            failure = self.rule_failure(step, error)
            if failure is error:
                raise
            raise failure from error
        if message.batch_shape != binding.batch_shape:  # all inputs were smaller than the plate
            message = message.broadcast_to(binding.batch_shape)
        if binding.exponent is not None:
            message = (message.power(binding.exponent) if binding.scaled_power
                       else message.power_unscaled(binding.exponent))
        if binding.adds_scales and binding.message_sockets:
            scale = 0.0
            for socket in binding.message_sockets:  # (the messages the rule read, cached at their variables)
                scale = scale + self.inbound(socket).log_scale
            if type(scale) is not np.float64 or scale != 0.0:  # arrays are added without looking
                message = message.with_log_scale(message.log_scale + scale)
        if damping and self.outbound[step.socket.index] is not None:
            message = damped(message, self.outbound[step.socket.index], damping)
        self.check(message, step)
        return message

    def rule_failure(self, step, error: Exception) -> Exception:
        """The error to raise when the rule of ``step`` raised ``error`` (a ValueError, ArithmeticError or
        LinAlgError): fgraph's own errors as they are, others as a RuleError saying where, in the rule's
        own words, led by what overflowed if the data did."""
        if isinstance(error, FgraphError):
            return error
        bound = step.rules[1] if self.steady else step.rules[0]
        return RuleError(self.explain_overflow(("node", step.node.name),
                                                f"the rule {bound.name} for {_where(step)} failed: {error}"))

    def check(self, message, step) -> None:
        """Refuse a message with NaN or infinite parameters or log-scale, naming the step (and the data, if
        they overflowed): the one place a non-finite message is found."""
        try:
            _check_message(message, step)
        except NumericalError as error:
            explained = self.explain_overflow(("node", step.node.name), str(error))
            if explained == str(error):
                raise
            raise NumericalError(explained) from None

    def record_cluster_inputs(self, step) -> None:
        """Remember the marginals of the other clusters the message of ``step`` was made from (what a
        structured node's free-energy term must know of it, see ``fgraph.free_energy._cluster_energy_change``)."""
        self.cluster_inputs[step.node.name] = (self.steady, {
            name: self.socket_marginal(socket) for name, socket in step.binding.cluster_inputs})

    def set_outbound(self, socket, message) -> None:
        if self.outbound[socket.index] is message:  # the same message again (a folded prior): nothing changed
            return
        self.outbound[socket.index] = message
        slot = socket.slot
        self._equality_cache.pop(slot.index, None)
        self._marginal_cache.pop(slot.index, None)
        self._belief_cache.pop(slot.index, None)

    def sweep(self, damping: float = 0.0) -> None:
        """One sweep of the plan: its generated function (:mod:`fgraph.codegen`), or the interpreted updates."""
        kernel = self.plan.derived.sweep_function(self.plan, self.steady)
        if kernel is not None:
            kernel(self, damping)
        else:
            for step in self.plan.sweep:
                self.update(step, damping)
        self.steady = True

    def complete(self, slots: list | None = None) -> None:
        """Compute the messages of the plan's ``on_demand`` steps that the beliefs of ``slots`` need
        (``None``: all of them), once, from the messages of the last sweep.

        Only exact plans leave steps on demand, and their messages are final after one sweep, so these are
        the values the full sweep would have given (:func:`fgraph.plan._split_by_demand`).
        """
        pending = self._pending
        if not pending:
            return
        on_demand = self.plan.on_demand_by_socket
        wanted = set(pending) if slots is None else needed_steps(on_demand, slots, pending)
        with cycle_collection_paused(promote_at=0):  # as in a sweep: the new messages stay with the result
            for index in sorted(wanted, key=self.plan.on_demand_position.__getitem__):  # in the schedule's order
                self.update(on_demand[index])
                pending.discard(index)

    def snapshot(self) -> tuple:
        """The state of the run: every outgoing message, whether the steady-state rules apply, and the
        marginals the structured clusters' messages were computed from.

        Messages are never modified in place, so a shallow copy of the list
        keeps them; :meth:`restore` brings the run back to this state (after
        an interrupted sweep).
        """
        return list(self.outbound), self.steady, dict(self.cluster_inputs)

    def restore(self, state: tuple) -> None:
        """Return to a state taken by :meth:`snapshot`; every derived message and marginal is recomputed."""
        outbound, self.steady, cluster_inputs = state
        self.outbound = list(outbound)
        self._pending = {step.socket.index for step in self.plan.on_demand if outbound[step.socket.index] is None}
        self.cluster_inputs = dict(cluster_inputs)
        self._equality_cache.clear()
        self._marginal_cache.clear()
        self._belief_cache.clear()

    # ------------------------------------------------------- free energy
    def explain_overflow(self, vertex: tuple, message: str) -> str:
        """``message`` (about a NaN or infinity found at ``vertex``), led by what overflowed if the data or
        constants are too large for float64; ``message`` itself when none is.

        ``vertex`` is ``("node", name)`` or ``("variable", name)``, where the NaN or infinity was found. Every
        data array and constant clamped to a node of its connected component whose largest magnitude ``M``
        exceeds :data:`OVERFLOW_MAGNITUDE` is named, with what overflowed: ``M²`` itself past float64's
        largest number (1.8e308), the sum of the squares over its elements, or neither — then the products
        of those squares with precisions or counts did. A NaN of another cause keeps its message alone.

        Called only once a non-finite number has been found: finite data cost nothing more. Size alone is
        no fault (a likelihood that reads its data through sums, not squares, takes 1e200), so the data are
        not refused when they are bound.
        """
        component = next((c for c in self.graph.connected_components() if vertex in c), ())
        node_names = {name for kind, name in component if kind == "node"}
        culprits, seen = [], set()
        for socket in self.graph.sockets:
            if not socket.clamped or socket.node.name not in node_names:
                continue
            target = socket.target
            if isinstance(target, Constant):
                what, value = f"parameter {socket.interface!r} of node {socket.node.name!r}", target.value
                name = f"the {socket.interface} of {socket.node.name!r}"
            else:
                what, name = f"data for {target.name!r}", repr(target.name)
                value = self.data.get(target.name) if self.data is not None else None  # (None: folding constants)
            if what in seen or value is None:
                continue
            seen.add(what)
            sentence = _too_large(what, name, value)
            if sentence:
                culprits.append(sentence)
        if not culprits:
            return message
        return "".join(f"{sentence}. " for sentence in culprits) + f"The overflow surfaced as: {message}"

class StateView:
    """What a node's hook reads of a run (``cluster_log_evidence(state, node_plan)``): messages and marginals,
    never written through it."""

    __slots__ = ("_engine",)

    def __init__(self, engine: Engine):
        self._engine = engine

    def message_out(self, socket) -> Distribution | None:
        """The message out of the node on ``socket`` (``None`` before it is computed)."""
        return self._engine.outbound[socket.index]

    def message_in(self, socket) -> Distribution:
        """The message into ``socket`` from its variable's side (a point mass on a clamped socket)."""
        return self._engine.inbound(socket)

    def marginal(self, socket) -> Distribution:
        """The marginal of the variable on ``socket`` (its point mass where clamped)."""
        return self._engine.socket_marginal(socket)












#: Magnitude from which a clamped value is reported as too large when a NaN or infinity appears: its square,
#: 1e300, leaves float64 (largest number 1.8e308) less than nine orders of magnitude for the sums over a
#: plate and the products with precisions that every Gaussian factor forms.
OVERFLOW_MAGNITUDE = 1e150


def _too_large(what: str, name: str, value) -> str:
    """A sentence saying that ``value`` (data or a constant, called ``what``) overflows float64 arithmetic,
    with the fix, or ``""`` when its largest magnitude is at most :data:`OVERFLOW_MAGNITUDE`."""
    value = np.asarray(value, dtype=float)
    with np.errstate(invalid="ignore"):
        largest = float(np.max(np.abs(value), initial=0.0))
    if not largest > OVERFLOW_MAGNITUDE:  # (NaN compares False: non-finite data never reach the engine anyway)
        return ""
    with np.errstate(over="ignore"):
        square = largest * largest
        squares = float(np.sum(np.square(value)))
    if not math.isfinite(square):
        overflowed = "their squares overflow"
    elif not math.isfinite(squares):
        overflowed = "the sum of their squares overflows"
    else:
        overflowed = (f"their squares reach {square:.3g}, and the products of such squares with precisions "
                      "or counts overflow")
    return (f"{what} are too large for float64 arithmetic (overflow): they are finite, largest magnitude "
            f"{largest:.3g}, but {overflowed} (float64 holds numbers up to {np.finfo(float).max:.3g}); "
            f"scale or standardise {name} (divide by a typical magnitude, or subtract the mean and divide by the "
            "standard deviation) and transform the posterior back")










def _suspicious(array) -> bool:
    """True if ``array`` may hold NaN or +inf (-inf is a legitimate log-probability)."""
    if type(array) is np.float64 or type(array) is float:
        return array != array or array == math.inf
    array = compressed(np.asarray(array))  # a value broadcast over a plate is checked once
    if array.ndim == 1 and array.size <= 16:  # a few probabilities: a sum on floats costs less than numpy's
        total = sum(array.tolist())
    else:
        total = array.item() if array.size == 1 else float(array.sum())  # NaN or +inf anywhere makes the sum so
    return total != total or total == math.inf


#: From this many batch elements on, a message is checked through the sums of its natural parameters.
PLATE_CHECK_SIZE = 64


def _checked_by_totals(message: ExponentialFamily) -> bool:
    """Whether a message's check can read the sums of its natural parameters over the plate.

    For a plate they are one pass that the equality node's reduction reuses
    (or no pass, when the rule gave them); a family that checks other arrays
    than its natural parameters keeps its own check.
    """
    if not message.batch_shape or type(message).checked_parameters is not ExponentialFamily.checked_parameters:
        return False
    return message.knows_natural_parameter_totals() or math.prod(message.batch_shape) >= PLATE_CHECK_SIZE


def _check_message(message: Distribution, step) -> None:
    if (not message.batch_shape and isinstance(message, ExponentialFamily)
            and type(message).checked_parameters is ExponentialFamily.checked_parameters):
        # one message of numbers: NaN or +inf anywhere makes the sum NaN or +inf (and -inf alone is legitimate)
        total = float(message.log_scale)
        for parameter in message.natural_parameters():
            total += parameter if type(parameter) is np.float64 or type(parameter) is float else float(np.sum(parameter))
        if total == total and total != math.inf:
            return
    if _suspicious(message.log_scale) and np.any(np.isnan(message.log_scale) | (message.log_scale == np.inf)):
        raise NumericalError(
            f"the message out of {_where(step)} has a NaN or infinite log-scale; check the inputs of this node")
    if isinstance(message, ExponentialFamily):
        if _checked_by_totals(message) and not any(_suspicious(t) for t in message.natural_parameter_totals()):
            return  # the sums over the plate are finite, so is every element (the reduction reads the same sums)
        for parameter in message.checked_parameters():
            if _suspicious(parameter) and np.any(np.isnan(parameter) | (parameter == np.inf)):
                raise NumericalError(
                    f"the message out of {_where(step)} has NaN or infinite parameters; check the inputs of this node"
                )
    elif isinstance(message, PointMass) and not np.all(np.isfinite(message.value)):
        raise NumericalError(f"the message out of {_where(step)} is a point mass at NaN or infinity")


def _where(step) -> str:
    return f"node {step.node.name!r} ({type(step.node).__name__}), interface {step.interface!r}"
