"""The modelling DSL: ``Model`` (a context manager), variables and factor placement.

::

    import fgraph as fg
    from fgraph.nodes import Normal, Gamma

    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=10.0)
        tau = Gamma("tau", shape=1.0, rate=1.0)
        y = Normal("y", mean=mu, precision=tau, observed=data)   # data: shape (N,)

A variable or factor over N i.i.d. copies is declared once: its *batch
shape* (the plate) comes from its data, its parameters or ``batch_shape=``.
Parameters of a smaller batch shape broadcast (numpy rules, right-aligned);
the engine ties them to the plate with a reduction, not with N objects.

``fg.Model(copies=R)`` makes R independent copies of the whole model, run as
one graph (random restarts, grids of hyper-parameters, bootstrap resamples):
every variable and node gets the leading *copy axes* ``(R,)``, which no plate
ever reduces. Constants, data and node powers are shared by every copy unless
wrapped in :func:`per_copy`, whose leading axes are the copy axes (a power:
one ω per copy). Internally a batch shape is ``copies + plate``, the plate
padded on the left with axes of length 1 to the longest plate of the model
(``plate_rank``), so that numpy's right-aligned broadcasting never lines a
copy axis up with a plate axis: a global ``mu`` of a model with plates
``(N,)`` has batch ``(R, 1)`` and ``Variable.plate_shape == ()``.
"""
from __future__ import annotations

import math
import numbers
import threading

import numpy as np

from fgraph.collection import cycle_collection_paused
from fgraph.errors import DataError, DataTypeError, ModelError, ModelTypeError
from fgraph.families.base import Distribution
from fgraph.node import FactorNode
from fgraph.plates import plate_sum


class Variable:
    """A random variable of a model (an edge of the factor graph).

    Attributes
    ----------
    name : str
    batch_shape : tuple   plate shape, e.g. ``(N,)``; in a model with copies ``copies + padded plate``
    plate_shape : tuple   the plate as declared (``batch_shape`` without the copy axes and padding)
    event_shape : tuple   ``()`` for scalars, ``(d,)`` vectors, ``(d, d)`` matrices
    observed : bool       whether data is bound to it (it is then clamped)
    entropy_weight : float or ndarray   τ, the weight of H[q(x)] in the free energy (1; see :func:`entropy_weight`)
    """

    #: τ ∈ (0, 1], the weight of the entropy of this variable's marginal in the free energy (a float, or an array
    #: of the copy shape for one τ per copy); see :func:`entropy_weight`.
    entropy_weight = 1.0

    def __init__(self, model: "Model", name: str, batch_shape: tuple, event_shape: tuple, observed: bool,
                 plate_shape: tuple | None = None):
        self.model = model
        self.name = name
        self.batch_shape = batch_shape if type(batch_shape) is tuple else tuple(batch_shape)
        self.event_shape = event_shape if type(event_shape) is tuple else tuple(event_shape)
        self.observed = observed
        #: the plate as declared, without copy axes or padding (the batch shape in a model without copies)
        self.plate_shape = self.batch_shape if plate_shape is None else tuple(plate_shape)

    @property
    def shape(self) -> tuple:
        return self.batch_shape + self.event_shape

    @property
    def event_ndim(self) -> int:
        return len(self.event_shape)

    def __repr__(self) -> str:
        kind = "observed" if self.observed else "latent"
        return f"Variable({self.name!r}, {kind}, batch_shape={self.batch_shape}, event_shape={self.event_shape})"


class Constant:
    """A fixed parameter value attached to one node interface (clamped, never inferred).

    ``per_copy``: its leading axes are the model's copy axes (see :func:`per_copy`); its
    ``value`` is then padded like a batch (``copies + (1,)* + plate + event``).
    """

    def __init__(self, value: np.ndarray, event_ndim: int, per_copy: bool = False, plate_shape: tuple | None = None):
        self.value = value
        self.event_ndim = event_ndim
        self.batch_shape = value.shape[: value.ndim - event_ndim]
        self.event_shape = value.shape[value.ndim - event_ndim :]
        self.per_copy = per_copy
        #: the batch axes that are plate axes (all of them for a value shared by every copy)
        self.plate_shape = self.batch_shape if plate_shape is None else tuple(plate_shape)


class PerCopy:
    """A value whose leading axes are the copy axes of a model with copies (made by :func:`per_copy`)."""

    __slots__ = ("value",)

    def __init__(self, value):
        if isinstance(value, (PerCopy, Variable, Distribution)):
            raise ModelTypeError(f"per_copy takes an array of numbers (a constant or data), got {type(value).__name__}")
        self.value = value

    def __array__(self, dtype=None, copy=None):
        # node helpers read the event shape off a value's trailing axes (np.shape), the same with copies in front
        return np.asarray(self.value, dtype=dtype)

    def __repr__(self) -> str:
        return f"per_copy({self.value!r})"


def plate_of(value, event_ndim: int) -> tuple:
    """The plate of a node's argument: a variable's ``plate_shape``, a value's batch axes (after the copy
    axes of a :func:`per_copy` value). For node helpers that work out a plate before making a variable."""
    if isinstance(value, Variable):
        return value.plate_shape
    if isinstance(value, PerCopy):
        shape = np.shape(value.value)[len(Model.current().copy_shape):]
    else:
        shape = np.shape(value)
    return shape[: len(shape) - event_ndim] if event_ndim else shape


def per_copy(value) -> PerCopy:
    """Mark a constant or data array as one value per copy of a model with copies (``fg.Model(copies=R)``).

    Its leading axes are the copy axes (shape ``(R,) + batch + event``), the
    rest aligns with the plate as any parameter does (right-aligned). An
    unmarked value is shared by every copy. The mark is needed where shapes
    cannot tell: a prior mean of shape ``(R,)`` could be R copies of a global
    mean or one mean per element of a plate of R.
    """
    return PerCopy(value)


