"""Compilation: from a model to a plan in which every message is bound to one rule.

Everything a run needs is decided here, before any number is computed:
the local factorisation of each node, the form constraint on each variable,
the order of updates and the rule for every message. The compiler walks the
schedule twice (a first iteration, then the steady state), propagating the
*family* of every message and marginal, and resolves each rule against the
families it will actually receive. A missing rule, an ambiguous rule or an
initialisation the schedule needs but lacks is reported here, naming the node,
the interface and the variable; so are messages of different families that
meet at a variable, an initial value of the wrong family, and a variable tied
to two interfaces of one node.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


from fgraph import registry
from fgraph.binding import FrozenStepBinding, bind, clamped_message
from fgraph.constraints import Constraints
from fgraph.distributive import distributed_rule
from fgraph.errors import AmbiguousRuleError, DataError, ModelError, RuleNotFoundError, ScheduleError
from fgraph.families.base import Distribution, ExponentialFamily
from fgraph.families.categorical import Categorical, one_hot_violation
from fgraph.families.mixture import Mixture
from fgraph.families.pointmass import PointMass, Uninformative
from fgraph.graph import FactorGraph, Socket
from fgraph.model import Constant, Model
from fgraph.plates import collapse, collapse_sum_product, collapsible, plate_rule_for
from fgraph.schedule import FrozenStep, Input, Schedule, Step, default_order, needed_steps, order_from_pairs

ALGORITHMS = {"bp": "bp", "vmp": "mf"}


def _flat_message(node) -> Uninformative:
    """The message to an input of a normalised conditional factor whose output is unconstrained."""
    return Uninformative(node.batch_shape)


FLAT_MESSAGE = registry.BoundRule(_flat_message, (), Uninformative, True)


@dataclass(slots=True)  # made for every node of a model
class NodePlan:
    """What the engine needs to know about one node."""

    node: object
    sockets: dict  # interface -> Socket
    clusters: list  # tuples of latent interfaces
    cluster_of: dict  # interface -> cluster
    sum_product: bool  # free energy from scale factors (True) or from the average energy (False)
    sum_product_cluster: tuple | None  # the cluster the scale-factor free energy is computed over
    energy: object = None  # BoundRule for the average energy of a variational or structured node
    marginal_rules: dict = None  # cluster -> [first, steady] BoundRule
    operator: str | None = None  # alternative rule set chosen for this node
    copies: int = 1  # plate size when the node's observed plate is collapsed to sufficient statistics
    plate_rule: object = None  # BoundRule for the product over an observed plate (sum-product nodes)


class FrozenNodePlan(NodePlan):
    """The node plan of a compiled plan (:func:`freeze`): read-only."""

    __slots__ = ()

    def __setattr__(self, name, value):
        raise AttributeError(f"a node plan of a compiled plan is not changed (attribute {name!r}); compile the "
                             "model again (fg.compile) for other options")


class InitialValues(Mapping):
    """The initial values of a run, read-only: the user's ``init=`` as the mapping's items, node-declared
    defaults behind them.

    ``get(name)`` and ``[name]`` fall back to ``defaults`` (variable name ->
    distribution: the :attr:`FactorNode.default_initial` values the compiler
    took, see :meth:`_FamilyTracker._init_family`), so the engine starts every
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


def common_family(families: list) -> type:
    """The most specific class every family in the list derives from (for a variadic group)."""
    for cls in families[0].__mro__:
        if all(issubclass(f, cls) for f in families):
            return cls
    return object


def rule_target(node, interface: str) -> str:
    """The registry target of a message: the interface, or its group for a variadic interface."""
    return node.group_of(interface) or interface


_PRODUCT_FAMILIES: dict = {}  # tuple of families -> the family of their product (families that meet)


