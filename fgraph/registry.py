"""The rule registry: message rules, marginal rules and average energies.

A rule is a plain function whose *parameter names* say which inputs it takes
and whose *annotations* say which families it accepts::

    @rule(NormalMeanVariance, "out")
    def out_from_mean(m_mean: UnivariateNormal, q_var: PointMass, node) -> UnivariateNormal:
        ...

* ``m_<interface>`` is the incoming message on that interface (sum-product
  inside a cluster), ``q_<interface>`` the marginal of a variable in another
  cluster, ``q_<a>_<b>`` the joint marginal of a structured cluster ``(a, b)``.
* an optional ``node`` parameter receives the node instance (its attributes,
  batch shape, power).
* the return annotation names the family of the outgoing message; the
  compiler propagates it to type the next messages.

The key of a rule is ``(node type, interface, input names)``; the input names
encode the local constraint (sum-product, mean-field or structured). The
families are dispatched with :mod:`multipledispatch`. Average energies
(``U = -E_q[log f]``) and marginal rules for structured clusters register the
same way with :func:`average_energy` and :func:`marginal_rule`.
"""
from __future__ import annotations

import importlib
import inspect
import sys
from dataclasses import dataclass
from typing import Callable

from multipledispatch import Dispatcher
from multipledispatch.conflict import ambiguous

from fgraph.errors import AmbiguousRuleError, RuleNotFoundError

#: Packages imported before a model is compiled so that their rules register.
RULE_PACKAGES = ["fgraph.rules"]

MESSAGE = "message"
MARGINAL = "marginal"
ENERGY = "average_energy"
PLATE = "plate_message"


@dataclass(frozen=True)
class BoundRule:
    """A rule resolved for one concrete set of input families."""

    function: Callable
    input_names: tuple
    output_family: type | None
    wants_node: bool
    wants_index: bool = False

    def output_for(self, input_families: dict) -> type | None:
        """Family of the message this rule returns for inputs of the given families.

        The return annotation, unless the rule was registered with ``output=``
        (a function of the input families, for rules whose output family
        follows their inputs', e.g. a mixture of the input messages).
        """
        infer = getattr(self.function, "infer_output", None)
        return infer(input_families) if infer is not None else self.output_family

    @property
    def name(self) -> str:
        return f"{self.function.__module__}.{self.function.__qualname__}"

    def __call__(self, inputs: dict, node, index: int | None = None):
        arguments = {n: inputs[n] for n in self.input_names}
        if self.wants_node:
            arguments["node"] = node
        if self.wants_index:
            arguments["index"] = index
        return self.function(**arguments)


class _Entry:
    """All rules for one (kind, node type, target, input names) key."""

    def __init__(self, label: str):
        self.dispatcher = Dispatcher(label)
        self.meta: dict = {}  # signature -> (function, output family, wants_node, wants_index)


_REGISTRY: dict = {}
_RESOLVED: dict = {}  # memo of resolve(); cleared whenever a rule registers
_GENERATION = [0]  # how many rules have registered: a plan compiled before a registration may bind other rules


def generation() -> int:
    """A number that changes whenever a rule registers (compiled plans remember which they were bound under)."""
    return _GENERATION[0]


def _ambiguities_are_reported_at_resolution(dispatcher, ambiguities) -> None:
    """multipledispatch warns about ambiguous signatures on registration; fgraph raises when one is used."""


def _signature_of(function: Callable, kind: str):
    signature = inspect.signature(function, eval_str=True)
    parameters = signature.parameters
    names, families = [], []
    wants_node = wants_index = False
    for name, parameter in parameters.items():
        if name == "node":
            wants_node = True
            continue
        if name == "index":  # position of the target within a variadic group (rules for in1 ... inK)
            wants_index = True
            continue
        if not (name.startswith("m_") or name.startswith("q_")):
            raise TypeError(
                f"rule {function.__qualname__}: parameter {name!r} must be named m_<interface>, "
                "q_<interface>, node or index"
            )
        if parameter.annotation is inspect.Parameter.empty:
            raise TypeError(f"rule {function.__qualname__}: parameter {name!r} needs a family annotation")
        names.append(name)
        families.append(parameter.annotation)
    output = signature.return_annotation
    output = None if output is inspect.Signature.empty else output
    return tuple(names), tuple(families), output, wants_node, wants_index