# the models under construction (``with fg.Model()`` blocks), innermost last, one stack per thread: threads
# build and fit models independently
_building = threading.local()


def _active_models() -> list:
    stack = getattr(_building, "models", None)
    if stack is None:
        stack = _building.models = []
    return stack


class Model:
    """A factor graph under construction; use as ``with fg.Model() as model:``."""

    def __init__(self, name: str = "model", copies=None):
        self.name = name
        #: leading batch axes of every variable and node: independent copies of the whole model
        self.copy_shape: tuple = () if copies is None else check_batch_shape(copies, "copies of model", name)
        #: length of the longest plate (without copy axes); every batch shape is padded to it when there are copies
        self.plate_rank = 0
        self._node_plates: dict = {}  # node name -> its plate (copies only)
        self._per_copy_constants: list = []  # per-copy Constants, re-padded when the plate rank grows
        self.variables: dict[str, Variable] = {}
        self.nodes: list[FactorNode] = []
        self.connections: dict[str, dict] = {}  # node name -> {interface: Variable | Constant}
        self.data: dict[str, np.ndarray] = {}
        self._node_names: set = set()
        self._readers: dict = {}  # variable name -> [(node type, node name, interface)]
        self._plain_constants: dict = {}  # (node type, interface, number, sign) -> its checked Constant
        # how many times variables or factors were added or removed: compiled plans are remembered per
        # structure (fgraph.inference), and a plan compiled before a change must not be used after it
        self.structure_version = 0
        self.compiled_plans: dict = {}  # compilation options -> Plan, for this structure_version only
        self._paused: list = []  # the pauses of the cycle collector of the open `with` blocks of this model

    def __repr__(self) -> str:
        """One line on what the model holds: its factors by type, its latent and observed variables with their
        shapes (plate + event; a long list is cut after eight names), its copies."""
        counts: dict = {}
        for node in self.nodes:
            counts[type(node).__name__] = counts.get(type(node).__name__, 0) + 1
        factors = ", ".join(f"{name} ×{count}" if count > 1 else name for name, count in counts.items())

        def listed(variables) -> str:
            names = [v.name + (str(list(v.plate_shape + v.event_shape)) if v.plate_shape + v.event_shape else "")
                     for v in variables]
            return ", ".join(names[:8]) + (f", … ({len(names) - 8} more)" if len(names) > 8 else "") or "none"

        latent = [v for v in self.variables.values() if not v.observed]
        observed = [v for v in self.variables.values() if v.observed]
        copies = f"; copies {list(self.copy_shape)}" if self.copy_shape else ""
        return (f"Model({self.name!r}: {len(self.nodes)} factor{'' if len(self.nodes) == 1 else 's'}"
                f"{' (' + factors + ')' if factors else ''}; latent: {listed(latent)}; observed: {listed(observed)}"
                f"{copies})")

    def draw(self):
        """The model's factor graph: factors as boxes, variables as edges, observed ends filled, plates boxed
        with their size (:mod:`fgraph.drawing`). A ``graphviz.Source`` with Graphviz installed (the ``draw``
        extra and the ``dot`` program), else the DOT text."""
        from fgraph.drawing import draw

        return draw(self)

    # ------------------------------------------------------------ context
    def __enter__(self) -> "Model":
        """Make this the model statements add to; Python's cyclic garbage collector waits until the block
        ends (:class:`fgraph.collection.cycle_collection_paused`): every variable and node of the model stays
        alive with it, and each automatic collection while thousands of statements accumulate them would walk
        all of them again (on a chain of 10^5 statements, about half of its building time)."""
        paused = cycle_collection_paused()
        paused.__enter__()
        self._paused.append(paused)  # (a stack: the same model may be entered again inside its own block)
        _active_models().append(self)
        return self

    def __exit__(self, *exc) -> None:
        _active_models().pop()
        self._paused.pop().__exit__(*exc)

    @classmethod
    def current(cls) -> "Model":
        active = _active_models()
        if not active:
            raise ModelError("no active model: create variables inside `with fg.Model() as model:`")
        return active[-1]

    def __getitem__(self, name: str) -> Variable:
        try:
            return self.variables[name]
        except KeyError:
            raise ModelError(
                f"unknown variable {name!r}; the model has: {', '.join(sorted(self.variables)) or '(none)'}"
            ) from None

    # ----------------------------------------------------------- building
    def add_variable(self, name: str, batch_shape=(), event_shape=(), observed: bool = False) -> Variable:
        """A new variable of plate ``batch_shape`` (in a model with copies the copy axes are added)."""
        if not isinstance(name, str) or not name:
            raise ModelTypeError(f"variable names must be non-empty strings, got {name!r}")
        if name in self.variables:
            raise ModelError(f"variable {name!r} is defined twice; give each variable its own name")
        if self.copy_shape:
            plate = tuple(batch_shape)
            self._make_room(plate)
            variable = Variable(self, name, self.padded(plate), event_shape, observed, plate_shape=plate)
        else:
            variable = Variable(self, name, batch_shape, event_shape, observed)
        self.variables[name] = variable
        self._structure_changed()
        return variable

    def _structure_changed(self) -> None:
        self.structure_version += 1
        self.compiled_plans.clear()

    # ------------------------------------------------------------- copies
    @property
    def copy_ndim(self) -> int:
        return len(self.copy_shape)

    def padded(self, plate: tuple) -> tuple:
        """The batch shape of a plate: ``copies + (1,) * (plate_rank - len(plate)) + plate`` (the plate alone
        without copies)."""
        if not self.copy_shape:
            return tuple(plate)
        return self.copy_shape + (1,) * (self.plate_rank - len(plate)) + tuple(plate)

    def _pad_value(self, array: np.ndarray, plate_ndim: int, event_ndim: int) -> np.ndarray:
        """A per-copy array ``copies + (padding) + plate + event`` padded to the model's plate rank."""
        tail = array.shape[array.ndim - plate_ndim - event_ndim:]
        shape = self.copy_shape + (1,) * (self.plate_rank - plate_ndim) + tail
        return array if array.shape == shape else array.reshape(shape)

    def _make_room(self, plate: tuple) -> None:
        """Widen every batch shape when a plate longer than any before appears (copies only)."""
        if not self.copy_shape or len(plate) <= self.plate_rank:
            return
        self.plate_rank = len(plate)
        for variable in self.variables.values():
            variable.batch_shape = self.padded(variable.plate_shape)
        for node in self.nodes:
            node.batch_shape = self.padded(self._node_plates[node.name])
            if type(node.power) is np.ndarray:  # per-copy powers
                node.power = node.power.reshape(self.copy_shape + (1,) * self.plate_rank)
        for constant in self._per_copy_constants:
            constant.value = self._pad_value(constant.value, len(constant.plate_shape), constant.event_ndim)
            constant.value.flags.writeable = False
            constant.batch_shape = constant.value.shape[: constant.value.ndim - constant.event_ndim]
        for name, array in list(self.data.items()):
            variable = self.variables[name]
            if array.ndim > len(variable.plate_shape) + variable.event_ndim:  # per copy
                self.data[name] = self._pad_value(array, len(variable.plate_shape), variable.event_ndim)
        self._structure_changed()

    def aligned_init(self, init: dict | None) -> dict | None:
        """Initial values of a model with copies at their variables' batch shapes.

        An initial distribution of batch ``()`` or of (a shape broadcasting to)
        the variable's plate is shared by every copy; one of batch
        ``copies + plate`` gives each copy its own starting point (restarts).
        """
        if not self.copy_shape or not init:
            return init
        aligned = {}
        for name, value in init.items():
            variable = self.variables.get(name)
            if variable is None or not isinstance(value, Distribution) or value.batch_shape == ():
                aligned[name] = value  # the compiler names what is wrong with it
                continue
            batch, plate = value.batch_shape, variable.plate_shape
            if batch == self.copy_shape + plate:  # one starting point per copy
                index = (slice(None),) * self.copy_ndim + (None,) * (self.plate_rank - len(plate))
                aligned[name] = value.broadcast_to(batch)[index] if index.count(None) else value
                continue
            try:
                shared = np.broadcast_shapes(batch, plate) == plate
            except ValueError:
                shared = False
            if not shared:
                raise ModelError(
                    f"init[{name!r}] has batch shape {batch}; in a model with copies {self.copy_shape} give () or "
                    f"the plate {plate} (shared by every copy) or {self.copy_shape + plate} (the copy axes first, "
                    "one starting point per copy)"
                )
            aligned[name] = value.broadcast_to(variable.batch_shape)
        return aligned

    def unpadded(self, value, variable: Variable):
        """A distribution (or array) of ``variable``'s batch shape without the plate's padding: ``copies + plate``."""
        missing = self.plate_rank - len(variable.plate_shape) if self.copy_shape else 0
        if not missing:
            return value
        index = (slice(None),) * self.copy_ndim + (0,) * missing
        if isinstance(value, Distribution):
            return value.broadcast_to(variable.batch_shape)[index]
        return np.broadcast_to(value, variable.batch_shape)[index]

    def _split_per_copy(self, value, what: str, event_ndim: int):
        """``(array, plate shape, per copy)`` of a value given for a node or as data (copies only)."""
        if not isinstance(value, PerCopy):
            return value, None, False
        if not self.copy_shape:
            raise ModelError(f"{what}: per_copy(...) needs a model with copies (fg.Model(copies=R))")
        array = numeric_array(value.value, what, ModelTypeError)
        nc = self.copy_ndim
        if array.shape[:nc] != self.copy_shape or array.ndim < nc + event_ndim:
            raise ModelError(
                f"{what}: a per_copy value has the copy axes {self.copy_shape} first (shape copies + batch + event), "
                f"got shape {array.shape}"
            )
        return array, array.shape[nc: array.ndim - event_ndim], True

    def add_node(self, node_type: type, name: str, connections: dict, batch_shape=None, power: float = 1.0, **attributes) -> FactorNode:
        """Place a factor of ``node_type`` connecting ``connections`` (interface -> Variable or value).

        The one way a node enters a model (:func:`random_variable` ends here too): the name, the power,
        the interfaces, every value (made a checked :class:`Constant`, see :meth:`_constant`), every
        variable (this model's, see :meth:`_check_own_variable`; data already bound to it within the
        support of its interface), the plates and the node type's own checks pass before the model changes.
        """
        if not isinstance(name, str) or not name:
            raise ModelTypeError(f"node names must be non-empty strings, got {name!r}")
        if name in self._node_names:
            raise ModelError(f"node name {name!r} is used twice")
        if type(power) is not float or not 0.0 < power <= 1.0:  # (a float in (0, 1] needs no more checks)
            power = check_power(name, power)
        connected = tuple(connections)
        interfaces = _CHECKED_INTERFACES.get((node_type, connected))  # the same names of the same type: checked
        if interfaces is None:
            interfaces = _checked_interfaces(node_type, name, connections)
            _CHECKED_INTERFACES[node_type, connected] = interfaces
        resolved, shapes, placeholders = {}, [], []
        variables, data = self.variables, self.data
        first, same = None, True  # the plates: one shape for all (the common case) needs no broadcasting
        for interface, target in connections.items():
            kind = type(target)
            if kind is Constant:  # made by this model's _constant (random_variable checks its values first)
                pass
            elif kind is Variable or isinstance(target, Variable):
                if target.model is not self or variables.get(target.name) is not target:
                    self._check_own_variable(name, interface, target)
                if target.name in data:  # data bound before this node existed (an fg.Data placeholder)
                    placeholders.append((interface, target.name))
            else:
                target = self._constant(name, node_type, interface, target, attributes)
            resolved[interface] = target
            plate = target.plate_shape
            shapes.append(((interface, target), plate))
            if first is None:
                first = plate
            elif same and plate != first:
                same = False
        if batch_shape is not None:
            batch_shape = check_batch_shape(batch_shape, "node", name)
            shapes.append(("batch_shape", batch_shape))
            same = same and (first is None or batch_shape == first)
        node_batch = tuple(first) if same and first is not None else broadcast_batch_shapes(shapes, "node", name)
        if self.copy_shape:  # the plate gets the copy axes (and the padding of the model's plate rank)
            self._make_room(node_batch)
            self._node_plates[name] = node_batch
            node_batch = self.padded(node_batch)
        powers = None
        if type(power) is PerCopy:  # one power per copy: the node type checks the smallest, the node keeps them all
            if not self.copy_shape or power.value.shape != self.copy_shape:
                raise ModelError(f"node {name!r}: a per-copy power has one number per copy, shape {self.copy_shape}; "
                                 f"got shape {power.value.shape}" if self.copy_shape else
                                 f"node {name!r}: per_copy(...) needs a model with copies (fg.Model(copies=R))")
            powers, power = power.value, float(power.value.min())
        try:
            node = node_type(name, node_batch, power=power, interfaces=interfaces, **attributes)
        except (TypeError, ValueError) as error:  # a node type's own checks of its attributes
            message = str(error)
            message = message if message.startswith(f"node {name!r}") else f"node {name!r}: {message}"
            raise (ModelTypeError if isinstance(error, TypeError) else ModelError)(message) from None
        for interface, variable_name in placeholders:
            _check_support(node_type, name, interface, variable_name, self.data[variable_name])
        if self.copy_shape:
            node.copy_ndim = self.copy_ndim
        if powers is not None:  # an array of the copies padded like a batch: it multiplies messages and energies
            node.power = powers.reshape(self.copy_shape + (1,) * self.plate_rank)
        # checked: now the model changes
        self.nodes.append(node)
        self.connections[name] = resolved
        readers = self._readers
        for interface, target in resolved.items():
            if type(target) is not Constant:
                known = readers.get(target.name)
                if known is None:
                    readers[target.name] = [(node_type, name, interface)]
                else:
                    known.append((node_type, name, interface))
        self._node_names.add(name)
        self._structure_changed()
        return node

    def _check_own_variable(self, node_name: str, interface: str, variable: Variable) -> None:
        """Refuse ``variable`` on ``interface`` of node ``node_name`` unless it is a variable of this model.

        The one check of a connection's model, made by :meth:`add_node` before the model changes. A
        variable of another model — a model whose ``with`` block has ended, or an enclosing model while a
        nested ``with fg.Model()`` block is the one being built — would otherwise become an edge this
        graph has no slot for, and fail at compile time far from the statement that made it.
        """
        if variable.model is self and self.variables.get(variable.name) is variable:
            return
        where = f"node {node_name!r}, interface {interface!r}: variable {variable.name!r}"
        owner = variable.model
        if owner is self:  # undone with its failed statement, or removed: this graph has no edge for it
            raise ModelError(f"{where} is no longer part of model {self.name!r} (its statement was undone); "
                             f"declare {variable.name!r} again and use the variable that statement returns")
        if owner.name == self.name:  # two models of the default name: tell them apart by their roles
            owner_name, this = f"another model named {owner.name!r}", "the model being built (of the same name)"
        else:
            owner_name, this = f"model {owner.name!r}", f"model {self.name!r}"
        active = _active_models()
        depth = {id(model): level for level, model in enumerate(active)}
        if id(owner) not in depth:
            whose = f"{owner_name} (whose `with` block is not open here), not to {this}"
        elif depth.get(id(self), -1) > depth[id(owner)]:
            whose = f"{owner_name}, an enclosing `with fg.Model()` block, not to {this}, the nested block being built"
        else:
            whose = f"{owner_name}, a `with fg.Model()` block open inside the one of {this}, not to {this}"
        raise ModelError(
            f"{where} belongs to {whose}; a factor connects only variables of its own model. Declare "
            f"{variable.name!r} in this model (or pass a number or an fg.Data placeholder), or build node "
            f"{node_name!r} inside the `with` block of the model {variable.name!r} belongs to"
        )

    def _constant(self, node_name, node_type, interface, value, attributes: dict) -> Constant:
        kind = type(value)
        if kind is PerCopy:
            return self._per_copy_constant(node_name, node_type, interface, value, attributes)
        plain = (kind is float or kind is int or kind is np.float64) and not attributes
        if plain:  # one number: the same checks give the same answer for the same interface of the same type
            key = _plain_key(node_type, interface, value)
            known = self._plain_constants.get(key)
            if known is not None:
                return known
        array = parameter_array(self, node_name, interface, value)
        if not (math.isfinite(array.item()) if array.size == 1 else np.all(np.isfinite(array))):
            raise ModelError(f"node {node_name!r}, parameter {interface!r} contains NaN or infinite values")
        event_ndim = node_type.parameter_event_ndim(interface, attributes)
        if array.ndim < event_ndim:
            raise ModelError(
                f"node {node_name!r}, parameter {interface!r}: expected at least {event_ndim} dimension(s), "
                f"got shape {array.shape}"
            )
        try:
            node_type.check_value(interface, array)
        except ValueError as error:
            raise ModelError(f"node {node_name!r}, parameter {interface!r}: {error}") from None
        # the model's own read-only copy: a compiled plan keeps the messages of constants, so a later
        # change to the caller's array must not reach them (nor go unnoticed by some and not others)
        array = np.array(array)
        array.flags.writeable = False
        constant = Constant(array, event_ndim)
        if plain:
            # read-only and never changed in place: the nodes given the same number share one constant
            self._plain_constants[key] = constant
        return constant

    def _per_copy_constant(self, node_name, node_type, interface, value: PerCopy, attributes: dict) -> Constant:
        """A constant with one value per copy (checked as any constant), padded to the model's plate rank."""
        where = f"node {node_name!r}, parameter {interface!r}"
        event_ndim = node_type.parameter_event_ndim(interface, attributes)
        array, plate, _ = self._split_per_copy(value, where, event_ndim)
        if not np.all(np.isfinite(array)):
            raise ModelError(f"{where} contains NaN or infinite values")
        try:
            node_type.check_value(interface, array)
        except ValueError as error:
            raise ModelError(f"{where}: {error}") from None
        array = np.array(self._pad_value(array, len(plate), event_ndim))
        array.flags.writeable = False
        constant = Constant(array, event_ndim, per_copy=True, plate_shape=plate)
        self._per_copy_constants.append(constant)
        return constant

    def _discard(self, variable: Variable, node: FactorNode | None) -> None:
        """Remove a variable and the node just created for it (after a failed constructor)."""
        self._structure_changed()
        self.variables.pop(variable.name, None)
        self.data.pop(variable.name, None)
        if node is not None:
            self.nodes.remove(node)
            self.connections.pop(node.name, None)
            self._node_names.discard(node.name)
            for readers in self._readers.values():
                readers[:] = [reader for reader in readers if reader[1] != node.name]
            self._readers.pop(variable.name, None)

    # --------------------------------------------------------------- data
    def bind(self, data: dict | None = None, **more) -> None:
        """Bind or re-bind data to observed variables (shapes must match the declaration)."""
        if data is not None and not isinstance(data, dict):
            raise DataTypeError(
                f"data must be a dict of variable name -> array, got {type(data).__name__}; e.g. data={{'y': y}}"
            )
        data = dict(data or {}, **more)
        checked = {}  # bound together once every value passed, so a rejected call changes nothing
        for name, value in data.items():
            if not isinstance(name, str):
                raise DataTypeError(f"data keys must be variable names (strings), got {name!r}")
            variable = self[name]
            if not variable.observed:
                raise DataError(
                    f"variable {name!r} is latent; declare it with observed=... to bind data to it"
                )
            array = check_data(variable, value.value if isinstance(value, PerCopy) else value)
            for node_type, node_name, interface in self._readers.get(name, ()):
                _check_support(node_type, node_name, interface, name, array)  # e.g. Gamma data must be positive
            checked[name] = array
        self.data.update(checked)

    def data_for(self, variable: Variable) -> np.ndarray:
        try:
            return self.data[variable.name]
        except KeyError:
            raise DataError(
                f"observed variable {variable.name!r} has no data; pass data={{'{variable.name}': ...}} to fg.infer"
            ) from None