def family_of_product(families: list, where: str) -> type:
    """The family of the product of messages of the given families.

    ``Distribution`` itself stands for a family the compiler cannot name (a
    mixture of inputs of different classes, e.g. a mixture whose input is
    itself a mixture) and agrees with any other. The answer depends on the
    families alone, so it is worked out once per combination (a graph of 10^4
    variables has a handful); families that do not meet raise every time.
    """
    key = tuple(families)
    family = _PRODUCT_FAMILIES.get(key)
    if family is None:
        family = _PRODUCT_FAMILIES[key] = _family_of_product(families, where)
    return family


def _family_of_product(families: list, where: str) -> type:
    informative = [f for f in families if f is not None and not issubclass(f, Uninformative)]
    if not informative:
        return Uninformative
    if any(issubclass(f, PointMass) for f in informative):
        return PointMass
    mixtures = [f for f in informative if issubclass(f, Mixture)]
    if mixtures:  # a product with a mixture is a mixture of the components' products
        parts = [f.component_family for f in mixtures] + [f for f in informative if not issubclass(f, Mixture)]
        return Mixture.of(family_of_product(parts, where))  # (remembered under its own key)
    kinds = {f.family() if issubclass(f, ExponentialFamily) else f for f in informative} - {Distribution}
    # a family may hold another as members (``member_families``: Gamma densities are GammaShapeLikelihoods)
    wider = [k for k in kinds if all(o is k or o in getattr(k, "member_families", ()) for o in kinds)]
    if len(kinds) > 1 and len(wider) == 1:
        return wider[0]
    if len(kinds) > 1:
        names = ", ".join(sorted(k.__name__ for k in kinds))
        raise ModelError(f"{where}: messages of different families ({names}) meet; they cannot be multiplied")
    return kinds.pop() if kinds else Distribution


def family_name(family: type) -> str:
    """The name of the family a message class belongs to (``UnivariateNormal``, ``mixture of Gamma``)."""
    if issubclass(family, Mixture):
        return f"mixture of {family_name(family.component_family)}"
    if issubclass(family, ExponentialFamily):
        return family.family().__name__
    return family.__name__


def describe_socket(socket: Socket) -> str:
    return f"node {socket.node.name!r} ({type(socket.node).__name__}), interface {socket.interface!r}"


def _must_agree(family) -> bool:
    """Whether a message of this family must agree with the others at its variable (a point mass or a
    flat message multiplies with any)."""
    return family is not None and not issubclass(family, (PointMass, Uninformative))


def _agree(families: list) -> bool:
    key = tuple(families)
    agree = _AGREE.get(key)
    if agree is None:
        try:
            family_of_product([f for f in families if _must_agree(f)], "")
        except ModelError:
            agree = False
        else:
            agree = True
        _AGREE[key] = agree
    return agree


_AGREE: dict = {}  # tuple of families -> whether they can be multiplied
_MEETING: dict = {}  # tuple of families (None: not yet typed) -> the family of the product of those that meet


def check_families_meet(slot, sources: list) -> None:
    """Raise a ModelError unless the messages ``sources`` (``(socket, family)``) at ``slot`` can be multiplied.

    Every message into a variable is a function of the same value, so all
    must be of one family (or a point mass, or flat). The error names the
    variable, the node and interface of every message with its family, and
    how to make them agree.
    """
    sources = [(socket, family) for socket, family in sources if _must_agree(family)]
    if _agree([family for _, family in sources]):
        return
    lines = "\n".join(f"  {describe_socket(socket)} sends {family_name(family)}" for socket, family in sources)
    prior = next(((s, f) for s, f in sources if s.interface == "out"), None)
    clash = None if prior is None else next(((s, f) for s, f in sources if not _agree([prior[1], f])), None)
    if clash is not None:
        socket, family = clash
        fix = (f"Give {slot.name!r} a prior of the family that node {socket.node.name!r} expects on interface "
               f"{socket.interface!r} ({family_name(family)}), or connect {slot.name!r} to an interface that "
               f"takes a {family_name(prior[1])} variable.")
    else:
        fix = f"Connect {slot.name!r} only to interfaces that take variables of one family."
    raise ModelError(
        f"variable {slot.name!r}: messages of different families meet there and cannot be multiplied:\n"
        f"{lines}\n{fix}"
    )


