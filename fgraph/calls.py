"""How the engine calls a rule: its arguments fetched from the run's state, in the order the rule takes them.

A :class:`Call` is made once per (step, rule) by the compiler (:mod:`fgraph.binding`) and for each node's
average energy; running it reads the messages, marginals and clamped values it needs from an engine
(:class:`fgraph.engine.Engine`) and calls the function.
"""
from __future__ import annotations

import functools


class Call:
    """A rule called with its arguments fetched from the engine's state: the one way rules are called.

    ``fetchers`` holds one ``(kind, source)`` per argument, in the order the
    function takes them: ``CLAMPED`` the point mass on a clamped socket,
    ``MESSAGE`` the message into a socket, ``MARGINAL`` the marginal of the
    socket's variable, ``CLUSTER`` the joint marginal of ``(node plan,
    cluster)``, ``GROUP`` a variadic group, whose source is the tuple of its
    members' ``(kind, source)`` (the rule receives the tuple of their
    values). Positional when the function's own first parameters are its
    inputs, by keyword otherwise (a wrapper taking ``**inputs``); the node and
    the index of a variadic target are passed by keyword when the rule takes
    them. Only the inputs the rule takes are fetched.
    """

    __slots__ = ("function", "registered", "fetchers", "names", "extra")

    CLAMPED, MESSAGE, MARGINAL, CLUSTER, GROUP = range(5)
    KINDS = {"clamp": CLAMPED, "m": MESSAGE, "q": MARGINAL, "cluster": CLUSTER}

    @classmethod
    def of(cls, bound, sources: dict, node, index: int | None = None, function=None) -> "Call":
        """``bound`` fed from ``sources`` (input name -> ``(kind, source)``); ``function`` replaces the rule's
        function (a function of the same inputs, e.g. an energy's sum over a plate)."""
        call = cls()
        call.function = function or bound.function
        call.registered = bound.function  # the function the registry holds (``function`` may stand in for it)
        names, positional = argument_order(bound.function, bound.input_names)
        call.fetchers = tuple(sources[name] for name in names)
        call.names = None if positional else names
        extra = {}
        if bound.wants_node:
            extra["node"] = node
        if bound.wants_index:
            extra["index"] = index
        call.extra = extra
        return call

    def run(self, state):
        """The rule's value on its inputs as ``state`` (a :class:`~fgraph.run_state.RunState`) holds them."""
        arguments = [_fetch(state, kind, source) for kind, source in self.fetchers]
        if self.names is not None:
            return self.function(**dict(zip(self.names, arguments)), **self.extra)
        if self.extra:
            return self.function(*arguments, **self.extra)
        return self.function(*arguments)


@functools.lru_cache(maxsize=4096)
def argument_order(function, input_names: tuple) -> tuple:
    """``(names, positional)``: the inputs in the order ``function`` takes them and whether it takes them
    positionally (its own first parameters), else by keyword (a wrapper taking ``**inputs``). Found once per
    rule: the steps of thousands of identical nodes call the same rules."""
    code = getattr(function, "__code__", None)
    order = code.co_varnames[:len(input_names)] if code is not None else ()
    positional = sorted(order) == sorted(input_names)
    return (tuple(order) if positional else tuple(input_names)), positional


def _fetch(state, kind: int, source):
    """One argument of a :class:`Call`."""
    if kind == Call.MESSAGE:
        return state.inbound(source)
    if kind == Call.MARGINAL:
        return state.socket_marginal(source)
    if kind == Call.CLAMPED:
        return state.clamped[source.index]
    if kind == Call.CLUSTER:
        return state.cluster_marginal(*source)
    return tuple(_fetch(state, member_kind, member) for member_kind, member in source)


def grouped_sources(node, sources: dict) -> dict:
    """``sources`` (input name -> ``(kind, source)``) with the members of a variadic group collected into one
    entry ``(GROUP, ((kind, source), ...))`` under the group's name, in the group's order."""
    if type(node).variadic is None:
        return sources
    grouped = node.group_inputs({name: name for name in sources}, tuple)  # the grouping: from the names alone
    return {key: (Call.GROUP, tuple(sources[member] for member in value)) if isinstance(value, tuple)
            else sources[key] for key, value in grouped.items()}