#: (node type, the connected interface names in order) -> the node's interfaces, for the connections found to
#: be exactly those (``FactorNode.interfaces_for`` depends on the type and the names alone)
_CHECKED_INTERFACES: dict = {}


def _checked_interfaces(node_type: type, name: str, connections: dict) -> tuple:
    """The interfaces of node ``name`` of ``node_type`` connecting ``connections``, or a ModelError naming the
    unknown or unconnected ones."""
    try:
        interfaces = node_type.interfaces_for(list(connections))
    except ValueError as error:
        raise ModelError(f"node {name!r}: {error}") from None
    if connections.keys() != set(interfaces):
        unknown = set(connections) - set(interfaces)
        if unknown:
            raise ModelError(
                f"node {name!r}: {node_type.__name__} has no interface {sorted(unknown)}; "
                f"its interfaces are {interfaces}"
            )
        missing = [i for i in interfaces if i not in connections]
        raise ModelError(f"node {name!r}: interface(s) {missing} of {node_type.__name__} are not connected")
    return interfaces


def _plain_key(node_type: type, interface: str, value) -> tuple:
    """The key of a number's constant: equal numbers (1, 1.0) share it, -0.0 and 0.0 do not."""
    return node_type, interface, value, value == 0 and math.copysign(1.0, value)


