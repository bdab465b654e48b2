"""How the engine calls a rule: its arguments fetched from the run's state, in the order the rule takes them.

A :class:`Call` names its inputs by their position among a node's sockets (``NodePlan.row``), never by the
sockets themselves, so one call serves every node of a signature: the compiler makes it once per node
template and rules (:mod:`fgraph.binding`), and once per node for the average energies. Running it on a
node plan reads the messages, marginals and clamped values it needs from the run's state
(:class:`fgraph.run_state.RunState`) and calls the function.
"""
from __future__ import annotations

import functools


class Call:
    """A rule called with its arguments fetched from the engine's state: the one way rules are called.

    ``fetchers`` holds one ``(kind, where)`` per argument, in the order the
    function takes them, ``where`` a position in the node's sockets
    (``NodePlan.row``): ``CLAMPED`` the point mass on a clamped socket,
    ``MESSAGE`` the message into a socket, ``MARGINAL`` the marginal of the
    socket's variable; ``CLUSTER`` the joint marginal of a cluster, ``where``
    the cluster (its interfaces); ``GROUP`` a variadic group, ``where`` the
    tuple of its members' ``(kind, where)`` (the rule receives the tuple of
    their values). Positional when the function's own first parameters are
    its inputs, by keyword otherwise (a wrapper taking ``**inputs``); the node
    and the index of a variadic target are passed by keyword when the rule
    takes them. Only the inputs the rule takes are fetched.
    """

    __slots__ = ("function", "registered", "fetchers", "names", "extra", "wants_node")

    CLAMPED, MESSAGE, MARGINAL, CLUSTER, GROUP = range(5)
    KINDS = {"clamp": CLAMPED, "m": MESSAGE, "q": MARGINAL, "cluster": CLUSTER}

    @classmethod
    def of(cls, bound, sources: dict, index: int | None = None, function=None) -> "Call":
        """``bound`` fed from ``sources`` (input name -> ``(kind, where)``); ``function`` replaces the rule's
        function (a function of the same inputs, e.g. an energy's sum over a plate)."""
        call = cls()
        call.function = function or bound.function
        call.registered = bound.function  # the function the registry holds (``function`` may stand in for it)
        names, positional = argument_order(bound.function, bound.input_names)
        call.fetchers = tuple(sources[name] for name in names)
        call.names = None if positional else names
        call.wants_node = bound.wants_node
        call.extra = {"index": index} if bound.wants_index else {}
        return call

    def run(self, state, node_plan):
        """The rule's value on the inputs of the node of ``node_plan`` as ``state`` (a
        :class:`~fgraph.run_state.RunState`) holds them."""
        arguments = [_fetch(state, node_plan, kind, where) for kind, where in self.fetchers]
        if self.names is None and not self.extra and not self.wants_node:  # (most rules: the inputs alone)
            return self.function(*arguments)
        extra = self.extra_for(node_plan)
        if self.names is not None:
            return self.function(**dict(zip(self.names, arguments)), **extra)
        return self.function(*arguments, **extra)

    def sources(self, node_plan) -> tuple:
        """``(kind, source)`` per argument for the node of ``node_plan``, the source the socket (``CLAMPED``,
        ``MESSAGE``, ``MARGINAL``), ``(node plan, cluster)`` (``CLUSTER``) or the members' ``(kind, source)``
        (``GROUP``); for code written per step (:mod:`fgraph.codegen`, :mod:`fgraph.float_source`)."""
        return tuple((kind, _source(node_plan, kind, where)) for kind, where in self.fetchers)

    def extra_for(self, node_plan) -> dict:
        """The keyword arguments beside the inputs for the node of ``node_plan`` (its node, a variadic index)."""
        return self.extra if not self.wants_node else {**self.extra, "node": node_plan.node}


@functools.lru_cache(maxsize=4096)
def argument_order(function, input_names: tuple) -> tuple:
    """``(names, positional)``: the inputs in the order ``function`` takes them and whether it takes them
    positionally (its own first parameters), else by keyword (a wrapper taking ``**inputs``). Found once per
    rule: the steps of thousands of identical nodes call the same rules."""
    code = getattr(function, "__code__", None)
    order = code.co_varnames[:len(input_names)] if code is not None else ()
    positional = sorted(order) == sorted(input_names)
    return (tuple(order) if positional else tuple(input_names)), positional


def _fetch(state, node_plan, kind: int, where):
    """One argument of a :class:`Call`."""
    if kind == Call.MESSAGE:
        return state.inbound(node_plan.row[where])
    if kind == Call.MARGINAL:
        return state.socket_marginal(node_plan.row[where])
    if kind == Call.CLAMPED:
        return state.clamped[node_plan.row[where].index]
    if kind == Call.CLUSTER:
        return state.cluster_marginal(node_plan, where)
    return tuple(_fetch(state, node_plan, member_kind, member) for member_kind, member in where)


def _source(node_plan, kind: int, where):
    if kind == Call.CLUSTER:
        return node_plan, where
    if kind == Call.GROUP:
        return tuple((member_kind, _source(node_plan, member_kind, member)) for member_kind, member in where)
    return node_plan.row[where]


def grouped_sources(node, sources: dict) -> dict:
    """``sources`` (input name -> ``(kind, where)``) with the members of a variadic group collected into one
    entry ``(GROUP, ((kind, where), ...))`` under the group's name, in the group's order."""
    if type(node).variadic is None:
        return sources
    grouped = node.group_inputs({name: name for name in sources}, tuple)  # the grouping: from the names alone
    return {key: (Call.GROUP, tuple(sources[member] for member in value)) if isinstance(value, tuple)
            else sources[key] for key, value in grouped.items()}
