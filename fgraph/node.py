"""Factor nodes: the base class every concrete node in ``nodes/`` derives from.

A node *type* is a subclass of :class:`FactorNode` that declares its
interfaces (``interfaces``) and the event rank of each (``event_ndims``).
A node *instance* lives in a model; it knows its name, its batch shape (the
plate it is replicated over), its power ``ω`` (a fractional likelihood scales
its messages and its energy) and any fixed attributes (a gain matrix, ...).
The engine never imports concrete nodes: it only talks to this interface.
"""
from __future__ import annotations

import functools

from typing import ClassVar

import numpy as np


class FactorNode:
    """A factor ``f(x_1, ..., x_k)`` of a Forney-style factor graph.

    Class attributes
    ----------------
    interfaces : tuple of str
        Interface names in canonical order, the first one usually ``"out"``.
    event_ndims : dict str -> int
        Event rank of the variable on each interface (0 scalar, 1 vector, 2 matrix).
        Node types whose ranks depend on the model (``Equality``) may leave it empty.
    default_factorization : str
        ``"bp"`` (sum-product: one cluster of all latent interfaces) or
        ``"mf"`` (mean-field: every interface its own cluster), used when the
        user does not choose.
    default_initial : dict str -> distribution or callable
        Initial marginals of the variables on some interfaces, used when a
        run needs one and ``init=`` has none (see the attribute).
    """

    interfaces: ClassVar[tuple] = ()
    #: A compound node (a whole sequence in one node) couples the elements of its
    #: batch: its rules also receive the incoming message of their own interface
    #: (``m_<interface>``, every time step) and return messages whose log-scales
    #: already include the incoming ones.
    couples_batch: ClassVar[bool] = False
    #: Rules of this node receive scaled messages and return fully scaled
    #: messages (the engine does not add the incoming log-scales), e.g. a
    #: mixture whose components are weighted by their own evidence.
    rules_handle_scales: ClassVar[bool] = False
    #: Interfaces whose rules also receive the incoming message of their own
    #: interface (``m_<interface>``), e.g. to weight components by their evidence.
    reads_own_message: ClassVar[tuple] = ()
    #: Interfaces whose rules read the *messages* of the interfaces in other
    #: clusters rather than those clusters' marginals (a mixture's switch only
    #: needs the evidences of the sub-models, not q(out, inputs)).
    messages_across_clusters: ClassVar[tuple] = ()
    #: Interfaces (or variadic groups) that the message to an interface (or to each member of a group) does
    #: not depend on, by the interface or group updated: its rules do not take them, and a schedule need not
    #: have computed them first. E.g. a factor that is a product over the members of a group
    #: (``{"coefficients": ("coefficients",)}``: the message to one member reads none of the others).
    messages_independent_of: ClassVar[dict] = {}
    #: A node with a variable number of interfaces ``<prefix>1 ... <prefix>K``
    #: (e.g. the inputs of a mixture) names the prefix and the group name its
    #: rules see: ``m_<group>`` / ``q_<group>`` is then a tuple in interface order.
    variadic: ClassVar[tuple | None] = None  # (prefix, group name), e.g. ("in", "inputs")
    event_ndims: ClassVar[dict] = {}
    #: The values each interface accepts (:mod:`fgraph.support`), by interface (or variadic group) name;
    #: an interface not named accepts any finite value. Every constant and every observed value
    #: is checked against it when the model is built and whenever data is bound.
    support: ClassVar[dict] = {}
    default_factorization: ClassVar[str] = "bp"
    #: The node's rules are variational messages only, defined up to a constant (no log-scales): under
    #: ``algorithm="bp"`` it stays mean-field (unless constraints say otherwise), its free-energy term its
    #: average energy. Without this, a node whose other interfaces are all known would be taken for a
    #: sum-product node and its free energy read from scales its messages do not carry.
    variational_only: ClassVar[bool] = False
    #: The average energy with a point mass on every interface is ``−log f`` at those points exactly (no bound,
    #: no auxiliary variable): ``result.to_arviz()`` reads the pointwise log-likelihood of an observation off
    #: it (:mod:`fgraph.arviz_export`). A node whose energy is a bound leaves it ``False``.
    energy_is_log_density: ClassVar[bool] = False
    #: Leading batch axes that are copies of the whole model (``fg.Model(copies=R)``), set by the model:
    #: never a plate, so a rule that sums over its plate keeps them (e.g. ``natural_parameter_totals``).
    copy_ndim: int = 0
    #: Initial marginals the node type supplies for the variables on some of its interfaces, by
    #: interface: a distribution (broadcast to the variable's batch) or a callable
    #: ``(variable) -> distribution``. Meant for auxiliary variables a node brings with it (the tilt
    #: ξ of a Pólya-Gamma augmented logistic node, whose first value is a matter of the method, not of
    #: the model). The compiler uses it when the schedule needs a variable before computing it and
    #: ``init=`` gives none for it; a user's ``init`` always wins.
    default_initial: ClassVar[dict] = {}

    def __init__(self, name: str, batch_shape: tuple = (), power: float = 1.0, interfaces: tuple | None = None,
                 **attributes):
        if not (0.0 < float(power) <= 1.0):
            raise ValueError(f"node {name!r}: power must lie in (0, 1], got {power!r}")
        if interfaces is not None:
            self.interfaces = tuple(interfaces)
        self.name = name
        self.batch_shape = tuple(batch_shape)
        self.power = float(power)
        self.attributes = attributes
        for key, value in attributes.items():
            setattr(self, key, value)

    @classmethod
    def interfaces_for(cls, connected: list) -> tuple:
        """The interfaces of a node of this type given the names the model connects.

        Fixed for most node types; a variadic node adds ``<prefix>1 ... <prefix>K``
        (they must be numbered from 1 without gaps).
        """
        if cls.variadic is None:
            return cls.interfaces
        prefix = cls.variadic[0]
        numbered = sorted(
            (int(name[len(prefix):]), name) for name in connected
            if name.startswith(prefix) and name[len(prefix):].isdigit()
        )
        if [k for k, _ in numbered] != list(range(1, len(numbered) + 1)):
            raise ValueError(f"{cls.__name__}: inputs must be named {prefix}1 ... {prefix}K without gaps")
        return cls.interfaces + tuple(name for _, name in numbered)

    @classmethod
    def parameter_event_ndim(cls, interface: str, attributes: dict) -> int:
        """Event rank of the value on ``interface`` before the node exists (for constants and batch shapes).

        ``event_ndims`` by interface, or by group for a variadic interface; a
        node type whose ranks depend on its attributes overrides this.
        """
        if cls.variadic is not None and interface not in cls.interfaces and interface.startswith(cls.variadic[0]):
            interface = cls.variadic[1]
        return cls.event_ndims.get(interface, 0)

    @classmethod
    def check_value(cls, interface: str, value: np.ndarray) -> None:
        """Raise ``ValueError`` if a constant or observed ``value`` on ``interface`` is outside its support.

        ``value`` is finite and of shape ``batch + event``. The declared
        :attr:`support` is checked first, then the node type's own
        ``check_parameter(interface, value)`` if it defines one (for what a
        support cannot say alone).
        """
        name = interface
        if cls.variadic is not None and interface not in cls.interfaces and interface.startswith(cls.variadic[0]):
            name = cls.variadic[1]
        support = cls.support.get(interface, cls.support.get(name))
        if support is not None:
            support.check(value, interface)
        check = getattr(cls, "check_parameter", None)
        if check is not None:
            check(interface, value)

    def group_of(self, interface: str) -> str | None:
        """The group name of a variadic interface, else ``None``."""
        variadic = type(self).variadic
        if variadic is None or interface in type(self).interfaces:
            return None
        return variadic[1]

    def group_index(self, interface: str) -> int:
        """Position (0-based) of a variadic interface within its group."""
        return int(interface[len(type(self).variadic[0]):]) - 1

    def group_inputs(self, inputs: dict, combine) -> dict:
        """Collapse ``m_in1 ... / q_in1 ...`` into one ``m_<group>`` (or ``q_<group>``) entry.

        ``combine`` turns the list of values (messages, marginals or families)
        in interface order into the grouped value. The group is ``m_`` when any
        member is a message (sum-product inside the cluster), else ``q_``.
        """
        if type(self).variadic is None:
            return inputs
        layout = _group_layout(type(self), tuple(inputs))
        if layout is None:
            return inputs
        return {key: inputs[key] if members is None else combine([inputs[member] for member in members])
                for key, members in layout}

    def conditional_interfaces(self) -> tuple:
        """Interfaces behind which beliefs are conditional (a mixture's inputs: p(s | y, m = k)).

        Their log-scales hold a joint evidence, not the model's; the evidence
        of the model is read elsewhere.
        """
        return ()

    def interface_batch_shape(self, interface: str) -> tuple:
        """Batch shape of the messages on ``interface``; compound nodes override this."""
        return self.batch_shape

    def interface_event_ndim(self, interface: str) -> int:
        group = self.group_of(interface)
        return self.event_ndims.get(group if group is not None else interface, 0)

    def check_event_shapes(self, event_shapes: dict) -> None:
        """Raise ``ValueError`` if the event shapes on the interfaces do not fit together.

        ``event_shapes`` maps every interface to the event shape of the
        variable or constant connected to it. The graph calls this once per
        node, for sizes its type cannot fix alone (a mixture needs one input
        per category of its switch); the default accepts everything.
        """

    @property
    def batch_size(self) -> int:
        return int(np.prod(self.batch_shape, dtype=int))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


@functools.lru_cache(maxsize=4096)
def _group_layout(node_type: type, names: tuple):
    """How :meth:`FactorNode.group_inputs` groups inputs called ``names`` at a variadic ``node_type``:
    ``((key, None), ..., (group key, member names in the group's order))`` (the other inputs first, in their
    order), or ``None`` when no input is a member. A function of the names alone, found once per node type
    and names (a mixture of K components asks it for each of its K + 2 messages, in several passes)."""
    prefix, group = node_type.variadic
    interfaces = node_type.interfaces
    members = sorted((int(key[2 + len(prefix):]) - 1, key) for key in names
                     if key[2:] not in interfaces and key[2:].startswith(prefix))
    if not members:
        return None
    layout = [(key, None) for key in names if key[2:] in interfaces or not key[2:].startswith(prefix)]
    kind = "m_" if any(key.startswith("m_") for _, key in members) else "q_"
    layout.append((kind + group, tuple(key for _, key in members)))
    return tuple(layout)