def _register(kind: str, node_type: type, target, function: Callable, operator=None) -> Callable:
    names, families, output, wants_node, wants_index = _signature_of(function, kind)
    order = sorted(range(len(names)), key=lambda i: names[i])
    names = tuple(names[i] for i in order)
    families = tuple(families[i] for i in order)
    key = (kind, node_type, target, names, operator)
    entry = _REGISTRY.get(key)
    if entry is None:
        entry = _REGISTRY[key] = _Entry(f"{node_type.__name__}.{target}")
    previous = entry.meta.get(families)
    if previous is not None and previous[0].__qualname__ != function.__qualname__:
        raise ValueError(
            f"{entry.dispatcher.name}: {function.__module__}.{function.__qualname__} has the same inputs "
            f"({_describe_inputs(names, families)}) as {previous[0].__module__}.{previous[0].__qualname__}; "
            "give one of them an operator name or different input families"
        )
    _RESOLVED.clear()
    _GENERATION[0] += 1
    entry.dispatcher.add(families, function)
    entry.dispatcher.reorder(on_ambiguity=_ambiguities_are_reported_at_resolution)
    entry.meta[families] = (function, output, wants_node, wants_index)
    return function


def rule(node_type: type, interface: str, operator: str | None = None, output=None):
    """Register a message rule for ``interface`` of ``node_type``.

    ``operator`` names an alternative approximation of the same factor (e.g. a
    logistic factor by Pólya-Gamma VMP or by a Gaussian likelihood
    approximation); a node selects it with its ``operator`` attribute or with
    ``Constraints(operator={node name: ...})``. Rules registered without an
    operator serve every node whose operator has no rule of its own.
    ``output`` (optional) computes the output family from the input families
    (a dict name -> family) where the return annotation cannot say it.
    """

    def decorator(function):
        if output is not None:
            function.infer_output = output
        return _register(MESSAGE, node_type, interface, function, operator)

    return decorator


def plate_rule(node_type: type, interface: str):
    """Register the product over an observed plate of a sum-product node's messages to ``interface``.

    The rule receives the observed interfaces as ``q_<name>: EmpiricalMoments``
    (plate averages, ``.count`` = N) and constants as point masses, and returns
    the product of the N messages with its log-scale (see :mod:`fgraph.plates`).
    """

    def decorator(function):
        return _register(PLATE, node_type, interface, function)

    return decorator


def marginal_rule(node_type: type, cluster: tuple, operator: str | None = None):
    """Register a rule for the joint marginal of a structured ``cluster`` of interfaces."""

    def decorator(function):
        return _register(MARGINAL, node_type, tuple(cluster), function, operator)

    return decorator


def average_energy(node_type: type, operator: str | None = None):
    """Register the average energy ``U = -E_q[log f]`` of ``node_type`` (shape: batch)."""

    def decorator(function):
        return _register(ENERGY, node_type, None, function, operator)

    return decorator


@dataclass(frozen=True)
class EnergyTotal:
    """The sum over a plate of an average energy, registered with :func:`energy_total`.

    ``function`` takes the energy's inputs and returns ``(Σ U, count)`` — the sum over the elements it
    broadcasts to and their number — or ``None`` where it has no shortcut (the engine then sums the
    energies); ``per_copy``: in a model with copies it returns one sum per copy (an array of the copy
    shape) and the number of elements of one copy.
    """

    function: Callable
    per_copy: bool = False


_ENERGY_TOTALS: dict = {}  # average energy function -> its EnergyTotal


