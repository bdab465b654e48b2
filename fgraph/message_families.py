"""Typing, the compiler's second pass: the family of every message and marginal, and the rule of each message.

A message's family follows from the families of its inputs and the rule the registry binds to them, so the
compiler walks the schedule as the engine will run it (:class:`FamilyTracker`), typing each message from
what the steps before it wrote (or from an initial value) and resolving its rule
(:func:`resolve_message_rule`, with its two fallbacks: a mixture input distributed over its components, a
point-mass message read as a clamped value). Here too the checks that depend on families alone: messages
that meet at a variable must multiply (:func:`check_families_meet`), an initial value must be of its
variable's family (:func:`check_init_family`) and shape (:func:`check_initial_value`).
"""
from __future__ import annotations

from fgraph import registry
from fgraph.distributive import distributed_rule
from fgraph.errors import DataError, ModelError, RuleNotFoundError, ScheduleError
from fgraph.factorise import NodePlan, inputs_for
from fgraph import families
from fgraph.families.base import Distribution, ExponentialFamily
from fgraph.families.categorical import Categorical, one_hot_violation
from fgraph.families.mixture import Mixture
from fgraph.families.pointmass import PointMass, Uninformative
from fgraph.graph import Socket
from fgraph.model import Model, Variable
from fgraph.node import FactorNode
from fgraph.schedule import Input


def _flat_message(node) -> Uninformative:
    """The message to an input of a normalised conditional factor whose output is unconstrained."""
    return Uninformative(node.batch_shape)


FLAT_MESSAGE = registry.BoundRule(_flat_message, (), Uninformative, True)


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


def must_agree(family) -> bool:
    """Whether a message of this family must agree with the others at its variable (a point mass or a
    flat message multiplies with any)."""
    return family is not None and not issubclass(family, (PointMass, Uninformative))


def _agree(families: list) -> bool:
    key = tuple(families)
    agree = _AGREE.get(key)
    if agree is None:
        try:
            family_of_product([f for f in families if must_agree(f)], "")
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
    sources = [(socket, family) for socket, family in sources if must_agree(family)]
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
    sources = [(socket, family) for socket, family in sources if must_agree(family)]
    if isinstance(init, PointMass):
        categorical = next(((s, f) for s, f in sources if issubclass(f, Categorical)), None)
        violation = one_hot_violation(init.value) if categorical is not None else None
        if violation is not None:
            raise ModelError(
                f"init[{slot.name!r}] is a point mass at {violation}, but {slot.name!r} is categorical "
                f"({describe_socket(categorical[0])} sends Categorical) and a categorical value is one-hot; "
                f"for probabilities over its states pass Categorical(p) instead"
            )
    if not must_agree(type(init)):
        return
    clash = next(((s, f) for s, f in sources if not _agree([type(init), f])), None)
    if clash is None:
        return
    socket, family = clash
    raise ModelError(
        f"init[{slot.name!r}] is a {family_name(type(init))}, but variable {slot.name!r} is of the family "
        f"{family_name(family)} ({describe_socket(socket)} sends {family_name(family)}); "
        f"pass an initial {family_name(family)} instead, e.g. {MissingInit(slot, socket, '', family).example()}"
    )


def check_init(model: Model, init: dict) -> dict:
    return {name: check_initial_value(f"init[{name!r}]", model[name], value) for name, value in init.items()}


def check_initial_value(what: str, variable, value):
    """``value`` if it can start ``variable`` (a distribution of its event shape, batch ``()`` or its own)."""
    if not isinstance(value, Distribution):
        raise ModelError(f"{what} must be a distribution (e.g. fg.Gamma(1.0, 1.0)), got {_what_was_given(value)}")
    if value.batch_shape not in ((), variable.batch_shape):
        raise ModelError(f"{what} has batch shape {value.batch_shape}; expected () (one value for every element) "
                         f"or {variable.batch_shape} (the plate of {variable.name!r})")
    if not isinstance(value, Uninformative) and tuple(value.event_shape) != variable.event_shape:
        raise ModelError(
            f"{what} has event shape {tuple(value.event_shape)}, but {variable.name!r} has event shape "
            f"{variable.event_shape}"
        )
    return value


