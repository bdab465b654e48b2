"""The modelling DSL: ``Model`` (a context manager), variables and factor placement.

::

    import fgraph as fg
    from nodes import Normal, Gamma

    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=10.0)
        tau = Gamma("tau", shape=1.0, rate=1.0)
        y = Normal("y", mean=mu, precision=tau, observed=data)   # data: shape (N,)

A variable or factor over N i.i.d. copies is declared once: its *batch
shape* (the plate) comes from its data, its parameters or ``batch_shape=``.
Parameters of a smaller batch shape broadcast (numpy rules, right-aligned);
the engine ties them to the plate with a reduction, not with N objects.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from fgraph.errors import DataError, ModelError
from fgraph.families.base import Distribution
from fgraph.node import FactorNode


class Variable:
    """A random variable of a model (an edge of the factor graph).

    Attributes
    ----------
    name : str
    batch_shape : tuple   plate shape, e.g. ``(N,)``
    event_shape : tuple   ``()`` for scalars, ``(d,)`` vectors, ``(d, d)`` matrices
    observed : bool       whether data is bound to it (it is then clamped)
    """

    def __init__(self, model: "Model", name: str, batch_shape: tuple, event_shape: tuple, observed: bool):
        self.model = model
        self.name = name
        self.batch_shape = tuple(batch_shape)
        self.event_shape = tuple(event_shape)
        self.observed = observed

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
    """A fixed parameter value attached to one node interface (clamped, never inferred)."""

    def __init__(self, value: np.ndarray, event_ndim: int):
        self.value = value
        self.event_ndim = event_ndim
        self.batch_shape = value.shape[: value.ndim - event_ndim]
        self.event_shape = value.shape[value.ndim - event_ndim :]


class Model:
    """A factor graph under construction; use as ``with fg.Model() as model:``."""

    _active: ClassVar[list] = []

    def __init__(self, name: str = "model"):
        self.name = name
        self.variables: dict[str, Variable] = {}
        self.nodes: list[FactorNode] = []
        self.connections: dict[str, dict] = {}  # node name -> {interface: Variable | Constant}
        self.data: dict[str, np.ndarray] = {}
        self._node_names: set = set()
        self._readers: dict = {}  # variable name -> [(node type, node name, interface)]

    # ------------------------------------------------------------ context
    def __enter__(self) -> "Model":
        Model._active.append(self)
        return self

    def __exit__(self, *exc) -> None:
        Model._active.pop()

    @classmethod
    def current(cls) -> "Model":
        if not cls._active:
            raise ModelError("no active model: create variables inside `with fg.Model() as model:`")
        return cls._active[-1]

    def __getitem__(self, name: str) -> Variable:
        try:
            return self.variables[name]
        except KeyError:
            raise ModelError(
                f"unknown variable {name!r}; the model has: {', '.join(sorted(self.variables)) or '(none)'}"
            ) from None

    # ----------------------------------------------------------- building
    def add_variable(self, name: str, batch_shape=(), event_shape=(), observed: bool = False) -> Variable:
        if not isinstance(name, str) or not name:
            raise ModelError(f"variable names must be non-empty strings, got {name!r}")
        if name in self.variables:
            raise ModelError(f"variable {name!r} is defined twice; give each variable its own name")
        variable = Variable(self, name, batch_shape, event_shape, observed)
        self.variables[name] = variable
        return variable

    def add_node(self, node_type: type, name: str, connections: dict, batch_shape=None, power: float = 1.0, **attributes) -> FactorNode:
        """Place a factor of ``node_type`` connecting ``connections`` (interface -> Variable or value)."""
        if name in self._node_names:
            raise ModelError(f"node name {name!r} is used twice")
        try:
            interfaces = node_type.interfaces_for(list(connections))
        except ValueError as error:
            raise ModelError(f"node {name!r}: {error}") from None
        unknown = set(connections) - set(interfaces)
        if unknown:
            raise ModelError(
                f"node {name!r}: {node_type.__name__} has no interface {sorted(unknown)}; "
                f"its interfaces are {interfaces}"
            )
        missing = [i for i in interfaces if i not in connections]
        if missing:
            raise ModelError(f"node {name!r}: interface(s) {missing} of {node_type.__name__} are not connected")
        resolved = {}
        for interface, target in connections.items():
            if isinstance(target, Variable):
                if target.model is not self:
                    raise ModelError(f"node {name!r}: variable {target.name!r} belongs to another model")
                resolved[interface] = target
            else:
                resolved[interface] = self._constant(name, node_type, interface, target, attributes)
        shapes = [t.batch_shape for t in resolved.values()]
        if batch_shape is not None:
            shapes.append(tuple(batch_shape))
        try:
            node_batch = np.broadcast_shapes(*shapes)
        except ValueError:
            described = ", ".join(f"{i}: {t.batch_shape}" for i, t in resolved.items())
            raise ModelError(f"node {name!r}: batch shapes of its interfaces do not broadcast ({described})") from None
        try:
            node = node_type(name, node_batch, power=power, interfaces=interfaces, **attributes)
        except ValueError as error:
            raise ModelError(str(error)) from None
        self.nodes.append(node)
        self.connections[name] = resolved
        for interface, target in resolved.items():
            if isinstance(target, Variable):
                self._readers.setdefault(target.name, []).append((node_type, name, interface))
        self._node_names.add(name)
        return node

    def _constant(self, node_name, node_type, interface, value, attributes: dict) -> Constant:
        if isinstance(value, Distribution):
            raise ModelError(
                f"node {node_name!r}, interface {interface!r}: pass a number/array or a variable, not a distribution"
            )
        try:
            array = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise ModelError(
                f"node {node_name!r}, parameter {interface!r}: expected a number, array or variable, got {value!r}"
            ) from None
        if not np.all(np.isfinite(array)):
            raise ModelError(f"node {node_name!r}, parameter {interface!r} contains NaN or infinite values")
        event_ndim = node_type.parameter_event_ndim(interface, attributes)
        if array.ndim < event_ndim:
            raise ModelError(
                f"node {node_name!r}, parameter {interface!r}: expected at least {event_ndim} dimension(s), "
                f"got shape {array.shape}"
            )
        check = getattr(node_type, "check_parameter", None)
        if check is not None:
            try:
                check(interface, array)
            except ValueError as error:
                raise ModelError(f"node {node_name!r}, parameter {interface!r}: {error}") from None
        return Constant(array, event_ndim)

    # --------------------------------------------------------------- data
    def bind(self, data: dict | None = None, **more) -> None:
        """Bind or re-bind data to observed variables (shapes must match the declaration)."""
        data = dict(data or {}, **more)
        for name, value in data.items():
            variable = self[name]
            if not variable.observed:
                raise DataError(
                    f"variable {name!r} is latent; declare it with observed=... to bind data to it"
                )
            array = check_data(variable, value)
            for node_type, node_name, interface in self._readers.get(name, ()):
                check = getattr(node_type, "check_parameter", None)
                if check is not None:  # e.g. Gamma data must be positive
                    try:
                        check(interface, array)
                    except ValueError as error:
                        raise DataError(f"data for {name!r} (interface {interface!r} of node {node_name!r}): {error}") from None
            self.data[name] = array

    def data_for(self, variable: Variable) -> np.ndarray:
        try:
            return self.data[variable.name]
        except KeyError:
            raise DataError(
                f"observed variable {variable.name!r} has no data; pass data={{'{variable.name}': ...}} to fg.infer"
            ) from None


def check_data(variable: Variable, value) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise DataError(f"data for {variable.name!r} must be numeric, got {type(value).__name__}") from None
    if array.shape != variable.shape:
        raise DataError(
            f"data for {variable.name!r} has shape {array.shape}, but the variable was declared with shape "
            f"{variable.shape} (batch {variable.batch_shape} + event {variable.event_shape}); "
            "rebuild the model for a new plate size"
        )
    bad = ~np.isfinite(array)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        raise DataError(
            f"data for {variable.name!r} contains {int(bad.sum())} NaN or infinite value(s), first at index {first}; "
            "remove or impute them"
        )
    return array


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
    """
    model = Model.current()
    out_ndim = node_type.event_ndims.get("out", 0)
    batch_shapes = []
    for interface, value in parameters.items():
        if isinstance(value, Variable):
            batch_shapes.append(value.batch_shape)
        else:
            array = np.asarray(value, dtype=float) if not isinstance(value, Distribution) else np.zeros(())
            nd = node_type.parameter_event_ndim(interface, attributes)
            batch_shapes.append(array.shape[: max(array.ndim - nd, 0)])
    if event_shape is None:
        event_shape = node_type.out_event_shape(parameters) if hasattr(node_type, "out_event_shape") else ()
    else:
        out_ndim = len(event_shape)
    event_shape = tuple(event_shape)
    if len(event_shape) != out_ndim:
        raise ModelError(f"variable {name!r}: expected an event shape of rank {out_ndim}, got {event_shape}")
    data = None
    if observed is not None and observed is not True and observed is not False:
        data = np.asarray(observed, dtype=float)
        batch_shapes.append(data.shape[: data.ndim - out_ndim])
    if batch_shape is not None:
        batch_shapes.append(tuple(batch_shape))
    try:
        variable_batch = np.broadcast_shapes(*batch_shapes) if batch_shapes else ()
    except ValueError:
        raise ModelError(f"variable {name!r}: the shapes of its parameters and data do not broadcast") from None
    variable = model.add_variable(name, variable_batch, event_shape, observed=observed is not None and observed is not False)
    model.add_node(node_type, node_name or name, dict(parameters, out=variable), batch_shape=variable_batch, power=power, **attributes)
    if data is not None:
        model.bind({name: data})
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
    full_shape = np.shape(value) if value is not None else tuple(shape)
    if len(full_shape) < event_ndim:
        raise ModelError(f"Data {name!r}: shape {full_shape} has fewer than event_ndim={event_ndim} axes")
    split = len(full_shape) - event_ndim
    variable = model.add_variable(name, full_shape[:split], full_shape[split:], observed=True)
    if value is not None:
        model.bind({name: value})
    return variable