def energy_total(energy: Callable, per_copy: bool = False):
    """Register the decorated function as the sum over a plate of the average energy ``energy`` (see
    :class:`EnergyTotal`): the free energy reads only that sum, which a node can often give from sums its
    messages computed already (``Σ_i E[(y_i − μ)²]``) without an energy per element."""

    def decorator(function):
        _ENERGY_TOTALS[energy] = EnergyTotal(function, per_copy)
        return function

    return decorator


def total_of(energy: Callable) -> EnergyTotal | None:
    """The :class:`EnergyTotal` registered for the average energy function ``energy``, if any."""
    return _ENERGY_TOTALS.get(energy)


def load_rule_packages() -> None:
    """Import the packages whose modules register rules (see :data:`RULE_PACKAGES`)."""
    for package in RULE_PACKAGES:
        if package not in sys.modules:  # every compilation asks: the import machinery only the first time
            importlib.import_module(package)


@dataclass(frozen=True)
class Registration:
    """One registered function, as :func:`rules_of` lists it.

    ``kind`` is :data:`MESSAGE`, :data:`MARGINAL`, :data:`PLATE` or :data:`ENERGY`; ``node_type`` the type
    it was registered for (the node type asked about or one of its bases); ``target`` the interface of the
    outgoing message, the cluster (a tuple) of a marginal rule, ``None`` for an average energy; ``inputs``
    the parameter names (``m_<interface>`` a message, ``q_<interface>`` a marginal, ``q_<a>_<b>`` a joint
    marginal), sorted, and ``families`` their annotated families in the same order; ``output`` the return
    annotation (``None`` when the output family follows the inputs'); ``operator`` the alternative
    approximation it belongs to (``None``: every operator).
    """

    kind: str
    node_type: type
    target: object
    inputs: tuple
    families: tuple
    output: type | None
    operator: str | None
    function: Callable

    @property
    def name(self) -> str:
        """The function's qualified name, ``module.qualname``."""
        return f"{self.function.__module__}.{self.function.__qualname__}"


def node_types() -> list:
    """Every node type with at least one registered function, ordered by module and name.

    Imports the rule packages first (:func:`load_rule_packages`), so the list is the one a compiled model
    sees. A subclass that only inherits its base's rules (e.g. a multivariate variant) is not listed here;
    :func:`rules_of` finds the inherited rules for it.
    """
    load_rule_packages()
    found = {key[1] for key in _REGISTRY}
    return sorted(found, key=lambda cls: (cls.__module__, cls.__qualname__))


def rules_of(node_type: type) -> list:
    """Every :class:`Registration` that serves ``node_type``: registered for it or for one of its bases.

    In registration order. Imports the rule packages first, like :func:`node_types`.
    """
    if not isinstance(node_type, type):
        raise TypeError(f"rules_of(node_type): expected a node class, got {node_type!r}")
    load_rule_packages()
    found = []
    for (kind, registered_for, target, names, operator), entry in _REGISTRY.items():
        if not issubclass(node_type, registered_for):
            continue
        for families, (function, output, _wants_node, _wants_index) in entry.meta.items():
            found.append(Registration(kind, registered_for, target, names, families, output, operator, function))
    return found


def _describe(families) -> str:
    return ", ".join(getattr(f, "__name__", str(f)) for f in families)


def available(kind: str, node_type: type, target=None) -> list:
    """Human-readable list of the rules registered for a node type (and target)."""
    lines = []
    for (k, n, t, names, operator), entry in _REGISTRY.items():
        if k != kind or not issubclass(node_type, n) or (target is not None and t != target):
            continue
        suffix = f"  [operator {operator!r}]" if operator else ""
        for families in entry.meta:
            args = ", ".join(f"{a}: {f.__name__}" for a, f in zip(names, families))
            head = f"{n.__name__}.{t}" if t is not None else n.__name__
            lines.append(f"{head}({args}){suffix}")
    return lines