def check_data(variable: Variable, value) -> np.ndarray:
    """``value`` as the float array bound to ``variable``: numeric, of the declared shape, finite."""
    if (type(value) is np.ndarray and value.ndim == 0 and value.dtype == np.float64 and not variable.shape
            and not variable.model.copy_shape and math.isfinite(value.item())):
        return value  # one finite number for a scalar variable (a statement per observation)
    array = numeric_array(value, f"data for {variable.name!r}", DataTypeError)
    if array.size == 0:
        raise DataError(f"data for {variable.name!r} is empty (shape {array.shape}); bind at least one value")
    expected = variable.shape
    if variable.model.copy_shape:  # shared by every copy (the plate's shape), or one data set per copy
        if array.shape != variable.plate_shape + variable.event_shape:
            return _per_copy_data(variable, array)
        expected = array.shape
    if array.shape != expected:
        raise DataError(
            f"data for {variable.name!r} has shape {array.shape}, but the variable was declared with shape "
            f"{variable.shape} (batch {variable.batch_shape} + event {variable.event_shape}); "
            "rebuild the model for a new plate size"
        )
    if array.ndim == 0 and math.isfinite(array.item()):  # one number (a statement per observation): no ufunc passes
        return array
    # the sum of finite numbers is finite unless it overflows, and NaN or ±inf anywhere makes it NaN or infinite:
    # one reading pass (BLAS for a long vector) clears the common case without an N-element mask and its scan
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow or inf - inf only sends us to the mask
        total = plate_sum(array.reshape(-1)) if array.flags.c_contiguous else np.add.reduce(array, axis=None)
    if math.isfinite(float(total)):
        return array
    bad = ~np.isfinite(array)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        raise DataError(
            f"data for {variable.name!r} contains {int(bad.sum())} NaN or infinite value(s), first at index {first}; "
            "remove or impute them"
        )
    return array