def check_init_family(slot, init: Distribution, sources: list) -> None:
    """Raise a ModelError unless ``init`` is of the family of the messages ``sources`` at ``slot``.

    A point mass fits any family, but a point mass of a categorical variable
    must be one-hot, as every categorical value is.
    """
    sources = [(socket, family) for socket, family in sources if _must_agree(family)]
    if isinstance(init, PointMass):
        categorical = next(((s, f) for s, f in sources if issubclass(f, Categorical)), None)
        violation = one_hot_violation(init.value) if categorical is not None else None
        if violation is not None:
            raise ModelError(
                f"init[{slot.name!r}] is a point mass at {violation}, but {slot.name!r} is categorical "
                f"({describe_socket(categorical[0])} sends Categorical) and a categorical value is one-hot; "
                f"for probabilities over its states pass Categorical(p) instead"
            )
    if not _must_agree(type(init)):
        return
    clash = next(((s, f) for s, f in sources if not _agree([type(init), f])), None)
    if clash is None:
        return
    socket, family = clash
    raise ModelError(
        f"init[{slot.name!r}] is a {family_name(type(init))}, but variable {slot.name!r} is of the family "
        f"{family_name(family)} ({describe_socket(socket)} sends {family_name(family)}); "
        f"pass an initial {family_name(family)} instead"
    )


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
    init = _check_init(model, init or {})
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
        node_plan, recipes = templates.plan(node, graph.node_sockets[node.name])
        nodes[node.name] = node_plan
        sockets = node_plan.sockets
        for interface, recipe in recipes:
            steps.append(Step(sockets[interface], _inputs_from(recipe, sockets)))

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
    for socket in plan.graph.sockets:
        if not socket.clamped:
            continue
        if isinstance(socket.target, Constant):
            constants[socket.index] = clamped_message(socket, socket.target.value, copy_ndim)
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


def _plan_node(node, sockets: dict, constraints: Constraints, algorithm: str, forms: dict) -> NodePlan:
    """The local factorisation of one node and how its free energy is computed."""
    latent = [i for i, s in sockets.items() if not s.clamped]
    spec = constraints.spec_for(node, ALGORITHMS[algorithm])
    clusters = _split_point_masses(constraints.clusters_for(node, latent, ALGORITHMS[algorithm]), sockets, forms)
    multi = sum(len(c) > 1 for c in clusters)
    point_mass = bool(forms) and any(forms.get(sockets[i].slot.name) == "point_mass" for i in latent)
    # a node that defines its own variational clusters (a mixture) stays sum-product inside them
    # even when clamped inputs leave a single interface in its sum-product cluster
    own_clusters = spec == "mf" and hasattr(node, "mean_field_clusters")
    sum_product = bool(latent) and (multi == 1 or (multi == 0 and not point_mass and (spec == "bp" or own_clusters)))
    if not sum_product:
        sum_product_cluster = None
    elif multi == 1:
        sum_product_cluster = next(c for c in clusters if len(c) > 1)
    else:  # one interface left: under "bp" the only cluster, for a node's own clusters the first
        sum_product_cluster = clusters[0]
    return NodePlan(
        node, sockets, clusters, {i: c for c in clusters for i in c}, sum_product, sum_product_cluster,
        marginal_rules={}, operator=constraints.operator_for(node),
    )


class NodeTemplate:
    """What :func:`_plan_node` and :func:`_inputs_for` decide for every node of one signature.

    Both depend on a node's type, which of its interfaces are clamped and its factorisation spec only
    (for an unbatched node, under no form constraint; see :meth:`NodeTemplates.for_node`), so the
    thousands of identical nodes of an unrolled model share the clusters and read their inputs from one
    recipe per latent interface: ``(name, kind, interface, cluster)`` per input, in the order of
    :func:`_inputs_for`.
    """

    __slots__ = ("clusters", "cluster_of", "sum_product", "sum_product_cluster", "recipes")

    def __init__(self, node_plan: NodePlan):
        self.clusters = node_plan.clusters
        self.cluster_of = node_plan.cluster_of
        self.sum_product = node_plan.sum_product
        self.sum_product_cluster = node_plan.sum_product_cluster
        sockets = node_plan.sockets
        self.recipes = tuple(
            (interface, tuple((item.name, item.kind, None if item.socket is None else item.socket.interface,
                               item.cluster)
                              for item in _inputs_for(sockets, interface, self.clusters, self.cluster_of)))
            for interface, socket in sockets.items() if not socket.clamped
        )

    def node_plan(self, node, sockets: dict, operator) -> NodePlan:
        return NodePlan(node, sockets, self.clusters, self.cluster_of, self.sum_product, self.sum_product_cluster,
                        marginal_rules={}, operator=operator)