def declared_outputs(kind: str, node_type: type, target) -> list:
    """The families the rules registered for ``node_type``/``target`` declare they return (their return
    annotations; rules whose output follows their inputs', ``output=``, declare none and are left out)."""
    return [meta[1] for (k, n, t, _, _), entry in _REGISTRY.items()
            if k == kind and t == target and issubclass(node_type, n)
            for meta in entry.meta.values() if meta[1] is not None]


def operators(node_type: type) -> frozenset:
    """Names of the alternative operators registered for ``node_type`` (found once per registry generation)."""
    key = (node_type, _GENERATION[0])
    names = _OPERATORS.get(key)
    if names is None:
        names = _OPERATORS[key] = frozenset(entry[4] for entry in _REGISTRY
                                            if entry[4] is not None and issubclass(node_type, entry[1]))
    return names


_OPERATORS: dict = {}  # (node type, registry generation) -> the operators registered for it


def resolve(kind: str, node_type: type, target, input_families: dict, where: str, operator: str | None = None) -> BoundRule:
    """Find the one rule for ``node_type``/``target`` taking exactly ``input_families``.

    ``input_families`` maps input names (``m_x``, ``q_y``, ...) to family
    classes. Raises :class:`RuleNotFoundError` or :class:`AmbiguousRuleError`
    naming ``where`` (the node), the target and the incoming families, and
    listing the rules that exist.
    """
    names = tuple(sorted(input_families))
    families = tuple(input_families[n] for n in names)
    memo_key = (kind, node_type, target, names, families, operator)
    bound = _RESOLVED.get(memo_key)
    if bound is None:
        bound = _RESOLVED[memo_key] = _resolve(kind, node_type, target, names, families, where, operator)
    return bound


def _resolve(kind, node_type, target, names, families, where, operator) -> BoundRule:
    if operator is not None and operator not in operators(node_type):
        known = ", ".join(sorted(operators(node_type))) or "(none)"
        raise RuleNotFoundError(f"{where}: {node_type.__name__} has no operator {operator!r}; operators: {known}")
    entry = None
    # the node's operator first, then the rules shared by all operators; the most derived node type wins
    for chosen in ((operator, None) if operator is not None else (None,)):
        for cls in node_type.__mro__:
            entry = _REGISTRY.get((kind, cls, target, names, chosen))
            if entry is not None:
                break
        if entry is not None:
            break
    function = None
    if entry is not None:
        # multipledispatch's resolution order: the most specific matching signature first
        matching = [
            signature for signature in entry.dispatcher.ordering
            if len(signature) == len(families) and all(issubclass(f, c) for f, c in zip(families, signature))
        ]
        if matching:
            rivals = [s for s in matching[1:] if ambiguous(matching[0], s)]
            if rivals:
                raise AmbiguousRuleError(
                    f"{where}: several {kind} rules fit {target!r} with inputs ({_describe_inputs(names, families)}): "
                    + "; ".join(_describe(s) for s in [matching[0]] + rivals)
                    + ". Register a more specific rule to break the tie."
                )
            function, output, wants_node, wants_index = entry.meta[matching[0]]
    if function is None:
        existing = available(kind, node_type)
        listing = "\n  ".join(existing) if existing else "(none)"
        what = f"interface {target!r}" if kind == MESSAGE else ("average energy" if kind == ENERGY else f"marginal {target!r}")
        raise RuleNotFoundError(
            f"{where}: no {kind} rule for {what} of {node_type.__name__} with inputs "
            f"({_describe_inputs(names, families)}).\nRules that exist for it:\n  {listing}\n"
            "Change the factorisation or the constraints of this node, or register a rule for these families."
        )
    return BoundRule(function, names, output, wants_node, wants_index)


def _describe_inputs(names, families) -> str:
    return ", ".join(f"{n}: {getattr(f, '__name__', f)}" for n, f in zip(names, families))
