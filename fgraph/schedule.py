"""Schedules: the ordered list of message updates one iteration performs.

A :class:`Schedule` is a list of :class:`Step` objects, each the update of the
message out of one node interface by one bound rule. It prints as a numbered
list, and a user may pass their own order to ``fg.infer(schedule=...)`` as a
list of ``(node name, interface)`` pairs.

The default order: every message that a sum-product rule reads (an ``m_``
input) is computed before the message that reads it (a topological sort of
the message-dependency graph, with loops broken where a depth-first search
meets them); among independent messages, those into the same variable are
kept together in the order variables were declared, so that a mean-field
iteration is a sweep of coordinate updates, one variable at a time.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from fgraph.errors import ModelError


@dataclass(frozen=True, slots=True)
class Input:
    """One input of a step: ``kind`` is ``"m"`` (the message into a socket), ``"q"`` (the marginal of its
    variable), ``"clamp"`` (the point mass on a clamped socket) or ``"cluster"`` (the joint marginal of
    ``cluster`` at the step's node).

    The socket is named by its ``position`` in the node's sockets (``NodePlan.row``), and a cluster's
    sockets, whose incoming messages its marginal reads, by theirs (``members``): the steps of identical
    nodes share their inputs (:class:`fgraph.factorise.NodeTemplate`).
    """

    name: str
    kind: str
    position: int | None = None
    cluster: tuple = ()
    members: tuple = ()


@dataclass(eq=False, slots=True)
class Step:
    """The update of the message out of one socket: its inputs, rules and how its message is made.

    Its ``inputs`` name the node's sockets by their position in ``node_plan.row``, so the steps of identical
    nodes share them (:class:`fgraph.factorise.NodeTemplate`), and their ``binding``
    (:class:`fgraph.binding.StepBinding`) as well; ``folded`` is the message of a step whose inputs are all
    constants, computed once by the compiler.
    """

    socket: object
    inputs: tuple  # of Input, shared by the steps of identical nodes
    node_plan: object = None  # the plan of the step's node (fgraph.factorise.NodePlan)
    rules: list = field(default_factory=list)  # [first-iteration rule, steady-state rule]
    binding: object = None  # how the message is made beyond its rule, set by the compiler (fgraph.binding)
    folded: object = None  # the message of constants alone (fgraph.inference.fold_constants), or None
    # the socket's node and interface, read by every update: attributes rather than properties
    node: object = field(init=False, repr=False)
    interface: str = field(init=False, repr=False)

    def __post_init__(self):
        self.node = self.socket.node
        self.interface = self.socket.interface

    def describe(self) -> str:
        rule = self.rules[-1].name if self.rules else "(unresolved)"
        inputs = ", ".join(i.name for i in self.inputs)
        return f"{self.node.name} ({type(self.node).__name__}) -> {self.interface}  [{inputs}]  {rule}"


class FrozenStep(Step):
    """A step of a compiled plan (:func:`fgraph.plan.freeze`): read-only."""

    __slots__ = ()

    def __setattr__(self, name, value):
        raise AttributeError(f"a step of a compiled plan is not changed (attribute {name!r}); compile the model "
                             "again (fg.compile) for other options")


class Schedule:
    """An ordered list of message updates; ``str(schedule)`` is a numbered list.

    ``notes`` (step -> a few words) marks steps in the listing, e.g. those a
    plan computes only when a reading needs them.
    """

    def __init__(self, steps: list, notes: dict | None = None):
        self.steps = list(steps)
        self.notes = notes or {}

    def __iter__(self):
        return iter(self.steps)

    def __len__(self) -> int:
        return len(self.steps)

    def __getitem__(self, index):
        return self.steps[index]

    def pairs(self) -> list:
        """The schedule as ``(node name, interface)`` pairs, the form ``fg.infer`` accepts back."""
        return [(s.node.name, s.interface) for s in self.steps]

    def __str__(self) -> str:
        notes = self.notes
        return "\n".join(f"{i + 1:4d}. {step.describe()}" + (f"  ({notes[step]})" if step in notes else "")
                         for i, step in enumerate(self.steps))

    def __repr__(self) -> str:
        return f"Schedule({len(self.steps)} steps)"


def message_dependencies(steps: list) -> dict:
    """``{b: {a, ...}}``: step ``b`` reads (through an ``m_`` input) the message step ``a`` writes.

    Steps are named by the index of the socket they update; every step has an
    entry, empty when it reads no message of another step.
    """
    parents = {step.socket.index: set() for step in steps}
    for step in steps:
        own = step.socket.index
        before = parents[own]
        row = step.node_plan.row
        for item in step.inputs:
            kind = item.kind
            if kind == "m":
                reader = row[item.position]
                slot = reader.slot
                if slot.kind == "edge":  # the common cases, inline: the partner's message
                    first, second = slot.sockets
                    source = (second if reader is first else first).index
                    if source in parents and source != own:
                        before.add(source)
                    continue
                if slot.kind == "equality" and not reader.reduced:  # the other messages at the variable
                    for source in slot.sockets:
                        if source is not reader and source.index in parents and source.index != own:
                            before.add(source.index)
                    continue
                readers = (reader,)
            elif kind == "cluster":
                readers = [row[k] for k in item.members]
            else:
                continue
            for reader in readers:
                for source in _sources(reader):
                    if source.index in parents and source.index != own:
                        before.add(source.index)
    return parents


def needed_steps(steps, slots: list, pending=None) -> set:
    """Socket indices of the steps whose messages the beliefs of ``slots`` depend on.

    Walks the inputs back from the messages into the wanted variables: an
    ``m_`` input needs the messages behind it, a ``q_`` input or a cluster
    marginal needs every message into the variables it covers. ``steps`` is
    a list of steps or a dict socket index -> step; with ``pending`` (a set of
    socket indices) the walk stops at the messages outside it (computed already).
    """
    by_socket = steps if isinstance(steps, dict) else {step.socket.index: step for step in steps}
    wanted, stack = set(), [socket.index for slot in slots for socket in slot.sockets]
    while stack:
        index = stack.pop()
        if index in wanted or index not in by_socket or (pending is not None and index not in pending):
            continue
        wanted.add(index)
        step = by_socket[index]
        row = step.node_plan.row
        for item in step.inputs:
            if item.kind == "m":
                stack.extend(s.index for s in _sources(row[item.position]))
            elif item.kind == "q":
                stack.extend(s.index for s in row[item.position].slot.sockets)
            elif item.kind == "cluster":
                for k in item.members:
                    member = row[k]
                    stack.extend(s.index for s in _sources(member))
                    stack.extend(s.index for s in member.slot.sockets)
    return wanted


def _sources(socket) -> list:
    """The sockets whose outgoing messages make up the message into ``socket``."""
    slot = socket.slot
    if slot.kind == "edge":
        return [slot.partner(socket)]
    if slot.kind == "equality":
        return [s for s in slot.sockets if s is not socket or _is_reduced(s)]
    return []


def _is_reduced(socket) -> bool:
    return socket.reduced


def default_order(steps: list) -> list:
    """Order steps: dependencies first, then grouped by target variable in declaration order.

    The order is the topological order that always takes the ready step of smallest
    ``(slot index, socket index)``. Without loops it is found on positions in ``steps`` (lists, one
    integer per step on the heap); with loops, on the dependency sets of :func:`message_dependencies`
    after :func:`_break_cycles`.
    """
    position = {step.socket.index: k for k, step in enumerate(steps)}
    count = len(steps)
    bound = 1 + max(position, default=0)
    # (slot index, socket index) as one integer, times the number of steps plus the position: comparing
    # integers on the heap is several times faster than comparing pairs, and the position comes back by %
    keys = [(step.socket.slot.index * bound + step.socket.index) * count + k for k, step in enumerate(steps)]
    order = _ordered_positions(_positional_parents(steps, position), keys, count)
    if order is not None:
        return [steps[k] for k in order]
    key = {s.socket.index: s.socket.slot.index * bound + s.socket.index for s in steps}
    parents = message_dependencies(steps)
    order = _topological_order(_break_cycles(parents, key), key)
    by_socket = {s.socket.index: s for s in steps}
    return [by_socket[n] for n in order]


def _positional_parents(steps: list, position: dict) -> list:
    """:func:`message_dependencies` by position in ``steps``: a list of parent positions per step.

    A parent may be listed twice (a message read through two inputs); the topological order counts
    each listing once when waiting and once when released, so the order is the same as with sets.
    """
    parents = []
    for k, step in enumerate(steps):
        before = []
        row = step.node_plan.row
        for item in step.inputs:
            kind = item.kind
            if kind == "m":
                readers = (row[item.position],)
            elif kind == "cluster":
                readers = [row[m] for m in item.members]
            else:
                continue
            for reader in readers:
                slot = reader.slot
                if slot.kind == "edge":
                    first, second = slot.sockets
                    sources = (second if reader is first else first,)
                elif slot.kind == "equality" and not reader.reduced:  # the other messages at the variable
                    for source in slot.sockets:
                        if source is not reader:
                            parent = position.get(source.index)
                            if parent is not None and parent != k:
                                before.append(parent)
                    continue
                else:
                    sources = _sources(reader)
                for source in sources:
                    parent = position.get(source.index)
                    if parent is not None and parent != k:
                        before.append(parent)
        parents.append(before)
    return parents


def _ordered_positions(parents: list, keys: list, count: int) -> list | None:
    """Kahn's algorithm on positions, the ready step of smallest key first (``None`` on a cycle)."""
    children = [[] for _ in range(count)]
    waiting = [0] * count
    ready = []
    for k, before in enumerate(parents):
        waiting[k] = len(before)
        if not before:
            ready.append(keys[k])
        for parent in before:
            children[parent].append(k)
    heapq.heapify(ready)
    order = []
    pop, push = heapq.heappop, heapq.heappush
    while ready:
        k = pop(ready) % count
        order.append(k)
        for child in children[k]:
            left = waiting[child] = waiting[child] - 1
            if left == 0:
                push(ready, keys[child])
    return order if len(order) == count else None


def _topological_order(parents: dict, key: dict) -> list | None:
    """The topological order that always takes the ready step of smallest key (``None`` on a cycle).

    ``key`` maps every step to a distinct integer.

    Kahn's algorithm with a heap: linear in the number of dependencies up to
    the heap's logarithm.
    """
    children = {n: [] for n in parents}
    waiting = {}
    ready = []
    for node, before in parents.items():
        count = waiting[node] = len(before)
        if count == 0:
            ready.append(key[node])
        for parent in before:
            children[parent].append(node)
    heapq.heapify(ready)
    step_of = {k: n for n, k in key.items()}
    order = []
    pop, push = heapq.heappop, heapq.heappush
    while ready:
        node = step_of[pop(ready)]
        order.append(node)
        for child in children[node]:
            count = waiting[child] = waiting[child] - 1
            if count == 0:
                push(ready, key[child])
    return order if len(order) == len(parents) else None


def _break_cycles(parents: dict, key: dict) -> dict:
    """Drop the back edges a depth-first search (in key order) meets, leaving a DAG (in the form of ``parents``)."""
    acyclic = {n: set() for n in parents}
    ordered = {n: sorted(before, key=key.__getitem__) for n, before in parents.items()}
    state = {}  # 1: on the stack, 2: finished
    for root in sorted(parents, key=key.__getitem__):
        if root in state:
            continue
        stack = [(root, iter(ordered[root]))]
        state[root] = 1
        while stack:
            node, before = stack[-1]
            for parent in before:
                if state.get(parent) == 1:
                    continue  # back edge: parent is still being resolved, skip it
                acyclic[node].add(parent)
                if parent not in state:
                    state[parent] = 1
                    stack.append((parent, iter(ordered[parent])))
                    break
            else:
                state[node] = 2
                stack.pop()
    return acyclic


def order_from_pairs(steps: list, pairs) -> list:
    """Arrange ``steps`` in the user's ``(node name, interface)`` order (repeats allowed)."""
    by_pair = {(s.node.name, s.interface): s for s in steps}
    ordered = []
    for pair in pairs:
        try:
            node_name, interface = pair
        except (TypeError, ValueError):
            raise ModelError(f"schedule entries must be (node name, interface) pairs, got {pair!r}") from None
        if (node_name, interface) not in by_pair:
            raise ModelError(
                f"schedule entry ({node_name!r}, {interface!r}) is not a message of this model; "
                f"valid entries are e.g. {list(by_pair)[:6]}"
            )
        ordered.append(by_pair[(node_name, interface)])
    return ordered