class NodeTemplates:
    """The plan of every node of one compilation, one :class:`NodeTemplate` per signature.

    Every node is planned here (:meth:`plan`): its local factorisation (:func:`_plan_node`), an observed
    plate collapsed to its sufficient statistics or a plate rule where one applies
    (:mod:`fgraph.plates`), and the inputs of its steps as recipes. The decisions depend on a node's
    signature alone (:meth:`signature`), so the thousands of identical nodes of an unrolled model take
    them from the first such node.
    """

    def __init__(self, constraints: Constraints, algorithm: str, forms: dict, collapse_plates: bool = True):
        self.constraints = constraints
        self.default = ALGORITHMS[algorithm]
        self.algorithm = algorithm
        self.forms = forms
        self.collapse_plates = collapse_plates
        self.templates = {}

    def signature(self, node, sockets: dict):
        """A key that fixes the node's local factorisation and inputs, or ``None`` for a node planned alone.

        Planned alone: a batched node (a plate may be collapsed, and rewires its own sockets), a node
        under a form constraint anywhere in the model, a factorisation given as clusters, and a node
        defining its own mean-field clusters (they may depend on the instance).
        """
        if node.batch_shape or self.forms:
            return None
        spec = self.default if not self.constraints.factorization else self.constraints.spec_for(node, self.default)
        if type(spec) is not str or (spec == "mf" and hasattr(node, "mean_field_clusters")):
            return None
        # the interfaces are the type's own unless it is variadic; which of them are clamped, in their order
        interfaces = node.interfaces if type(node).variadic is not None else None
        return type(node), spec, interfaces, tuple([socket.clamped for socket in sockets.values()])

    def plan(self, node, sockets: dict) -> tuple:
        """``(node plan, recipes)`` of one node: the recipes give the inputs of the step of each latent
        interface (:func:`_inputs_from`)."""
        key = self.signature(node, sockets)
        template = self.templates.get(key) if key is not None else None
        if template is not None:  # an unbatched node like others before it
            return template.node_plan(node, sockets, self.constraints.operator_for(node)), template.recipes
        node_plan = _plan_node(node, sockets, self.constraints, self.algorithm, self.forms)
        if self.collapse_plates and collapsible(node_plan):
            collapse(node_plan)
        elif self.collapse_plates:
            node_plan.plate_rule = plate_rule_for(node_plan)
            if node_plan.plate_rule is not None:
                collapse_sum_product(node_plan)
        template = NodeTemplate(node_plan)
        if key is not None:
            self.templates[key] = template
        return node_plan, template.recipes


def _inputs_from(recipe: tuple, sockets: dict) -> tuple:
    """The inputs of one step from a :class:`NodeTemplate` recipe and the node's own sockets."""
    inputs = []
    for name, kind, interface, cluster in recipe:
        if kind == "cluster":
            inputs.append(Input(name, kind, cluster=cluster, members=tuple(sockets[i] for i in cluster)))
        elif kind == "q":
            socket = sockets[interface]
            inputs.append(Input(name, kind, socket, socket.slot))
        else:
            inputs.append(Input(name, kind, sockets[interface]))
    return tuple(inputs)


