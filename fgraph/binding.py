"""The compiler's last pass: what every update of a plan does beyond its rule, decided before any run.

A :class:`StepBinding` holds how a step's message is made from the rule's output — the calls of its
first-iteration and steady-state rules (:class:`~fgraph.calls.Call`), the node's power (times the copies
of a collapsed plate), whether the incoming log-scales are added, which marginals a structured node's
free-energy term must remember. It names the node's sockets by position (``NodePlan.row``), so the
steps of identical nodes — the same template, rules, power and batch — share one binding (:func:`bind`):
an unrolled model of thousands of nodes binds a handful. A step's own message of constants alone (a prior
with fixed parameters) is computed once when the plan is compiled (``Step.folded``,
:func:`fgraph.inference.fold_constants`): it is the same in every run and sweep. The engine reads these
values and never writes them.
"""
from __future__ import annotations

import numpy as np

from fgraph import codegen
from fgraph.calls import Call, grouped_sources
from fgraph.families.base import broadcast_view, damped
from fgraph.families.pointmass import PointMass
from fgraph.plates import empirical_moments


class StepBinding:
    """How the message of a step is made (see the module docstring), for every step it is shared by.

    ``calls`` are the calls of ``step.rules`` (first iteration, steady state); ``index`` the position of a
    variadic target in its group; ``exponent`` the node's power times the copies of a collapsed plate
    (``None`` for 1), applied with the log-scale (``scaled_power``) only where a sum-product term reads
    it; ``adds_scales``: the engine adds the log-scales of the messages the rule read (the sockets at
    ``message_positions`` of the node's row) to the rule's own; ``cluster_inputs``: ``(input name,
    position)`` of the other clusters' marginals a structured node's term must know this message was
    made from.
    """

    __slots__ = ("batch_shape", "exponent", "scaled_power", "adds_scales", "message_positions", "index", "calls",
                 "cluster_inputs")

    def __init__(self, step, node_plan, scaled_slot: bool, exponent):
        node, socket = step.node, step.socket
        node_type = type(node)
        self.batch_shape = socket.batch_shape
        self.exponent = exponent
        # the powered message's log-scale is read only by sum-product terms
        self.scaled_power = node_plan.sum_product or scaled_slot
        self.adds_scales = not (node_type.couples_batch or node_type.rules_handle_scales)
        self.message_positions = tuple(item.position for item in step.inputs if item.kind == "m")
        self.index = node.group_index(step.interface) \
            if node_type.variadic is not None and node.group_of(step.interface) else None
        sources = {item.name: (Call.KINDS[item.kind], item.position if item.kind != "cluster" else item.cluster)
                   for item in step.inputs}
        sources = grouped_sources(node, sources)
        first = Call.of(step.rules[0], sources, self.index)
        self.calls = (first, first if step.rules[1] is step.rules[0] else Call.of(step.rules[1], sources, self.index))
        self.cluster_inputs = _recorded_cluster_inputs(step, node_plan)

    def message_sockets(self, node_plan) -> tuple:
        """The sockets whose incoming messages the rule read (their log-scales are added)."""
        row = node_plan.row
        return tuple(row[k] for k in self.message_positions)

    def finish(self, message, incoming_scale, previous, damping: float):
        """The rule's output ``message`` made the step's message: broadcast to the socket's batch (when all
        inputs were smaller than the plate), raised to :attr:`exponent`, the incoming log-scales added
        (``incoming_scale``: their sum, ``None`` when not :attr:`adds_scales`), and damped towards the
        ``previous`` message (``damping`` in [0, 1), none while there is no previous one)."""
        if message.batch_shape != self.batch_shape:
            message = message.broadcast_to(self.batch_shape)
        if self.exponent is not None:
            message = message.power(self.exponent) if self.scaled_power else message.power_unscaled(self.exponent)
        if incoming_scale is not None and (type(incoming_scale) is not np.float64 or incoming_scale != 0.0):
            message = message.with_log_scale(message.log_scale + incoming_scale)  # (arrays added without looking)
        if damping and previous is not None:
            message = damped(message, previous, damping)
        return message


def _recorded_cluster_inputs(step, node_plan) -> tuple:
    """``(input name, position)`` of the other clusters' marginals to record when ``step`` updates a message.

    Only the message of a structured node on the first interface of its sum-product cluster is concerned:
    its scale gives the node's free-energy term (see ``Engine._cluster_energy_change``).
    """
    cluster = node_plan.sum_product_cluster
    if not node_plan.sum_product or node_plan.energy is None or step.interface != cluster[0]:
        return ()
    position = node_plan.positions()
    return tuple((f"q_{other[0]}", position[node_plan.sockets[other[0]].index]) for other in node_plan.clusters
                 if other is not cluster)


class FrozenStepBinding(StepBinding):
    """The binding of a step of a compiled plan (:func:`fgraph.plan.freeze`): read-only."""

    __slots__ = ()

    def __setattr__(self, name, value):
        raise AttributeError(f"a step of a compiled plan is not changed (binding attribute {name!r}); compile the "
                             "model again (fg.compile) for other options")


