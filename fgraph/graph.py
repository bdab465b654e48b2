"""From a ``Model`` to a Forney-style factor graph of sockets and variable slots.

Every interface of every node is a :class:`Socket`. Every variable becomes a
:class:`Slot` that joins its sockets:

* ``edge``: exactly two sockets of the variable's batch shape — a plain FFG edge;
* ``dangling``: one socket — the other end sends the flat (uninformative) message;
* ``equality``: more sockets, or a socket replicated over a plate the variable
  is not (a reduction) — an equality node is inserted;
* ``observed``: data is clamped to it; every socket receives a point mass.

Interfaces bound to constants are clamped sockets without a slot.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from fgraph.equality import reduction_axes
from fgraph.errors import ModelError
from fgraph.model import Model, Variable
from fgraph.node import FactorNode


@dataclass(eq=False, slots=True)
class Socket:
    """One interface of one node instance."""

    index: int
    node: FactorNode
    interface: str
    target: object  # Variable or Constant
    batch_shape: tuple
    slot: "Slot | None" = None
    copies: int = 1  # > 1 when the message stands for a collapsed plate of identical factors
    empirical: bool = False  # observed data summarised by EmpiricalMoments (collapsed plate)
    #: no variable, or an observed one: the socket receives a point mass (set with the slots' kinds;
    #: read for every input of every message, so a field rather than a property)
    clamped: bool = True
    #: the socket's batch has plate axes its variable sums over (see :func:`fgraph.equality.reduction_axes`)
    reduced: bool = False

    def __repr__(self) -> str:
        return f"{self.node.name}.{self.interface}"

    def carry_one_message(self, batch_shape: tuple) -> None:
        """Give the socket the batch shape of one message standing for a collapsed plate (:mod:`fgraph.plates`);
        its variable's plate reductions are marked again."""
        self.batch_shape = batch_shape
        if self.slot is not None:
            self.slot.mark_reductions()


@dataclass(eq=False, slots=True)
class Slot:
    """A variable of the graph and the sockets it joins."""

    index: int
    variable: Variable
    sockets: list = field(default_factory=list)
    kind: str = "edge"
    #: a socket's batch shape differs from the variable's: its equality node reduces over plate axes
    reduced: bool = False

    @property
    def name(self) -> str:
        return self.variable.name

    def partner(self, socket: Socket) -> Socket:
        first, second = self.sockets
        return second if socket is first else first

    def mark_reductions(self) -> None:
        """Set :attr:`reduced`, and each socket's, from their batch shapes (again where a plate is collapsed,
        :mod:`fgraph.plates`, and its sockets carry one message for the plate)."""
        batch = self.variable.batch_shape
        reduced = False
        for socket in self.sockets:
            differs = socket.batch_shape != batch
            socket.reduced = differs and bool(reduction_axes(socket.batch_shape, batch))
            reduced = reduced or differs
        self.reduced = reduced

    def multiplicity(self) -> float:
        """Number of socket elements per variable element (the degree ``d_v``)."""
        size = _size(self.variable.batch_shape)
        return sum(_size(s.batch_shape) * s.copies for s in self.sockets) / max(size, 1)

    def __repr__(self) -> str:
        return f"Slot({self.name!r}, {self.kind}, {len(self.sockets)} sockets)"


def _size(shape) -> int:
    size = 1
    for s in shape:
        size *= s
    return size


class _TypeLayout:
    """What :class:`FactorNode`'s own methods answer for every node of one type (not overridden by it)."""

    __slots__ = ("ranks_declared", "plain_batch", "ranks", "accepts_every_shape")

    def __init__(self, node_type: type):
        self.ranks_declared = bool(node_type.event_ndims)
        # messages of every interface have the node's batch shape
        self.plain_batch = node_type.interface_batch_shape is FactorNode.interface_batch_shape
        # interface -> event rank, filled as met; None when a node type computes ranks itself
        plain_ranks = (node_type.interface_event_ndim is FactorNode.interface_event_ndim
                       and node_type.group_of is FactorNode.group_of)
        self.ranks = {} if plain_ranks else None
        self.accepts_every_shape = node_type.check_event_shapes is FactorNode.check_event_shapes