def _split_point_masses(clusters: list, sockets: dict, forms: dict) -> list:
    """A variable constrained to a point mass is seen by every node through its marginal.

    Its interface leaves any sum-product cluster and becomes a cluster of its
    own, so rules receive ``q_<interface>`` (the point mass) instead of a
    message (Şenöz et al. 2021: a δ form constraint sends its marginal back).
    """
    if not forms:
        return clusters
    constrained = {i for i, s in sockets.items() if s.slot is not None and forms.get(s.slot.name) == "point_mass"}
    if not constrained:
        return clusters
    split = []
    for cluster in clusters:
        kept = tuple(i for i in cluster if i not in constrained)
        if kept:
            split.append(kept)
        split.extend((i,) for i in cluster if i in constrained)
    return split


def _check_init(model: Model, init: dict) -> dict:
    return {name: _check_initial_value(f"init[{name!r}]", model[name], value) for name, value in init.items()}


def _check_initial_value(what: str, variable, value):
    """``value`` if it can start ``variable`` (a distribution of its event shape, batch ``()`` or its own)."""
    if not isinstance(value, Distribution):
        raise ModelError(f"{what} must be a distribution (e.g. Gamma(1.0, 1.0)), got {type(value).__name__}")
    if value.batch_shape not in ((), variable.batch_shape):
        raise ModelError(f"{what} has batch shape {value.batch_shape}; expected () or {variable.batch_shape}")
    if not isinstance(value, Uninformative) and tuple(value.event_shape) != variable.event_shape:
        raise ModelError(
            f"{what} has event shape {tuple(value.event_shape)}, but {variable.name!r} has event shape "
            f"{variable.event_shape}"
        )
    return value


def _inputs_for(sockets: dict, interface: str, clusters: list, cluster_of: dict) -> tuple:
    inputs = []
    own = cluster_of[interface]
    node = sockets[interface].node
    node_type = type(node)
    if node_type.couples_batch or interface in node_type.reads_own_message:
        inputs.append(Input(f"m_{interface}", "m", socket=sockets[interface]))
    unread = node_type.messages_independent_of.get(node.group_of(interface) or interface)
    if unread:  # interfaces the message does not depend on (by name or variadic group) are no inputs
        unread = {i for i in sockets if i != interface and (node.group_of(i) or i) in unread}
        clusters = [c for c in clusters if not all(i in unread for i in c)]  # a joint marginal stays whole
    for other, socket in sockets.items():
        if other == interface or (unread and other in unread):
            continue
        if socket.clamped:
            inputs.append(Input(f"q_{other}", "clamp", socket=socket))
        elif other in own:
            inputs.append(Input(f"m_{other}", "m", socket=socket))
    for cluster in clusters:
        if cluster is own:
            continue
        if interface in node_type.messages_across_clusters:
            inputs.extend(Input(f"m_{i}", "m", socket=sockets[i]) for i in cluster)
        elif len(cluster) == 1:
            socket = sockets[cluster[0]]
            inputs.append(Input(f"q_{cluster[0]}", "q", slot=socket.slot, socket=socket))
        else:
            members = tuple(sockets[i] for i in cluster)
            inputs.append(Input("q_" + "_".join(cluster), "cluster", cluster=cluster, members=members))
    return tuple(inputs)


def _structured(node_plan) -> bool:
    """Whether a sum-product node is structured: a joint cluster with variational clusters beside it.

    Its free-energy term is read off the scales of its cluster's messages,
    which hold the other clusters' marginals of the moment they were
    computed; the average energy of the joint marginal corrects the term when
    those marginals have moved on since (see ``Engine._cluster_energy_change``).
    A node that computes its cluster's evidence itself (a mixture) needs none.
    """
    return (len(node_plan.clusters) > 1 and len(node_plan.sum_product_cluster) > 1
            and getattr(node_plan.node, "cluster_log_evidence", None) is None)


def _has_variational_energy(node_plan) -> bool:
    """Whether an average energy takes this node's latent interfaces as marginals of any family.

    A deterministic node (an addition) has none: at most one for the number its
    factor is when every interface is known.
    """
    node = node_plan.node
    families = {f"q_{i}": PointMass if s.clamped else Distribution for i, s in node_plan.sockets.items()}
    try:
        registry.resolve(registry.ENERGY, type(node), None, node.group_inputs(families, common_family),
                         f"node {node.name!r}", node_plan.operator)
    except LookupError:
        return False
    return True