class Derived:
    """What the engine derives from a plan alone when a run first needs it, shared by every run of the plan.

    Which variables have plate reductions or are in scale form; the free energy's variable terms; the
    inputs and calls of the average energies; the nodes of clamped values only; the generated sweeps.
    Each entry is a function of the plan (its graph, nodes and rules), never of data, messages or initial
    values, so it is worked out once and never invalidated; a plan that is never asked for a free energy
    never derives its terms. The count of sweeps run with the plan (when a sweep is worth generating,
    :mod:`fgraph.codegen`) is the one thing runs change here, and it changes no number.
    """

    __slots__ = ("init_messages", "scale_form_slots", "variable_terms", "energy_inputs",
                 "energy_calls", "summed_energy_calls", "clamped_only_nodes", "float_runs", "_scalar_data", "_kernels",
                 "_sweeps")

    def __init__(self):
        self.init_messages: dict = {}  # (slot index, batch shape) -> (initial value, it broadcast to that shape)
        self.scale_form_slots: dict = {}  # slot index -> whether the variable's terms are scales
        self.variable_terms = None  # free-energy terms of the variables
        self.energy_inputs: dict = {}  # node name -> inputs of its average energy
        self.energy_calls: dict = {}  # node name -> the Call of its average energy
        self.summed_energy_calls: dict = {}  # node name -> (the Call of its energy's sum over a plate, per copy) or None
        self.clamped_only_nodes = None  # node plans of factors of clamped values only (the evidence subtracts them)
        self.float_runs = {}  # the kinds of the messages -> the plan's run on floats or None (fgraph.floats)
        self._scalar_data = {}  # socket index -> (the number, its point mass) of the last run that bound one
        self._kernels = {}  # steady (bool) -> the generated sweep (fgraph.codegen), or None where interpreted
        self._sweeps = 0  # sweeps run with this plan so far, over all its runs (when to generate)

    def scalar_data_message(self, socket, value, copy_ndim: int):
        """The message on a clamped ``socket`` for the datum ``value`` (a 0-d array): the last run's message
        where that run bound the same number (the same bits: an array the caller changed in place is not)."""
        number = value.tobytes()
        kept = self._scalar_data.get(socket.index)
        if kept is not None and kept[0] == number:
            return kept[1]
        message = clamped_message(socket, value.copy(), copy_ndim)  # (its own copy: the caller's may change)
        self._scalar_data[socket.index] = (number, message)
        return message

    def init_message(self, plan, slot, batch_shape: tuple):
        """The initial value of ``slot`` (``plan.init``) broadcast to ``batch_shape``, or ``None`` without one:
        made once per initial value and shape (distributions are never modified, so every run can share it;
        a plan remembered for its structure may be given other initial values, see :func:`fgraph.compile`)."""
        init = plan.init.get(slot.name)
        if init is None:
            return None
        key = (slot.index, batch_shape)
        kept = self.init_messages.get(key)
        if kept is None or kept[0] is not init:
            kept = self.init_messages[key] = (init, init.broadcast_to(batch_shape))
        return kept[1]

    def sweep_function(self, plan, steady: bool):
        """The plan's generated sweep for ``steady``, or ``None`` to interpret this one (see
        :mod:`fgraph.codegen`: made once the plan is hot, or always, or never, by ``codegen.MODE``)."""
        self._sweeps += 1
        kernel = self._kernels.get(steady, False)
        if kernel is not False:
            return kernel
        mode = codegen.MODE
        if mode == "interpreted" or (mode == "auto" and (not steady or self._sweeps <= codegen.HOT_SWEEPS)):
            return None
        make = codegen.compared_sweep if mode == "compared" else codegen.sweep_function
        kernel = self._kernels[steady] = make(plan, steady)
        return kernel


def clamped_message(socket, value: np.ndarray, copy_ndim: int) -> PointMass:
    """The message on a clamped socket: ``value`` (a constant's, or the data of an observed variable) as a point
    mass of the socket's batch shape, or its empirical moments where the plate is collapsed."""
    event_ndim = socket.target.event_ndim
    if socket.empirical:
        return empirical_moments(value, event_ndim, socket.node.batch_shape, copy_ndim)
    event_shape = value.shape[value.ndim - event_ndim:] if event_ndim else ()
    shape = socket.batch_shape + event_shape
    return PointMass(value if value.shape == shape else broadcast_view(value, shape), event_ndim)


def scaled_slots(plan) -> frozenset:
    """Indices of the variables whose messages' log-scales matter: those a sum-product node sends to."""
    nodes = plan.nodes
    return frozenset(slot.index for slot in plan.graph.latent_slots
                     if any(nodes[socket.node.name].sum_product for socket in slot.sockets))


def bind(plan) -> None:
    """Give every step of ``plan`` its :class:`StepBinding`, one per template, rules, power and batch (the
    messages of constants are folded by :func:`fgraph.inference.fold_constants`, which runs their rules)."""
    scaled = plan.scaled_slots = scaled_slots(plan)
    plan.derived = Derived()
    shared = {}  # what fixes a binding -> the binding (the steps hold their inputs and rules: the ids stay theirs)
    for step in plan.schedule:
        slot = step.socket.slot
        scaled_slot = slot is not None and slot.index in scaled
        exponent = step.node.power * step.socket.copies  # an array of the copies for per-copy powers
        if type(exponent) is np.ndarray:
            key = None
        else:
            exponent = None if exponent == 1.0 else np.float64(exponent)
            key = (id(step.inputs), id(step.rules[0]), id(step.rules[1]), scaled_slot, exponent,
                   step.socket.batch_shape)
        binding = shared.get(key) if key is not None else None
        if binding is None:
            binding = StepBinding(step, step.node_plan, scaled_slot, exponent)
            if key is not None:
                shared[key] = binding
        step.binding = binding