def _per_copy_data(variable: Variable, array: np.ndarray) -> np.ndarray:
    """Data of a model with copies that is not shared by every copy: ``copies + plate + event``, padded."""
    model = variable.model
    per_copy_shape = model.copy_shape + variable.plate_shape + variable.event_shape
    if array.shape not in (per_copy_shape, variable.shape):
        raise DataError(
            f"data for {variable.name!r} has shape {array.shape}; in a model with copies {model.copy_shape} give "
            f"{variable.plate_shape + variable.event_shape} (plate + event, shared by every copy) or {per_copy_shape} "
            "(the copy axes first, one data set per copy)"
        )
    if not np.all(np.isfinite(array)):
        bad = ~np.isfinite(array)
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        raise DataError(
            f"data for {variable.name!r} contains {int(bad.sum())} NaN or infinite value(s), first at index {first}; "
            "remove or impute them"
        )
    return model._pad_value(array, len(variable.plate_shape), variable.event_ndim)


def _check_support(node_type, node_name: str, interface: str, variable_name: str, array: np.ndarray) -> None:
    """Data bound to a variable must lie in the support of every interface that reads it."""
    try:
        node_type.check_value(interface, array)
    except ValueError as error:
        raise DataError(
            f"data for {variable_name!r} (interface {interface!r} of node {node_name!r}): {error}"
        ) from None