class _FamilyTracker:
    """Propagates message families through the schedule, as the engine will compute them."""

    def __init__(self, plan: Plan):
        self.plan = plan
        self.outbound = {}  # socket index -> family
        self.init_used = []  # names of the variables whose initial values stood in for a family, in order

    def where(self, socket: Socket) -> str:
        return describe_socket(socket)

    def sources(self, slot, sockets=None) -> list:
        """``(socket, family)`` of the messages already typed among ``sockets`` (default: all) of ``slot``."""
        sockets = slot.sockets if sockets is None else sockets
        return [(s, self.outbound[s.index]) for s in sockets if s.index in self.outbound]

    def _product(self, slot, sockets) -> type:
        families = tuple(self.outbound.get(s.index) for s in sockets)
        family = _MEETING.get(families)
        if family is None:  # the check and the product depend on the families alone: once per combination
            check_families_meet(slot, self.sources(slot, sockets))
            family = _MEETING[families] = family_of_product(families, f"variable {slot.name!r}")
        return family

    def _init_family(self, slot, needed_by: Socket, what: str):
        init = self.plan.init.get(slot.name)
        if init is None:
            init = self._declared_init(slot)
        if init is not None:
            check_init_family(slot, init, self.sources(slot))
            self.init_used.append(slot.name)
            return type(init)
        hint = ""
        deterministic = sorted({
            s.node.name for s in slot.sockets + [needed_by]
            if not self.plan.nodes[s.node.name].sum_product and not _has_variational_energy(self.plan.nodes[s.node.name])
        })
        if deterministic:
            hint = (f"; note that node(s) {deterministic} have no variational (mean-field) rules: "
                    "give them factorization 'bp' in constraints")
        raise ScheduleError(
            f"{self.where(needed_by)} needs {what} of variable {slot.name!r} before the schedule has computed it; "
            f"pass init={{'{slot.name}': <distribution>}} to fg.infer, or reorder the schedule{hint}"
        )

    def _declared_init(self, slot):
        """The initial value a node type declares for ``slot`` (``default_initial`` of the first node, in
        socket order, that has one for the interface the variable is on), kept in ``plan.default_init``;
        ``None`` if none does."""
        for socket in slot.sockets:
            declared = type(socket.node).default_initial.get(socket.interface)
            if declared is None:
                continue
            value = declared if isinstance(declared, Distribution) else declared(slot.variable)
            where = f"the initial value node {socket.node.name!r} ({type(socket.node).__name__}) declares for " \
                    f"its interface {socket.interface!r} (variable {slot.name!r})"
            self.plan.default_init[slot.name] = _check_initial_value(where, slot.variable, value)
            return value
        return None

    def inbound(self, socket: Socket) -> type:
        slot = socket.slot
        if socket.clamped:
            return PointMass
        if slot.kind == "dangling":
            return Uninformative
        if slot.kind == "edge":
            family = self.outbound.get(slot.partner(socket).index)
            return family if family is not None else self._init_family(slot, socket, "the incoming message")
        own_reduced = socket.reduced
        sources, families = [], []
        for other in slot.sockets:
            if other is not socket or own_reduced:
                family = self.outbound.get(other.index)
                if family is None:
                    return self._init_family(slot, socket, "the incoming message")
                sources.append(other)
                families.append(family)
        family = _MEETING.get(tuple(families))
        return family if family is not None else self._product(slot, sources)

    def marginal(self, slot, needed_by: Socket) -> type:
        if slot.kind == "observed":
            return PointMass
        if self.plan.forms.get(slot.name) == "point_mass":
            families = [self.outbound.get(s.index) for s in slot.sockets]
            if any(f is None for f in families):
                self._init_family(slot, needed_by, "the marginal")
            return PointMass
        if any(s.index not in self.outbound for s in slot.sockets):
            return self._init_family(slot, needed_by, "the marginal")
        return self._product(slot, slot.sockets)

    def inputs(self, node_plan: NodePlan, inputs, needed_by: Socket, iteration: int) -> dict:
        families = {}
        outbound = self.outbound
        for item in inputs:
            kind = item.kind
            if kind == "clamp":
                families[item.name] = PointMass
            elif kind == "m":
                socket = item.socket
                slot = socket.slot
                if not socket.clamped and slot.kind == "edge":  # the common case, inline: the partner's family
                    first, second = slot.sockets
                    family = outbound.get((second if socket is first else first).index)
                    if family is not None:
                        families[item.name] = family
                        continue
                families[item.name] = self.inbound(socket)
            elif kind == "q":
                families[item.name] = self.marginal(item.slot, needed_by)
            else:
                families[item.name] = self.cluster(node_plan, item.cluster, needed_by, iteration)
        return families

    def cluster(self, node_plan: NodePlan, cluster: tuple, needed_by: Socket, iteration: int) -> type:
        sockets = node_plan.sockets
        own_inputs = [Input(f"m_{i}", "m", socket=sockets[i]) for i in cluster]
        other = _inputs_for(sockets, cluster[0], node_plan.clusters, node_plan.cluster_of)
        other = [i for i in other if i.kind != "m"]
        families = node_plan.node.group_inputs(self.inputs(node_plan, own_inputs + other, needed_by, iteration), common_family)
        try:
            bound = registry.resolve(
                registry.MARGINAL, type(node_plan.node), cluster, families, f"node {node_plan.node.name!r}",
                node_plan.operator,
            )
        except RuleNotFoundError as error:
            raise _nothing_attached(error, node_plan, families) from None
        rules = node_plan.marginal_rules.setdefault(cluster, [None, None])
        rules[min(iteration, 1)] = bound
        return bound.output_for(families)