def _what_was_given(value) -> str:
    """``value`` named for an error that expected a distribution: a factor constructor, a node type or a
    variable (the families and the factors of fgraph.nodes share names) is said to be one, with its fix."""
    name = getattr(value, "__name__", None)
    if isinstance(value, type) and issubclass(value, Distribution):
        return f"the class fg.{name} itself; pass an instance, e.g. fg.{name}(...) with its parameters"
    if isinstance(value, Variable):
        return (f"the variable {value.name!r} of the model; an initial value is a distribution over it "
                "(from fgraph.families, e.g. fg.Gamma(1.0, 1.0)), not a variable")
    if isinstance(value, type) and issubclass(value, FactorNode) or (
            callable(value) and name and getattr(value, "__module__", "").startswith("fgraph.nodes")):
        family = getattr(families, name, None)
        instead = f"fg.{name}(...)" if isinstance(family, type) and issubclass(family, Distribution) else "fg.Gamma(1.0, 1.0)"
        return (f"fgraph.nodes.{name}, a factor (it adds a variable and its factor to a model); an initial value "
                f"is a distribution from fgraph.families (fg.*), e.g. {instead}")
    return type(value).__name__


def has_variational_energy(node_plan) -> bool:
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


def declared_family(slot) -> type | None:
    """The family the messages at ``slot`` will have, from the return annotations of the rules registered for
    its sockets' interfaces (its prior's ``out`` first), or ``None`` if they do not agree on one.

    A guess made before any message at ``slot`` is typed, to walk on past a missing initial value; a message
    rule's output family is that of the variable on its interface, whatever the input families."""
    sockets = sorted((s for s in slot.sockets if not s.clamped), key=lambda s: s.interface != "out")
    for socket in sockets:
        node = socket.node
        outputs = {f for f in registry.declared_outputs(registry.MESSAGE, type(node), rule_target(node, socket.interface))
                   if must_agree(f) and not issubclass(f, Mixture) and f is not Distribution}
        if len(outputs) > 1:
            outputs = {f.family() if issubclass(f, ExponentialFamily) else f for f in outputs}
        if len(outputs) == 1:
            return outputs.pop()
    return None


#: family -> (label, example) of an initial value, each a function of the variable's event shape
_INIT_EXAMPLES = {
    "UnivariateNormal": (lambda e: "Normal", lambda e: "fg.NormalMeanVariance(0.0, 1.0)"),
    "MultivariateNormal": (lambda e: f"MvNormal(dim {e[0]})",
                           lambda e: f"fg.MvNormalMeanCovariance(np.zeros({e[0]}), np.eye({e[0]}))"),
    "Gamma": (lambda e: "Gamma", lambda e: "fg.Gamma(1.0, 1.0)"),
    "GammaShapeLikelihood": (lambda e: "Gamma", lambda e: "fg.Gamma(1.0, 1.0)"),
    "InverseGamma": (lambda e: "InverseGamma", lambda e: "fg.InverseGamma(1.0, 1.0)"),
    "Beta": (lambda e: "Beta", lambda e: "fg.Beta(1.0, 1.0)"),
    "Bernoulli": (lambda e: "Bernoulli", lambda e: "fg.Bernoulli(0.5)"),
    "Categorical": (lambda e: f"Categorical({e[0]} states)", lambda e: f"fg.Categorical(np.full({e[0]}, 1 / {e[0]}))"),
    "Dirichlet": (lambda e: f"Dirichlet({e[0]} states)", lambda e: f"fg.Dirichlet(np.ones({e[0]}))"),
    "MatrixDirichlet": (lambda e: f"MatrixDirichlet{e}", lambda e: f"fg.MatrixDirichlet(np.ones({e}))"),
    "Wishart": (lambda e: f"Wishart({e[0]}×{e[0]})", lambda e: f"fg.Wishart({e[0] + 1}.0, np.eye({e[0]}))"),
}


class MissingInit:
    """A variable the schedule needs (its incoming message or marginal, ``what``, for the step of
    ``needed_by``) before computing it, with no initial value; ``family`` that of its messages, if known."""

    def __init__(self, slot, needed_by: Socket, what: str, family: type | None):
        self.slot, self.needed_by, self.what, self.family = slot, needed_by, what, family

    def _label_and_example(self) -> tuple:
        event = tuple(self.slot.variable.event_shape)
        if self.family is None:
            return "family of its messages", "<distribution>"
        name = family_name(self.family)
        known = _INIT_EXAMPLES.get(name)
        try:
            return known[0](event), known[1](event)
        except (TypeError, IndexError):  # a family without an example, or not of the event rank it expects
            return name, f"fg.{name}(...)"

    def describe(self) -> str:
        """``Gamma, plate (3,), event ()``: what an initial value of this variable is."""
        variable = self.slot.variable
        return f"{self._label_and_example()[0]}, plate {tuple(variable.batch_shape)}, event {tuple(variable.event_shape)}"

    def example(self) -> str:
        return self._label_and_example()[1]