def numeric_array(value, what: str, error: type = DataTypeError) -> np.ndarray:
    """``value`` as a float array, refusing what a float conversion would silently change.

    Numbers, booleans and arrays of them pass. Strings (even ``"1.5"``),
    complex numbers (whose imaginary part numpy would drop), ragged lists and
    other objects raise ``error`` (a ``TypeError``) beginning with ``what``.
    """
    kind = type(value)
    if kind is float or kind is int or kind is np.float64:  # a plain number: nothing to look for
        return np.array(value, dtype=float)
    if isinstance(value, (str, bytes)):
        raise error(f"{what} must be numeric, got the string {value!r}")
    try:
        array = np.asarray(value)
    except ValueError:  # numpy refuses ragged nested lists
        raise error(f"{what} must be a rectangular array of numbers, got a ragged {type(value).__name__}") from None
    kind = array.dtype.kind
    if kind == "O":  # mixed Python objects: look for the culprit before numpy converts what it can
        for element in array.flat:
            if isinstance(element, (str, bytes)):
                raise error(f"{what} must be numeric, got the string {element!r} among its values")
            if isinstance(element, complex) or np.iscomplexobj(element):
                kind = "c"
                break
            if not isinstance(element, (numbers.Real, np.bool_)):
                raise error(f"{what} must be numeric, got a {type(element).__name__} among its values")
    if kind in "US":
        example = array.flat[0] if array.size else ""
        raise error(
            f"{what} must be numeric, got strings such as {str(example)!r}; "
            "convert them first (np.asarray(values, dtype=float)) if they hold numbers"
        )
    if kind == "c":
        raise error(f"{what} must be real, got complex numbers; pass the part you mean (.real or abs(...))")
    if kind not in "biuf" and kind != "O":
        raise error(f"{what} must be numeric, got an array of dtype {array.dtype}")
    return np.asarray(array, dtype=float)


def parameter_array(model: "Model | None", node_name: str, interface: str, value) -> np.ndarray:
    """A constant given for ``interface`` of node ``node_name`` as a float array, or a named error.

    A string is most often the *name* of a variable where the variable itself
    belongs (``mean="mu"``): the error says so.
    """
    kind = type(value)
    if kind is float or kind is int or kind is np.float64:  # a plain number: no error to word
        return np.array(value, dtype=float)
    where = f"node {node_name!r}, parameter {interface!r}"
    if value is None:
        raise ModelTypeError(f"{where} is missing (None); pass a number, an array or a variable")
    if isinstance(value, str):
        hint = ""
        if model is not None and value in model.variables:
            hint = f"; to connect the variable {value!r}, pass the variable object it was returned as, not its name"
        raise ModelTypeError(f"{where}: expected a number, array or variable, got the string {value!r}{hint}")
    if isinstance(value, Distribution):
        raise ModelTypeError(
            f"{where}: pass a number, an array or a variable, not a distribution (fg.{type(value).__name__} is "
            "a family of messages and marginals, not a factor); for a random parameter create a variable with a "
            "prior factor from fgraph.nodes (e.g. fgraph.nodes.Normal('m', mean=0.0, var=1.0)) and pass it"
        )
    return numeric_array(value, where, ModelTypeError)