def _nothing_attached(error: Exception, node_plan: NodePlan, families: dict) -> Exception:
    """``error`` (no rule for these input families), saying so when an input is the flat message of a variable
    that no other factor is connected to: the node's rules need what the rest of the graph would send."""
    if not isinstance(error, RuleNotFoundError):
        return error
    for name, family in families.items():
        socket = node_plan.sockets.get(name[2:]) if name.startswith("m_") else None
        if family is Uninformative and socket is not None and not socket.clamped and socket.slot.kind == "dangling":
            variable, node = socket.slot.name, node_plan.node
            return RuleNotFoundError(
                f"{error}\nNothing but node {node.name!r} is connected to variable {variable!r}, so the message "
                f"into {name[2:]!r} is flat (Uninformative), and {type(node).__name__} has no rule taking a flat "
                f"message here. Connect the factors that observe or use {variable!r} (a likelihood of data, "
                "emissions)."
            )
    return error


def resolve_message_rule(node, target: str, families: dict, operator) -> registry.BoundRule:
    """The rule for one message, with two fallbacks when a node has no rule of its own for its inputs.

    A mixture input is distributed over its components (:mod:`fgraph.distributive`).
    A point-mass input message ``m_x`` (e.g. from the branch of a mixture whose
    output is observed) is handed to the rule for a clamped ``x`` (``q_x``): a
    sum-product rule against δ(x − v) is the rule for x clamped at v, and the
    engine adds the message's scale as for any other incoming message.
    """
    try:
        return registry.resolve(registry.MESSAGE, type(node), target, families, f"node {node.name!r}", operator)
    except RuleNotFoundError as not_found:
        if type(node).rules_handle_scales:
            raise
        mixtures = [name for name, family in families.items()
                    if name.startswith("m_") and isinstance(family, type) and issubclass(family, Mixture)]
        point_masses = [name for name, family in families.items()
                        if name.startswith("m_") and isinstance(family, type) and issubclass(family, PointMass)]
        if not mixtures and not point_masses:
            raise
        error = not_found
    if mixtures:
        name = mixtures[0]
        component = dict(families, **{name: families[name].component_family})
        inner = resolve_message_rule(node, target, component, operator)  # further mixture inputs, one at a time
        return distributed_rule(inner, name, inner.output_for(component))
    clamped = {("q_" + name[2:] if name in point_masses else name): family for name, family in families.items()}
    try:
        inner = resolve_message_rule(node, target, clamped, operator)
    except RuleNotFoundError:
        raise error from None  # report the inputs the node actually has
    return _reading_point_masses_as_clamped(inner, point_masses, inner.output_for(clamped))


