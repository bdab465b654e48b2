"""Compilation: from a model to a plan in which every message is bound to one rule.

Everything a run needs is decided here, before any number is computed, in passes over the model's factor
graph (:func:`compile_model`):

1. *factorise* (:mod:`fgraph.factorise`): the local clusters of every node and the inputs of its messages;
2. *schedule* (:mod:`fgraph.schedule`): the order of the updates, given or derived, and (with ``marginals=``
   or on a tree) which of them a reading needs;
3. *type and bind* (:mod:`fgraph.message_families`): the schedule walked twice (a first iteration, then the
   steady state) propagating the *family* of every message and marginal, each message's rule resolved
   against the families it will actually receive;
4. *check*: every message into a readable variable updated, the families that meet at a variable
   multiplying, initial values of their variable's family, point-mass messages of categorical variables
   one-hot;
5. *bind energies* and each step's call (:mod:`fgraph.binding`); then, in :func:`fgraph.inference.compile`,
   the messages of constants folded (:func:`fgraph.inference.fold_constants`) and the plan frozen
   (:func:`freeze`).

A missing rule, an ambiguous rule or an initialisation the schedule needs but lacks is reported here,
naming the node, the interface and the variable; so are messages of different families that meet at a
variable, an initial value of the wrong family, and a variable tied to two interfaces of one node.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from fgraph import registry
from fgraph.binding import FrozenStepBinding, bind, clamped_message
from fgraph.constraints import Constraints
from fgraph.errors import AmbiguousRuleError, FgraphError, ModelError, RuleNotFoundError, ScheduleError
from fgraph.factorise import ALGORITHMS, FrozenNodePlan, NodeTemplates, structured
from fgraph.families.categorical import Categorical
from fgraph.families.pointmass import PointMass, Uninformative
from fgraph.graph import FactorGraph
from fgraph.message_families import (FLAT_MESSAGE, FamilyTracker, check_families_meet, check_init, check_init_family,
                                     common_family, family_name, family_of_product, must_agree, nothing_attached,
                                     resolve_message_rule, rule_target)
from fgraph.model import Constant, Model
from fgraph.schedule import FrozenStep, Schedule, Step, default_order, needed_steps, order_from_pairs


class InitialValues(Mapping):
    """The initial values of a run, read-only: the user's ``init=`` as the mapping's items, node-declared
    defaults behind them.

    ``get(name)`` and ``[name]`` fall back to ``defaults`` (variable name ->
    distribution: the :attr:`FactorNode.default_initial` values the compiler
    took, see :meth:`FamilyTracker._init_family`), so the engine starts every
    variable from the same place whether its value was given or declared.
    Iteration, ``in`` and ``len`` see the user's values only: they are what a
    run was asked for, and what decides whether a compiled plan is reused.
    Other initial values are another plan: ``fg.compile(model, init=...)``.
    """

    def __init__(self, given: dict, defaults: dict):
        self._given = dict(given)
        self.defaults = defaults

    def __getitem__(self, name):
        if name in self._given:
            return self._given[name]
        return self.defaults[name]

    def get(self, name, default=None):
        value = self._given.get(name)
        return value if value is not None else self.defaults.get(name, default)

    def __contains__(self, name) -> bool:
        return name in self._given

    def __iter__(self):
        return iter(self._given)

    def __len__(self) -> int:
        return len(self._given)

    def __repr__(self) -> str:
        return f"InitialValues({self._given!r}, defaults={self.defaults!r})"


@dataclass
class Plan:
    """A compiled model: the schedule with a rule bound to every message, and all a run reads.

    Made by :func:`compile_model`'s passes and then sealed (:meth:`seal`): a run reads it and never
    changes it (setting an attribute of a sealed plan raises). ``print(plan)`` lists the schedule.
    """

    graph: FactorGraph
    algorithm: str
    constraints: Constraints
    schedule: Schedule
    nodes: dict  # node name -> NodePlan
    init: dict  # the user's initial values; an InitialValues that also finds default_init
    forms: dict  # variable name -> form constraint
    exact: bool  # BP on a tree: one sweep gives exact marginals and evidence
    computed: set | None = None  # names of the variables whose beliefs can be read (None: all)
    sweep: tuple = ()  # the steps of the schedule every sweep runs, in its order (see _split_by_demand)
    on_demand: tuple = ()  # the other steps of an exact plan, run once when a reading needs them
    on_demand_by_socket: dict = field(default_factory=dict)  # socket index -> its step in on_demand
    on_demand_position: dict = field(default_factory=dict)  # socket index -> the step's position in on_demand
    evidence_readers: list = field(default_factory=list)  # (slot, coupled) per component, see FactorGraph
    constant_messages: dict = field(default_factory=dict)  # socket index -> point mass of a constant
    data_sockets: tuple = ()  # clamped sockets that read data (their messages are made by every run)
    scaled_slots: frozenset = frozenset()  # indices of the variables where log-scales matter (fgraph.binding)
    derived: object = None  # what the engine derives from the plan alone on first use (fgraph.binding.Derived)
    #: variable name -> the initial value a node type declared for it (FactorNode.default_initial), for the
    #: variables the schedule needs before computing them and ``init`` does not give
    default_init: dict = field(default_factory=dict)

    def __post_init__(self):
        # also when a plan is copied with another user init (dataclasses.replace): the defaults stay behind it
        if not isinstance(self.init, InitialValues) or self.init.defaults is not self.default_init:
            self.init = InitialValues(self.init, self.default_init)

    def __setattr__(self, name, value):
        if self.__dict__.get("_sealed"):
            raise AttributeError(f"a compiled plan is not changed (attribute {name!r}); compile the model again "
                                 "(fg.compile) for other options")
        object.__setattr__(self, name, value)

    def seal(self) -> "Plan":
        """Forbid any further change of the plan's attributes (the compiler's last step); returns the plan."""
        object.__setattr__(self, "_sealed", True)
        return self

    def __str__(self) -> str:
        return str(self.schedule)

    def source(self, steady: bool = True) -> str:
        """The Python source of the plan's sweep (the steady state's, or the first iteration's), as
        :mod:`fgraph.codegen` writes it: one straight-line update per step of the sweep."""
        from fgraph.codegen import sweep_source

        return sweep_source(self, steady)[0]


def compile_model(model: Model, algorithm: str = "bp", constraints=None, schedule=None, init=None,
                  collapse_plates: bool = True, marginals=None) -> Plan:
    """Compile ``model`` into a :class:`Plan` (see module docstring)."""
    if algorithm not in ALGORITHMS:
        raise ModelError(f"unknown algorithm {algorithm!r}; use 'bp' or 'vmp'")
    registry.load_rule_packages()
    constraints = Constraints.coerce(constraints)
    graph = FactorGraph(model)
    _check_ties(graph)
    _check_branches_along_sequences(graph)
    init = check_init(model, init or {})
    forms = {}
    for name in constraints.form:
        model[name]  # raises for unknown names
        forms[name] = constraints.form_of(name)
    for name in list(constraints.factorization) + list(constraints.operator):
        if isinstance(name, str):
            graph.node(name)  # raises for unknown node names

    nodes, steps = {}, []
    templates = NodeTemplates(constraints, algorithm, forms, collapse_plates)
    for node in graph.nodes:
        node_plan, step_inputs = templates.plan(node, graph.node_sockets[node.name])
        nodes[node.name] = node_plan
        sockets = node_plan.sockets
        for interface, inputs in step_inputs:
            steps.append(Step(sockets[interface], inputs, node_plan))

    wanted = None if marginals is None else [_latent_slot(graph, name) for name in marginals]
    if schedule is None:
        ordered = default_order(steps)
    else:
        pairs = schedule.pairs() if isinstance(schedule, Schedule) else schedule
        ordered = order_from_pairs(steps, pairs)
    plan = Plan(graph, algorithm, constraints, Schedule(ordered), nodes, init, forms, exact=False)
    plan.evidence_readers = graph.evidence_readers(prefer=None if wanted is None else {s.name for s in wanted})
    _resolve(plan)
    # nodes whose interfaces are all clamped only add a constant; they do not break exactness
    plan.exact = all(
        n.sum_product and len(n.clusters) <= 1 for n in nodes.values() if n.clusters
    ) and graph.is_tree()
    _split_by_demand(plan, wanted, given_order=schedule is not None)
    _bind_clamped(plan)
    bind(plan)
    return plan.seal()


def _bind_clamped(plan: Plan) -> None:
    """The point masses of the constants (the same in every run) and the sockets whose data each run binds."""
    copy_ndim = plan.graph.model.copy_ndim
    constants, data = {}, []
    made = {}  # (constant, batch shape) -> its point mass: one for the many nodes given the same number
    for socket in plan.graph.sockets:
        if not socket.clamped:
            continue
        target = socket.target
        if isinstance(target, Constant):
            if socket.empirical:
                constants[socket.index] = clamped_message(socket, target.value, copy_ndim)
                continue
            key = (id(target), socket.batch_shape)  # (the model keeps its constants alive: ids stay theirs)
            message = made.get(key)
            if message is None:
                message = made[key] = clamped_message(socket, target.value, copy_ndim)
            constants[socket.index] = message
        else:
            data.append(socket)
    plan.constant_messages, plan.data_sockets = constants, tuple(data)


def _split_by_demand(plan: Plan, wanted: list | None, given_order: bool) -> None:
    """Decide which steps every sweep runs (``plan.sweep``) and which only when a reading needs them
    (``plan.on_demand``), so that a run computes what is asked for and what that needs, nothing more.

    The sweep keeps the steps that the beliefs of ``wanted`` (``marginals=``; ``None``: every variable)
    and, in an exact plan, the evidence readers depend on (:func:`needed_steps`, closed under dependencies, so the sweep
    is the schedule with the other steps left out, in the same order).

    * Exact plans (sum-product on a tree): the messages after one sweep are final, so the steps left out
      become ``on_demand``: the engine computes those a reading needs (a marginal, the free energy) once,
      from the final messages, with the values the full sweep would give. By default (``wanted`` None) a
      tree sweeps only towards its evidence readers (the variable of smallest batch of each component):
      a regression's plate of N predictions costs nothing unless its marginals are read. A schedule given
      by the user runs as given.
    * Iterative plans sweep every step unless ``marginals=`` is given; then the others are never computed
      (their values would depend on the sweeps they missed) and ``plan.computed`` names what can be read:
      the variables whose every message the sweep updates.
    """
    steps = plan.schedule.steps
    if wanted is None and (given_order or not plan.exact):
        plan.sweep = tuple(steps)
        return
    targets = list(wanted or ())
    if plan.exact:  # (only an exact plan's evidence is read off its beliefs)
        targets += [slot for slot, _ in plan.evidence_readers if slot not in targets]
    needed = needed_steps(steps, targets)
    plan.sweep = tuple(step for step in steps if step.socket.index in needed)
    left_out = [step for step in steps if step.socket.index not in needed]
    if plan.exact:
        plan.on_demand = tuple(left_out)
        plan.on_demand_by_socket = {step.socket.index: step for step in left_out}
        plan.on_demand_position = {step.socket.index: k for k, step in enumerate(left_out)}
        plan.schedule.notes = {step: "when read" for step in left_out}
    else:
        plan.computed = {slot.name for slot in plan.graph.latent_slots
                         if all(socket.index in needed for socket in slot.sockets)}
        plan.schedule.notes = {step: "not computed" for step in left_out}


def _check_branches_along_sequences(graph: FactorGraph) -> None:
    """Refuse a node comparing branches by their evidence (conditional interfaces: a mixture's inputs) step by
    step along a sequence, when a branch is that sequence's compound node (``couples_batch``).

    A conditional interface's message carries the evidence of everything behind it, and the switch compares
    those evidences. A compound chain's message to its step t carries the evidence of every other step, which
    the other branches' messages do not: the switch at each t would weigh the whole rest of the sequence
    against one step (in a test, p(speech) of 1e-110 at every step and a free energy below −log p(y)).
    """
    for node in graph.nodes:
        conditional = node.conditional_interfaces()
        if not conditional or not node.batch_shape:
            continue
        sockets = graph.node_sockets[node.name]
        for interface in conditional:
            slot = sockets[interface].slot
            if slot is None:
                continue
            for other in slot.sockets:
                coupled = other.node
                if coupled is node or not type(coupled).couples_batch:
                    continue
                if tuple(node.batch_shape[-1:]) == tuple(coupled.batch_shape[-1:]):
                    raise ModelError(
                        f"node {node.name!r} ({type(node).__name__}) switches between its inputs at every step of "
                        f"the sequence of {coupled.name!r} ({type(coupled).__name__}), which is its input "
                        f"{interface!r}: that input's messages carry the evidence of the whole sequence, so the "
                        f"switch would compare it with one step of the others. For a per-step switch between the "
                        f"states of a chain use a switching likelihood with variational messages "
                        f"(fgraph.nodes.SwitchingNormal), or give each step its own branch"
                    )


def _check_ties(graph: FactorGraph) -> None:
    """Refuse a latent variable on two interfaces of one node (see :meth:`FactorGraph.tied_interfaces`).

    Every rule treats the interfaces of its node as distinct variables: the
    two ends of the tie would be inferred as independent copies of one
    variable, a loop through the node that neither sum-product nor
    mean-field messages resolve (x + x would be a sum of two independent
    draws). Nothing computed that way is the model's answer, so it is an
    error, not an approximation.
    """
    for node, slot, interfaces in graph.tied_interfaces():
        listed = " and ".join(repr(i) for i in interfaces)
        raise ModelError(
            f"variable {slot.name!r} is connected to interfaces {listed} of node {node.name!r} "
            f"({type(node).__name__}): the node's rules treat its interfaces as separate variables, so the "
            f"copies of {slot.name!r} would be inferred as independent (a loop through one node). "
            f"Write the factor with {slot.name!r} on one interface (x + x is Multiply(name, 2.0, x)), "
            "or give the other interface a variable of its own"
        )


def _latent_slot(graph: FactorGraph, name: str):
    if name not in graph.slots:
        raise ModelError(f"marginals: unknown variable {name!r}; the model has: {', '.join(sorted(graph.slots))}")
    slot = graph.slots[name]
    if slot.kind == "observed":
        raise ModelError(f"marginals: {name!r} is observed; ask for latent variables")
    return slot


def _check_point_mass_messages(plan: Plan, tracker: FamilyTracker) -> None:
    """Make the rules that read point-mass messages as clamped values check those of categorical variables.

    A categorical value is one-hot everywhere (data, constants, a fixed
    switch); the rules for a clamped categorical interface rely on it (for a
    one-hot ``x``, ``Aᵀx`` and ``exp(log Aᵀ x)`` agree, for a probability
    vector they do not).
    """
    plain = set()  # ids of the bound rules that read no point mass as clamped (most steps share a handful)
    for step in plan.schedule:
        for bound in step.rules:
            if id(bound) in plain:
                continue
            one_hot_inputs = getattr(bound.function, "one_hot_inputs", None)
            if one_hot_inputs is None:
                plain.add(id(bound))
                continue
            for item in step.inputs:
                if item.kind != "m" or item.name not in bound.function.point_mass_inputs:
                    continue
                slot = step.node_plan.row[item.position].slot
                families = [f for _, f in tracker.sources(slot) if must_agree(f)]
                family = family_of_product(families, f"variable {slot.name!r}")
                if issubclass(family, Categorical):
                    one_hot_inputs[item.name] = slot.name


def _resolve(plan: Plan) -> None:
    """Type every message and bind its rule, then check the plan and bind the nodes' energies: the passes
    below, in order, sharing one :class:`FamilyTracker` (the family of every message and marginal)."""
    tracker = FamilyTracker(plan)
    try:
        per_message_rules = _bind_message_rules(plan, tracker)
        _check_every_message_is_updated(plan, tracker)
        _check_families_meet(plan, tracker)
    except FgraphError:
        # past a missing initial value the walk ran on a guessed family: the missing values come first
        if tracker.missing:
            raise tracker.missing_init_error() from None
        raise
    if tracker.missing:
        raise tracker.missing_init_error()
    if per_message_rules:  # only the fallbacks of resolve_message_rule read point masses as clamped values
        _check_point_mass_messages(plan, tracker)
    _bind_energies(plan, tracker)


def _bind_message_rules(plan: Plan, tracker) -> bool:
    """Walk the schedule twice (the first iteration, then the steady state), typing every message from the
    families of its inputs and binding its rule (``step.rules``); returns whether a rule was made for one
    message (a mixture distributed over, point masses read as clamped values)."""
    # (node type, target, operator, input families) -> (rule, output family) of the registry's own rules: the
    # thousands of identical nodes of an unrolled model resolve once. Rules built for one message (a
    # mixture distributed over, point masses read as clamped) are made per step and never shared.
    shared = {}
    per_message_rules = False  # whether any rule was made for one message (resolve_message_rule's fallbacks)
    for iteration in range(2):
        for step in plan.schedule:
            node = step.node
            node_type = type(node)
            node_plan = plan.nodes[node.name]
            first_init = len(tracker.init_used)
            families = tracker.inputs(node_plan, step.inputs, step.socket, iteration)
            if node_type.variadic is not None:
                families = node.group_inputs(families, common_family)
            if node_plan.plate_rule is not None:
                bound = node_plan.plate_rule
            elif step.interface != "out" and families.get("m_out") is Uninformative:
                # a conditional factor f(out | ...) integrated against a flat message on out is 1
                bound = FLAT_MESSAGE
            else:
                target = step.interface if node_type.variadic is None else rule_target(node, step.interface)
                key = (node_type, target, node_plan.operator, tuple(families.items()))
                known = shared.get(key)
                if known is not None:
                    bound, output = known
                    if len(step.rules) <= iteration:
                        step.rules.append(bound)
                    tracker.outbound[step.socket.index] = output
                    continue
                try:
                    try:
                        bound = registry.resolve(registry.MESSAGE, type(step.node), target, families,
                                                 f"node {step.node.name!r}", node_plan.operator)
                    except RuleNotFoundError:
                        bound = resolve_message_rule(step.node, target, families, node_plan.operator)
                        per_message_rules = True
                    else:
                        output = bound.output_for(families)
                        if output is not None:
                            shared[key] = (bound, output)
                except (RuleNotFoundError, AmbiguousRuleError) as error:
                    used = sorted(set(tracker.init_used[first_init:]))
                    if not used:
                        raise nothing_attached(error, node_plan, families) from None
                    given = ", ".join(
                        (f"init[{name!r}]" if name in plan.init else f"the declared initial value of {name!r}")
                        + f" is a {family_name(type(plan.init[name]))}" for name in used)
                    raise type(error)(
                        f"{error}\nSome of these inputs take their family from an initial value ({given}); "
                        "check that it is of the family the variable's messages have."
                    ) from None
            output = bound.output_for(families)
            if output is None:
                raise ModelError(f"rule {bound.name} has no return annotation; annotate the family it returns")
            if len(step.rules) <= iteration:
                step.rules.append(bound)
            tracker.outbound[step.socket.index] = output
        if iteration == 0 and not tracker.init_used and not any(n.marginal_rules for n in plan.nodes.values()):
            # Every input of the first iteration was typed by an earlier step, never by an initial value, so
            # each step of the second reads the families it read in the first (by induction over the steps:
            # whatever it reads was written before it in both) and binds the same rule: skip the walk.
            # (Structured clusters, whose marginal rules are bound per iteration, always take the full walk.)
            for step in plan.schedule:
                if len(step.rules) < 2:
                    step.rules.append(step.rules[0])
            break
    return per_message_rules


def _check_every_message_is_updated(plan: Plan, tracker) -> None:
    """Refuse a schedule that never updates a message into a variable whose belief can be read."""
    slots = plan.graph.latent_slots if plan.computed is None else [plan.graph.slots[n] for n in plan.computed]
    # every message written is one into these variables' sockets (or others'): count before looking
    complete = plan.computed is None and len(tracker.outbound) == sum([len(s.sockets) for s in slots])
    missing = [] if complete else [s for s in slots for k in s.sockets if k.index not in tracker.outbound]
    if missing:
        raise ScheduleError(
            f"the schedule never updates the messages into variable(s) {sorted({s.name for s in missing})}"
        )


def _check_families_meet(plan: Plan, tracker) -> None:
    """Refuse messages of families that cannot be multiplied at a variable, and initial values of another
    family than the variable's messages."""
    # under sum-product the messages at a variable are only multiplied when its belief is read: check them now
    outbound, met = tracker.outbound, set()  # combinations of families found to meet: the same answer again
    for slot in plan.graph.latent_slots:
        init = plan.init.get(slot.name) if plan.init or plan.default_init else None
        if init is None:
            families = tuple([outbound.get(socket.index) for socket in slot.sockets])
            if families in met:
                continue
            check_families_meet(slot, tracker.sources(slot))
            met.add(families)
            continue
        sources = tracker.sources(slot)
        check_families_meet(slot, sources)
        check_init_family(slot, init, sources)


def _bind_energies(plan: Plan, tracker) -> None:
    """Bind the average energy of every variational or structured node to the families of its marginals."""
    for node_plan in plan.nodes.values():
        if not node_plan.sum_product or structured(node_plan):
            families = {}
            for interface, socket in node_plan.sockets.items():
                if socket.clamped:
                    families[f"q_{interface}"] = PointMass
            for cluster in node_plan.clusters:
                if len(cluster) == 1:
                    families[f"q_{cluster[0]}"] = tracker.marginal(node_plan.sockets[cluster[0]].slot, node_plan.sockets[cluster[0]])
                else:
                    families["q_" + "_".join(cluster)] = tracker.cluster(node_plan, cluster, node_plan.sockets[cluster[0]], 1)
            families = node_plan.node.group_inputs(families, common_family)
            node_plan.energy = registry.resolve(
                registry.ENERGY, type(node_plan.node), None, families, f"node {node_plan.node.name!r}",
                node_plan.operator,
            )


def freeze(plan) -> None:
    """Make what a compiled plan holds read-only: its steps (their rules a tuple), their bindings, the node
    plans (clusters a tuple, the mappings read-only views) and the schedule's list of steps. The compiler's
    last pass, after the messages of constants are folded (:func:`fgraph.inference.fold_constants`); setting
    an attribute of any of them raises. (``plan.derived``, the memo of pure functions of the plan, fills on
    first use.)"""
    shared = {}  # what identical nodes and steps share (NodeTemplate), frozen once: id -> its read-only form
    for step in plan.schedule:
        if type(step) is FrozenStep:  # a step a given schedule repeats
            continue
        key = tuple(map(id, step.rules))  # (the tuples kept in ``shared`` keep these rules, and their ids, alive)
        frozen = shared.get(key)
        if frozen is None:
            frozen = shared[key] = tuple(step.rules)
        step.rules = frozen
        step.__class__ = FrozenStep  # (the same slots: a change of class, not a copy)
        if type(step.binding) is not FrozenStepBinding:  # (a binding shared by identical steps: frozen once)
            step.binding.__class__ = FrozenStepBinding
    plan.schedule.steps = tuple(plan.schedule.steps)
    for node_plan in plan.nodes.values():
        node_plan.clusters = _frozen_once(shared, node_plan.clusters, tuple)
        node_plan.cluster_of = _frozen_once(shared, node_plan.cluster_of, MappingProxyType)
        node_plan.sockets = MappingProxyType(node_plan.sockets)
        if node_plan.marginal_rules:
            node_plan.marginal_rules = MappingProxyType({cluster: tuple(rules) for cluster, rules
                                                         in node_plan.marginal_rules.items()})
        elif node_plan.marginal_rules is not None:
            node_plan.marginal_rules = _NO_MARGINAL_RULES
        node_plan.__class__ = FrozenNodePlan


_NO_MARGINAL_RULES = MappingProxyType({})


def _frozen_once(shared: dict, value, make):
    """``make(value)``, made once for the value shared by identical nodes (:class:`fgraph.factorise.NodeTemplate`)."""
    kept = shared.get(id(value))
    if kept is None:
        kept = shared[id(value)] = (value, make(value))  # (the value kept with it: its id stays its own)
    return kept[1]