def check_batch_shape(batch_shape, kind: str, name: str) -> tuple:
    """``batch_shape`` of the ``kind`` (node, variable, Data) ``name`` as a tuple of positive whole numbers (a
    single number ``n`` means ``(n,)``)."""
    if type(batch_shape) is tuple and all(type(size) is int and size >= 1 for size in batch_shape):
        return batch_shape  # already what it should be (the plate of a variable just made): no ABC checks
    where = f"{kind} {name!r}"
    shape = (batch_shape,) if isinstance(batch_shape, numbers.Integral) else batch_shape
    try:
        shape = tuple(shape)
    except TypeError:
        raise ModelTypeError(f"{where}: batch_shape must be a tuple of whole numbers, got {batch_shape!r}") from None
    for size in shape:
        if isinstance(size, bool) or not isinstance(size, numbers.Integral):
            raise ModelTypeError(f"{where}: batch_shape must be a tuple of whole numbers, got {batch_shape!r}")
        if size < 1:
            raise ModelError(f"{where}: every batch_shape entry must be at least 1, got {batch_shape!r}")
    return tuple(int(size) for size in shape)


def check_power(node_name: str, power) -> float:
    """A node power ω: a real number in (0, 1], or ``per_copy`` numbers in (0, 1] (one per copy of a model)."""
    if type(power) is float and 0.0 < power <= 1.0:  # the common case, without the cost of an ABC check
        return power
    if type(power) is PerCopy:
        array = numeric_array(power.value, f"node {node_name!r}: power", ModelTypeError)
        if not np.all((array > 0.0) & (array <= 1.0)):
            raise ModelError(f"node {node_name!r}: every per-copy power must lie in (0, 1], got {array}")
        return PerCopy(array)
    if isinstance(power, bool) or not isinstance(power, numbers.Real):
        raise ModelTypeError(f"node {node_name!r}: power must be a number in (0, 1], got {power!r}")
    if not 0.0 < float(power) <= 1.0:
        raise ModelError(f"node {node_name!r}: power must lie in (0, 1], got {power!r}")
    return float(power)


def entropy_weight(variable: Variable, weight) -> Variable:
    """Weight the entropy of ``q(variable)`` in the free energy by τ ∈ (0, 1] (or ``per_copy`` values, one per copy).

    The free energy of a variational run then holds ``−τ H[q(x)]`` where it held ``−H[q(x)]`` (every entropy term
    of the variable, its own and those of the nodes that treat it as a cluster of its own, is scaled), and the
    coordinate step of ``q(x)`` becomes ``q(x) ∝ (Π_a μ_a(x))^{1/τ}``, the product of its incoming messages raised
    to 1/τ. With τ = ω on a latent variable whose every factor carries the node power ω, this is the fractional
    objective with ``q^ω(x)`` in its denominator (eq. 16 of the TVB paper: the local variables of a fractional
    posterior keep their untempered coordinate step). The variable must be latent and variational (not in a
    sum-product cluster); returns the variable.
    """
    if not isinstance(variable, Variable):
        raise ModelTypeError(f"entropy_weight: expected a variable, got {type(variable).__name__}")
    model = variable.model
    if variable.observed:
        raise ModelError(f"entropy_weight: variable {variable.name!r} is observed; it has no entropy to weight")
    if type(weight) is PerCopy:
        array = numeric_array(weight.value, f"entropy_weight of {variable.name!r}", ModelTypeError)
        if not model.copy_shape or array.shape != model.copy_shape:
            raise ModelError(f"entropy_weight of {variable.name!r}: per-copy values are one number per copy, shape "
                             f"{model.copy_shape}; got shape {array.shape}" if model.copy_shape else
                             f"entropy_weight of {variable.name!r}: per_copy(...) needs a model with copies")
        if not np.all((array > 0.0) & (array <= 1.0)):
            raise ModelError(f"entropy_weight of {variable.name!r}: every weight must lie in (0, 1], got {array}")
        value = np.array(array, dtype=float)
        value.flags.writeable = False
    else:
        if isinstance(weight, bool) or not isinstance(weight, numbers.Real) or not 0.0 < float(weight) <= 1.0:
            raise ModelError(f"entropy_weight of {variable.name!r} must be a number in (0, 1], got {weight!r}")
        value = float(weight)
    variable.entropy_weight = value
    model._structure_changed()
    return variable


def broadcast_batch_shapes(shapes: list, kind: str, name: str) -> tuple:
    """The broadcast of labelled batch shapes ``[(label, shape), ...]`` of the ``kind`` (node or variable)
    ``name``, or an error listing them all.

    A label is a string or an ``(interface, target)`` pair, described only
    for the error.
    """
    first = None
    for _, shape in shapes:  # the common case (one plate, or none): nothing to broadcast
        if first is None:
            first = shape
        elif shape != first:
            break
    else:
        return () if first is None else tuple(first)
    try:
        return np.broadcast_shapes(*(shape for _, shape in shapes))
    except ValueError:
        described = "; ".join(f"{label if isinstance(label, str) else _describe(*label)}: {shape}"
                              for label, shape in shapes)
        raise ModelError(
            f"{kind} {name!r}: batch shapes do not broadcast ({described}); plates must have equal sizes, "
            "or size 1 (or be absent) where a value is shared"
        ) from None


def _describe(interface: str, target) -> str:
    return f"{interface} (variable {target.name!r})" if isinstance(target, Variable) else interface