def _reading_point_masses_as_clamped(inner: registry.BoundRule, names: list, output: type) -> registry.BoundRule:
    """``inner`` (written for clamped ``q_x``) called with the point-mass messages ``m_x`` in their place.

    A clamped value is validated when it is bound; a point-mass message is
    not data, so those of its inputs that stand for a categorical variable
    (``one_hot_inputs``: input name -> variable name, filled by the compiler
    once the variables' families are known) are checked to be one-hot here.
    """
    originals = {"q_" + name[2:]: name for name in names}
    one_hot_inputs = {}

    def with_point_masses(node=None, index=None, **inputs):
        for name, variable in one_hot_inputs.items():
            violation = one_hot_violation(inputs[name].value)
            if violation is not None:
                raise DataError(
                    f"node {node.name!r} ({type(node).__name__}), interface {name[2:]!r} receives a point mass at "
                    f"{violation} for the categorical variable {variable!r} (e.g. the observed output of a mixture "
                    "it feeds); an observed categorical state must be one-hot"
                )
        return inner({clamped: inputs[originals.get(clamped, clamped)] for clamped in inner.input_names}, node, index)

    with_point_masses.__qualname__ = f"point_masses_as_clamped[{inner.name}]"
    with_point_masses.__module__ = "fgraph.plan"
    with_point_masses.point_mass_inputs = tuple(names)
    with_point_masses.one_hot_inputs = one_hot_inputs
    input_names = tuple(originals.get(name, name) for name in inner.input_names)
    return registry.BoundRule(with_point_masses, input_names, output, True, True)


def _check_point_mass_messages(plan: Plan, tracker: _FamilyTracker) -> None:
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
                families = [f for _, f in tracker.sources(item.socket.slot) if _must_agree(f)]
                family = family_of_product(families, f"variable {item.socket.slot.name!r}")
                if issubclass(family, Categorical):
                    one_hot_inputs[item.name] = item.socket.slot.name


def _resolve(plan: Plan) -> None:
    """Type every message and bind its rule, then check the plan and bind the nodes' energies: the passes
    below, in order, sharing one :class:`_FamilyTracker` (the family of every message and marginal)."""
    tracker = _FamilyTracker(plan)
    per_message_rules = _bind_message_rules(plan, tracker)
    _check_every_message_is_updated(plan, tracker)
    _check_families_meet(plan, tracker)
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
                        raise _nothing_attached(error, node_plan, families) from None
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
        if not node_plan.sum_product or _structured(node_plan):
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
    last pass, after the messages of constants are folded (:func:`fgraph.engine.fold_constants`); setting
    an attribute of any of them raises. (``plan.derived``, the memo of pure functions of the plan, fills on
    first use.)"""
    for step in plan.schedule:
        if type(step) is FrozenStep:  # a step a given schedule repeats
            continue
        step.rules = tuple(step.rules)
        step.__class__ = FrozenStep  # (the same slots: a change of class, not a copy)
        step.binding.__class__ = FrozenStepBinding
    plan.schedule.steps = tuple(plan.schedule.steps)
    for node_plan in plan.nodes.values():
        node_plan.clusters = tuple(node_plan.clusters)
        node_plan.cluster_of = MappingProxyType(node_plan.cluster_of)
        node_plan.sockets = MappingProxyType(node_plan.sockets)
        if node_plan.marginal_rules is not None:
            node_plan.marginal_rules = MappingProxyType({cluster: tuple(rules) for cluster, rules
                                                         in node_plan.marginal_rules.items()})
        node_plan.__class__ = FrozenNodePlan