class FamilyTracker:
    """Propagates message families through the schedule, as the engine will compute them."""

    def __init__(self, plan):
        self.plan = plan  # the fgraph.plan.Plan being compiled
        self.outbound = {}  # socket index -> family
        self.init_used = []  # names of the variables whose initial values stood in for a family, in order
        self.missing = {}  # variable name -> MissingInit: needed before computed, and no initial value given

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
        # No initial value: note the need and walk on with the family the variable's rules declare, so that
        # one error (missing_init_error) names every initial value the schedule needs, not only the first.
        need = self.missing.get(slot.name)
        if need is None:
            need = self.missing[slot.name] = MissingInit(slot, needed_by, what, declared_family(slot))
        if need.family is None:  # nothing to walk on with: report what is known so far
            raise self.missing_init_error()
        return need.family

    def missing_init_error(self) -> ScheduleError:
        """One error naming every variable the schedule needed before computing it (:attr:`missing`), each
        with its family (that of the messages the walk typed at it, else the one its rules declare), its
        plate and event shapes, and a ready-to-paste ``init={...}``."""
        needs = list(self.missing.values())
        for need in needs:
            typed = [f for _, f in self.sources(need.slot) if must_agree(f) and not issubclass(f, Mixture)]
            try:
                family = family_of_product(typed, f"variable {need.slot.name!r}") if typed else None
            except ModelError:
                family = None
            if family is not None and family is not Distribution:
                need.family = family
        deterministic = sorted({
            s.node.name for need in needs for s in need.slot.sockets + [need.needed_by]
            if not self.plan.nodes[s.node.name].sum_product and not has_variational_energy(self.plan.nodes[s.node.name])
        })
        hint = "" if not deterministic else (
            f"; note that node(s) {deterministic} have no variational (mean-field) rules: "
            "give them factorization 'bp' in constraints")
        example = "init={" + ", ".join(f"{n.slot.name!r}: {n.example()}" for n in needs) + "}"
        if len(needs) == 1:
            need = needs[0]
            return ScheduleError(
                f"{self.where(need.needed_by)} needs {need.what} of variable {need.slot.name!r} ({need.describe()}) "
                f"before the schedule has computed it; pass {example} to fg.infer, or reorder the schedule{hint}"
            )
        lines = "\n".join(f"  {n.slot.name!r} ({n.describe()}): {n.what}, for {self.where(n.needed_by)}" for n in needs)
        return ScheduleError(
            f"the schedule needs initial values for {len(needs)} variables before it computes them:\n{lines}\n"
            f"pass them all, e.g. {example}, to fg.infer, or reorder the schedule{hint}"
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
            self.plan.default_init[slot.name] = check_initial_value(where, slot.variable, value)
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
        """Input name -> the family it receives, for ``inputs`` (:class:`~fgraph.schedule.Input`) of a step of
        ``node_plan``'s node."""
        families = {}
        outbound = self.outbound
        row = node_plan.row
        for item in inputs:
            kind = item.kind
            if kind == "clamp":
                families[item.name] = PointMass
            elif kind == "m":
                socket = row[item.position]
                slot = socket.slot
                if not socket.clamped and slot.kind == "edge":  # the common case, inline: the partner's family
                    first, second = slot.sockets
                    family = outbound.get((second if socket is first else first).index)
                    if family is not None:
                        families[item.name] = family
                        continue
                families[item.name] = self.inbound(socket)
            elif kind == "q":
                families[item.name] = self.marginal(row[item.position].slot, needed_by)
            else:
                families[item.name] = self.cluster(node_plan, item.cluster, needed_by, iteration)
        return families

    def cluster(self, node_plan: NodePlan, cluster: tuple, needed_by: Socket, iteration: int) -> type:
        sockets = node_plan.sockets
        position = {name: k for k, name in enumerate(sockets)}
        own_inputs = [Input(f"m_{i}", "m", position[i]) for i in cluster]
        other = inputs_for(sockets, cluster[0], node_plan.clusters, node_plan.cluster_of)
        other = [i for i in other if i.kind != "m"]
        families = node_plan.node.group_inputs(self.inputs(node_plan, own_inputs + other, needed_by, iteration), common_family)
        try:
            bound = registry.resolve(
                registry.MARGINAL, type(node_plan.node), cluster, families, f"node {node_plan.node.name!r}",
                node_plan.operator,
            )
        except RuleNotFoundError as error:
            raise nothing_attached(error, node_plan, families) from None
        rules = node_plan.marginal_rules.setdefault(cluster, [None, None])
        rules[min(iteration, 1)] = bound
        return bound.output_for(families)


def nothing_attached(error: Exception, node_plan: NodePlan, families: dict) -> Exception:
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
    with_point_masses.__module__ = "fgraph.message_families"
    with_point_masses.point_mass_inputs = tuple(names)
    with_point_masses.one_hot_inputs = one_hot_inputs
    input_names = tuple(originals.get(name, name) for name in inner.input_names)
    return registry.BoundRule(with_point_masses, input_names, output, True, True)