def random_variable(
    node_type: type,
    name: str,
    parameters: dict,
    observed=None,
    batch_shape=None,
    power: float = 1.0,
    event_shape=None,
    node_name: str | None = None,
    **attributes,
) -> Variable:
    """Create the variable ``name`` on the ``out`` interface of a new ``node_type`` factor.

    ``observed`` is ``None`` (latent), an array (observed and bound now) or
    ``True`` (observed, bind later; give ``batch_shape``). The batch shape is
    the broadcast of the parameters', the data's and ``batch_shape``. The event
    shape is ``event_shape`` if given, else asked of ``node_type.out_event_shape``.

    The values are made checked constants first (:meth:`Model._constant`: a number given to the same
    interface of the same node type before is checked once per model, so a statement an unrolled model
    repeats costs a look-up), then the variable is made and the node placed by :meth:`Model.add_node`,
    the one way a node enters a model. A statement that fails leaves the model as it was.
    """
    model = Model.current()
    if not isinstance(name, str) or not name:
        raise ModelTypeError(f"variable names must be non-empty strings, got {name!r}")
    where = name if node_name is None else node_name
    out_ndim = node_type.event_ndims.get("out", 0)
    arrays = {}  # interface -> a value of a kind that passed, as an array (plain numbers: see _constant)
    if event_shape is None and hasattr(node_type, "out_event_shape"):
        for interface, value in parameters.items():  # (the shape rule reads values of a kind that passed)
            kind = type(value)
            if not (kind is float or kind is int or kind is PerCopy or isinstance(value, Variable)):
                arrays[interface] = parameter_array(model, where, interface, value)
        try:
            event_shape = node_type.out_event_shape(
                {key: value.value if type(value) is PerCopy else value for key, value in parameters.items()})
        except ValueError as error:
            raise ModelError(f"variable {name!r}: {error}") from None
    elif event_shape is None:
        event_shape = ()
    else:
        out_ndim = len(event_shape)
    event_shape = tuple(event_shape)
    if len(event_shape) != out_ndim:
        raise ModelError(f"variable {name!r}: expected an event shape of rank {out_ndim}, got {event_shape}")
    plates = []  # (label, plate) of every value, for the variable's batch shape
    connections = {}  # interface -> Variable or checked Constant
    for interface, value in parameters.items():
        if isinstance(value, Variable):
            target = value
        else:
            target = model._constant(where, node_type, interface, arrays.get(interface, value), attributes)
        connections[interface] = target
        plates.append(((interface, value), target.plate_shape))
    data = None
    if type(observed) is PerCopy:  # one data set per copy: the plate follows the copy axes
        data, plate, _ = model._split_per_copy(observed, f"data for {name!r}", out_ndim)
        plates.append(("data", plate))
    elif (type(observed) is float or type(observed) is np.float64) and not out_ndim:  # one observation
        data = np.array(observed)
        plates.append(("data", ()))
    elif observed is not None and observed is not True and observed is not False:
        data = numeric_array(observed, f"data for {name!r}")
        if data.size == 0:
            raise DataError(f"data for {name!r} is empty (shape {data.shape}); pass at least one observation")
        if data.ndim < out_ndim:
            raise DataError(
                f"data for {name!r} has shape {data.shape}, but one value of {name!r} has event shape {event_shape}"
            )
        plates.append(("data", data.shape[: data.ndim - out_ndim]))
    if batch_shape is not None:
        plates.append(("batch_shape", check_batch_shape(batch_shape, "variable", name)))
    variable_batch = broadcast_batch_shapes(plates, "variable", name)  # the plate (copies: no copy axes)
    variable = model.add_variable(name, variable_batch, event_shape, observed=observed is not None and observed is not False)
    node = None
    try:
        connections["out"] = variable
        node = model.add_node(node_type, where, connections, batch_shape=variable_batch, power=power, **attributes)
        if data is not None:  # model.bind for the one variable just made, whose one reader is this node
            array = check_data(variable, data)
            _check_support(node_type, node.name, "out", name, array)
            model.data[name] = array
    except BaseException:
        model._discard(variable, node)  # a failed statement leaves the model as it was: the user may correct it
        raise
    return variable


def Data(name: str, value=None, shape=None, event_ndim: int = 0) -> Variable:
    """An observed input with no factor of its own: a placeholder for data or hyper-parameters.

    Use it where a number would go (``Normal("x", mean=Data("m0", 0.0), var=...)``)
    to re-bind the value later without rebuilding the model — e.g. for online
    learning, where yesterday's posterior parameters become today's prior.
    ``value`` binds now; otherwise give ``shape`` (``batch + event``).
    """
    model = Model.current()
    if value is None and shape is None:
        raise ModelError(f"Data {name!r}: give a value or a shape")
    if isinstance(event_ndim, bool) or not isinstance(event_ndim, numbers.Integral):
        raise ModelTypeError(f"Data {name!r}: event_ndim must be a whole number >= 0, got {event_ndim!r}")
    if event_ndim < 0:
        raise ModelError(f"Data {name!r}: event_ndim must be a whole number >= 0, got {event_ndim!r}")
    if type(value) is PerCopy:  # one value per copy: the copy axes come first
        array, plate, _ = model._split_per_copy(value, f"Data {name!r}", event_ndim)
        full_shape = plate + array.shape[array.ndim - event_ndim:]
        value = array
    elif value is not None:
        full_shape = numeric_array(value, f"data for {name!r}").shape
    else:
        full_shape = check_batch_shape(shape, "Data", name)
    if len(full_shape) < event_ndim:
        raise ModelError(f"Data {name!r}: shape {full_shape} has fewer than event_ndim={event_ndim} axes")
    split = len(full_shape) - event_ndim
    variable = model.add_variable(name, full_shape[:split], full_shape[split:], observed=True)
    if value is not None:
        try:
            model.bind({name: value})
        except BaseException:
            model._discard(variable, None)
            raise
    return variable