class FactorGraph:
    """The factor graph of a model: nodes, sockets and slots."""

    def __init__(self, model: Model):
        self.model = model
        self.nodes: list[FactorNode] = list(model.nodes)
        self._nodes_by_name = {node.name: node for node in self.nodes}
        self._networkx = None
        self._neighbours = None
        self._components = None
        self._ties = None
        self._evidence_readers = {}  # frozenset of preferred names (None: none) -> the readers
        self._conditional = None
        self._union_find = None
        self._latent_slots = None
        self._observed_slots = None
        self.sockets: list[Socket] = []
        self.slots: dict[str, Slot] = {}
        self.node_sockets: dict[str, dict[str, Socket]] = {}
        for index, variable in enumerate(model.variables.values()):
            self.slots[variable.name] = Slot(index, variable)
        types = {}  # node type -> what the base class's methods answer for it alone (see _TypeLayout)
        all_sockets, slots, all_connections = self.sockets, self.slots, model.connections
        socket_nodes = self._socket_nodes = []  # socket index -> position of its node in the model
        for position, node in enumerate(self.nodes):
            sockets = {}
            connections = all_connections[node.name]
            node_type = type(node)
            layout = types.get(node_type)
            if layout is None:
                layout = types[node_type] = _TypeLayout(node_type)
            plain_batch, ranks = layout.plain_batch, layout.ranks
            for interface in node.interfaces:
                target = connections[interface]
                batch_shape = node.batch_shape if plain_batch else node.interface_batch_shape(interface)
                socket = Socket(len(all_sockets), node, interface, target, batch_shape)
                if isinstance(target, Variable):
                    socket.slot = slot = slots[target.name]
                    slot.sockets.append(socket)
                    if not layout.ranks_declared:
                        expected = len(target.event_shape)
                    elif ranks is not None:
                        expected = ranks.get(interface)
                        if expected is None:
                            expected = ranks[interface] = node.interface_event_ndim(interface)
                    else:
                        expected = node.interface_event_ndim(interface)
                    if len(target.event_shape) != expected:
                        raise ModelError(
                            f"node {node.name!r}, interface {interface!r} expects a variable of event rank {expected}, "
                            f"but {target.name!r} has event shape {target.event_shape}"
                        )
                all_sockets.append(socket)
                socket_nodes.append(position)
                sockets[interface] = socket
            self.node_sockets[node.name] = sockets
            if layout.accepts_every_shape:
                continue  # accepts everything: no need to gather the shapes
            try:
                node.check_event_shapes({i: s.target.event_shape for i, s in sockets.items()})
            except ValueError as error:
                raise ModelError(f"node {node.name!r} ({type(node).__name__}): {error}") from None
        for slot in self.slots.values():
            if slot.variable.observed:
                slot.kind = "observed"  # its sockets keep ``clamped = True``, the default
                continue
            slot.kind = self._kind(slot)
            for socket in slot.sockets:
                socket.clamped = False

    def _kind(self, slot: Slot) -> str:
        if slot.variable.observed:
            return "observed"
        if not slot.sockets:
            raise ModelError(f"variable {slot.name!r} is not connected to any factor")
        slot.mark_reductions()
        if slot.reduced or len(slot.sockets) > 2:
            return "equality"
        return "edge" if len(slot.sockets) == 2 else "dangling"

    @property
    def latent_slots(self) -> list:
        """The slots of latent variables, in declaration order (made once: kinds are fixed with the graph)."""
        if self._latent_slots is None:
            self._latent_slots = [s for s in self.slots.values() if s.kind != "observed"]
        return self._latent_slots

    @property
    def observed_slots(self) -> list:
        """The slots of observed variables, in declaration order (made once, as :attr:`latent_slots`)."""
        if self._observed_slots is None:
            self._observed_slots = [s for s in self.slots.values() if s.kind == "observed"]
        return self._observed_slots

    def node(self, name: str) -> FactorNode:
        node = self._nodes_by_name.get(name)
        if node is not None:
            return node
        raise ModelError(f"unknown node {name!r}; nodes are: {', '.join(n.name for n in self.nodes)}")

    def neighbours(self) -> dict:
        """Adjacency of the bipartite graph of nodes and latent variables (built once).

        Vertices are ``("node", name)`` and ``("variable", name)``, nodes first,
        in the order of the model; a variable on several interfaces of one node
        is one edge. Plain lists, so that structure queries cost linear time
        without building a graph library's objects.
        """
        if self._neighbours is not None:
            return self._neighbours
        neighbours = {("node", node.name): [] for node in self.nodes}
        for slot in self.latent_slots:
            vertex = ("variable", slot.name)
            adjacent = neighbours[vertex] = []
            for socket in slot.sockets:
                other = ("node", socket.node.name)
                if other not in adjacent:
                    adjacent.append(other)
                    neighbours[other].append(vertex)
        self._neighbours = neighbours
        return neighbours

    def connected_components(self) -> list:
        """The connected components of :meth:`neighbours`, as lists of vertices.

        In the order of their first vertex (so of their first node in the
        model), each found by an iterative depth-first search.
        """
        if self._components is not None:
            return self._components
        neighbours = self.neighbours()
        seen, components = set(), []
        for start in neighbours:
            if start in seen:
                continue
            seen.add(start)
            component, frontier = [start], [start]
            while frontier:
                for other in neighbours[frontier.pop()]:
                    if other not in seen:
                        seen.add(other)
                        component.append(other)
                        frontier.append(other)
            components.append(component)
        self._components = components
        return components

    def to_networkx(self):
        """The bipartite graph of :meth:`neighbours` as a ``networkx.Graph`` (for exploring a model)."""
        if self._networkx is not None:
            return self._networkx
        import networkx as nx

        graph = self._networkx = nx.Graph()
        for vertex, adjacent in self.neighbours().items():
            graph.add_node(vertex)
            graph.add_edges_from((vertex, other) for other in adjacent)
        return graph

    def tied_interfaces(self) -> list:
        """``(node, slot, interfaces)`` for every latent variable on two or more interfaces of one node.

        Such a variable meets the node through an equality node on both (all)
        of those interfaces, ``x - f - x'`` with ``x = x'``: a loop of length
        two that the node's rules cannot see, as they treat every interface as
        a variable of its own. Clamped variables (data, constants) are point
        masses on each interface and close no loop.
        """
        if self._ties is not None:
            return self._ties
        ties = []
        for slot in self.latent_slots:
            sockets = slot.sockets
            count = len(sockets)
            if count < 2 or (count == 2 and sockets[0].node is not sockets[1].node):
                continue  # the common cases, without a set
            if count == 3:
                first, second, third = sockets[0].node, sockets[1].node, sockets[2].node
                if first is not second and first is not third and second is not third:
                    continue
            nodes = [socket.node for socket in sockets]
            if len({id(node) for node in nodes}) == len(nodes):  # every socket on a node of its own: no tie
                continue
            by_node = {}
            for socket in slot.sockets:
                by_node.setdefault(socket.node.name, []).append(socket.interface)
            ties.extend((self.node(name), slot, tuple(interfaces))
                        for name, interfaces in by_node.items() if len(interfaces) > 1)
        self._ties = ties
        return ties

    def is_tree(self) -> bool:
        """Whether the graph (with plates expanded) has no cycles.

        A plate of N > 1 factors that touches two or more reduced variables
        closes loops (mu - f_1 - tau - f_2 - mu), so it counts as a cycle, as
        does a variable on two interfaces of one node (see :meth:`tied_interfaces`).
        """
        if self.tied_interfaces():
            return False
        if not self._node_components()[1]:
            return False
        reduced_per_node = {}  # node name -> its sockets whose variable reduces over their plate
        for slot in self.latent_slots:
            if slot.kind != "equality":
                continue
            for socket in slot.sockets:
                if socket.reduced:
                    count = reduced_per_node[socket.node.name] = reduced_per_node.get(socket.node.name, 0) + 1
                    if count >= 2:
                        return False
        return True

    def _node_components(self) -> tuple:
        """``(root, forest)``: a union-find forest over the nodes joined by latent variables, and whether the
        bipartite graph of :meth:`neighbours` has no cycle.

        ``root[i]`` is the representative of node ``i`` (in model order) after full path compression. A
        variable joining k distinct nodes adds k edges and one vertex; the graph stays a forest exactly when
        those k nodes were in k different components before (the test ``E = V - components`` made one
        variable at a time). Integer arrays rather than :meth:`neighbours`' labelled vertices: on a graph of
        10^4 nodes this is a few hundredths of what building the labels costs.
        """
        if self._union_find is not None:
            return self._union_find
        node_of = self._socket_nodes
        parent = list(range(len(self.nodes)))

        def find(i):
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        forest = True
        for slot in self.latent_slots:
            sockets = slot.sockets
            if len(sockets) == 1:
                continue  # a leaf: joins nothing
            if len(sockets) == 2:  # an edge, without a set
                first, second = find(node_of[sockets[0].index]), find(node_of[sockets[1].index])
                if first != second:
                    parent[second] = first
                elif node_of[sockets[0].index] != node_of[sockets[1].index]:
                    forest = False  # two nodes already connected: this variable closes a cycle
                continue  # (both on one node: one edge, see below)
            seen = set()  # a variable on several interfaces of one node is one edge (see neighbours)
            first = None
            for socket in sockets:
                node = node_of[socket.index]
                if node in seen:
                    continue
                seen.add(node)
                root = find(node)
                if first is None:
                    first = root
                elif root == first:
                    forest = False  # already connected: this variable closes a cycle
                else:
                    parent[root] = first
        root = [find(i) for i in range(len(parent))]
        self._union_find = (root, forest)
        return self._union_find

    def evidence_readers(self, prefer: set | None = None) -> list:
        """Where to read the evidence: one ``(slot, coupled)`` per connected component, components in the
        order of their first node in the model.

        The slot is the component's variable with the smallest batch outside any
        mixture input branch (whose scales are joint evidences ``p(y, m = k)``),
        declared first among those; ``coupled`` is the batch shape of the first
        compound node in the component that couples the elements of its last
        batch axis (a sequence), else ``None``: along that axis every element of
        a belief holds the same evidence, while leading axes (independent
        sequences) and plain plates add up. Variables named in ``prefer`` are
        chosen first where they qualify (outside a mixture's branches, of the
        reader's batch size). Components come from :meth:`_node_components`.
        """
        key = None if not prefer else frozenset(prefer)
        known = self._evidence_readers.get(key)
        if known is not None:
            return known
        root = self._node_components()[0]
        node_of = self._socket_nodes
        conditional = self._conditional_variables()
        best = {}  # component -> ((inside a branch, batch size, preferred last), slot) of its reader so far
        for slot in self.latent_slots:  # in declaration order: a later variable replaces only a better one
            component = root[node_of[slot.sockets[0].index]]
            batch = slot.variable.batch_shape
            rank = (slot.name in conditional, _size(batch) if batch else 1)
            reader = best.get(component)
            if reader is None or rank < reader[0][:2]:
                best[component] = (rank + (not (prefer and slot.name in prefer),), slot)
            elif prefer and rank == reader[0][:2] and reader[0][2] and slot.name in prefer and not rank[0]:
                best[component] = (rank + (False,), slot)
        coupled = {}
        for index, node in enumerate(self.nodes):
            if type(node).couples_batch and root[index] not in coupled:
                coupled[root[index]] = node.batch_shape
        readers, done = [], set()
        for component in root:  # components by their first node
            if component in done:
                continue
            done.add(component)
            if component in best:
                readers.append((best[component][1], coupled.get(component)))
        self._evidence_readers[key] = readers
        return readers

    def _conditional_variables(self) -> set:
        """Variables inside sub-models behind a mixture's inputs.

        A branch is what the input's variable reaches without passing through
        the mixture node: a search of that branch only, so a model with one
        mixture per time step costs linear, not quadratic, time.
        """
        if self._conditional is not None:
            return self._conditional
        graph = None  # the labelled graph, made for the first node with conditional interfaces
        marked = set()
        for node in self.nodes:
            if type(node).conditional_interfaces is FactorNode.conditional_interfaces:
                continue  # the default: no conditional interfaces
            interfaces = node.conditional_interfaces()
            if not interfaces:
                continue
            graph = graph or self.neighbours()
            blocked = ("node", node.name)
            for interface in interfaces:
                socket = self.node_sockets[node.name][interface]
                if socket.slot is None or socket.slot.kind == "observed":
                    continue
                start = ("variable", socket.slot.name)
                reached, frontier = {start}, [start]
                while frontier:
                    for neighbour in graph[frontier.pop()]:
                        if neighbour != blocked and neighbour not in reached:
                            reached.add(neighbour)
                            frontier.append(neighbour)
                marked.update(name for kind, name in reached if kind == "variable")
        self._conditional = marked
        return marked
