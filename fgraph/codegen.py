"""A plan's sweep as the source of one Python function: straight-line updates, inputs in locals.

The interpreted sweep (``Engine.update`` for every step) looks up, for every message, its binding, its
call and the kind of every input. All of that is fixed by the compiler (:mod:`fgraph.binding`), so the
sweep can be written out once per plan as Python source — the fetch of each input (an edge's partner
message read straight from the list of messages), the rule called with positional arguments, and only
the post-processing that step needs (a power, the incoming log-scales, a broadcast) — and compiled with
:func:`compile`. :func:`sweep_function` returns the first-iteration or the steady-state function;
``plan.source()`` shows the source.

The generated function does what :meth:`fgraph.engine.Engine.update` does, step by step, with the same
floating-point operations in the same order, so its messages equal the interpreted ones to the bit.

When it pays: writing and compiling the source costs about 70 µs per step, and a generated sweep saves
about 0.7 µs per step against the interpreted one (an unrolled chain, 2026-11-28: 1,200 steps, 5.3 ms
against 6.2 ms per sweep; a two-node model, 15.7 µs against 17.1 µs per ``fg.infer``): the rules and the
families' arithmetic are most of a message's cost. So a plan's steady-state sweep is generated once the
plan has run :data:`HOT_SWEEPS` sweeps (over all its runs), and the first sweep of a run is interpreted.
``FGRAPH_SWEEPS`` in the environment (or :data:`MODE`) chooses: ``auto`` (that rule, the default),
``generated`` (from the first sweep), ``interpreted`` (never: the reference the generated code is held
to), or ``compared``: every sweep runs both ways from the same state, and a message that differs in one
bit raises :class:`GeneratedSweepMismatch` naming its step (:func:`compared_sweep`; the library's tests
run in this mode in CI). Sweeps longer than :data:`MAX_GENERATED_STEPS` are interpreted.
"""
from __future__ import annotations

import os

import numpy as np

from fgraph.calls import Call
from fgraph.families.base import ExponentialFamily, damped
from fgraph.families.mixture import Mixture
from fgraph.numerical_checks import check_message, rule_failure

#: Sweeps of more steps than this are interpreted (one function of that many statements compiles slowly).
MAX_GENERATED_STEPS = 2000
#: A plan's sweep is generated once the plan has run this many sweeps (``MODE == "auto"``): the measured
#: break-even of the cost of generating against the time it saves per sweep (module docstring).
HOT_SWEEPS = 100
#: ``"auto"``, ``"generated"``, ``"interpreted"`` or ``"compared"`` (module docstring); from ``FGRAPH_SWEEPS``.
MODE = os.environ.get("FGRAPH_SWEEPS", "auto")
if MODE not in ("auto", "generated", "interpreted", "compared"):
    raise ValueError(f"FGRAPH_SWEEPS must be 'auto', 'generated', 'interpreted' or 'compared', got {MODE!r}")


class GeneratedSweepMismatch(AssertionError):
    """A generated sweep gave another message (or another outcome) than the interpreted one (``compared``)."""


def sweep_source(plan, steady: bool) -> tuple[str, dict]:
    """``(source, namespace)`` of ``sweep(engine, damping)``: the plan's sweep of the first iteration
    (``steady`` False) or of the steady state, with the constants the source names in ``namespace``."""
    namespace = {"float64": np.float64, "FAILURES": _FAILURES, "damp": damped, "check_message": check_message,
                 "rule_failure": rule_failure}
    lines = [
        "def sweep(engine, damping):",
        "    state = engine.state",
        "    outbound = state.outbound",
        "    clamped = state.clamped",
        "    inbound = state.inbound",
        "    socket_marginal = state.socket_marginal",
        "    cluster_marginal = state.cluster_marginal",
        "    set_outbound = state.set_outbound",
        "    graph = state.graph",
        "    data = state.data",
        "    current = None",
        "    try:",
    ]
    body = []
    for k, step in enumerate(plan.sweep):
        body.extend(_step_lines(k, step, steady, namespace))
    lines.extend("        " + line for line in body or ["pass"])
    lines += [
        "    except FAILURES as error:",
        "        if current is None:",
        "            raise",
        "        failure = rule_failure(current, error, state)",
        "        if failure is error:",
        "            raise",
        "        raise failure from error",
    ]
    return "\n".join(lines) + "\n", namespace


_FAILURES = (ValueError, ArithmeticError, np.linalg.LinAlgError)


def _step_lines(k: int, step, steady: bool, namespace: dict) -> list:
    """The statements of step ``k``: fetch the inputs, call the rule, finish the message, set it."""
    binding = step.binding
    socket = step.socket
    namespace[f"S{k}"] = step
    namespace[f"K{k}"] = socket
    header = f"# {k + 1}. {step.describe()}"
    if step.folded is not None:
        namespace[f"FOLDED{k}"] = step.folded
        return [header, f"set_outbound(K{k}, FOLDED{k})"]
    call = binding.calls[1 if steady else 0]
    namespace[f"F{k}"] = call.function
    lines = [header]
    local_of = {}  # socket index of a message input -> the local holding it (for the log-scales)
    arguments = []
    for j, (kind, source) in enumerate(call.sources(step.node_plan)):
        name = f"a{k}_{j}"
        lines.extend(_fetch_lines(name, kind, source, f"{k}_{j}", namespace, local_of))
        arguments.append(name)
    if call.names is not None:
        arguments = [f"{keyword}={value}" for keyword, value in zip(call.names, arguments)]
    for keyword, value in call.extra_for(step.node_plan).items():
        namespace[f"X{k}_{keyword}"] = value
        arguments.append(f"{keyword}=X{k}_{keyword}")
    lines.insert(1, f"current = S{k}")  # (a failure while reading the inputs is the rule's, as when interpreted)
    lines += [f"message = F{k}({', '.join(arguments)})", "current = None"]
    namespace[f"B{k}"] = binding.batch_shape
    lines += [f"if message.batch_shape != B{k}:", f"    message = message.broadcast_to(B{k})"]
    if binding.exponent is not None:
        namespace[f"E{k}"] = binding.exponent
        method = "power" if binding.scaled_power else "power_unscaled"
        lines.append(f"message = message.{method}(E{k})")
    if binding.adds_scales and binding.message_positions:
        terms = []
        for m, message_socket in enumerate(binding.message_sockets(step.node_plan)):
            local = local_of.get(message_socket.index)
            if local is None:  # read by the rule inside a group, or not at all: as the interpreter reads it
                namespace[f"M{k}_{m}"] = message_socket
                local = f"inbound(M{k}_{m})"
            terms.append(f"{local}.log_scale")
        lines += [f"scale = 0.0 + {' + '.join(terms)}",
                  "if type(scale) is not float64 or scale != 0.0:",
                  "    message = message.with_log_scale(message.log_scale + scale)"]
    lines += [f"if damping and outbound[{socket.index}] is not None:",
              f"    message = damp(message, outbound[{socket.index}], damping)",
              f"check_message(message, S{k}, graph, data)"]
    if binding.cluster_inputs:
        lines.append(f"state.record_cluster_inputs(S{k})")
    lines.append(f"set_outbound(K{k}, message)")
    return lines


def _fetch_lines(name: str, kind: int, source, tag: str, namespace: dict, local_of: dict) -> list:
    """Statements that put the value of one input (see :class:`~fgraph.calls.Call`) into the local ``name``."""
    if kind == Call.CLAMPED:
        return [f"{name} = clamped[{source.index}]"]
    if kind == Call.MESSAGE:
        local_of[source.index] = name
        slot = source.slot
        if not source.clamped and slot is not None and slot.kind == "edge":  # the partner's message, or init
            first, second = slot.sockets
            partner = second if source is first else first
            namespace[f"I{tag}"] = source
            return [f"{name} = outbound[{partner.index}]",
                    f"if {name} is None:",
                    f"    {name} = inbound(I{tag})"]
        namespace[f"I{tag}"] = source
        return [f"{name} = inbound(I{tag})"]
    if kind == Call.MARGINAL:
        namespace[f"Q{tag}"] = source
        return [f"{name} = socket_marginal(Q{tag})"]
    if kind == Call.CLUSTER:
        namespace[f"C{tag}"] = source
        return [f"{name} = cluster_marginal(*C{tag})"]
    members = []
    lines = []
    for m, (member_kind, member) in enumerate(source):
        member_name = f"{name}_{m}"
        lines.extend(_fetch_lines(member_name, member_kind, member, f"{tag}_{m}", namespace, {}))
        members.append(member_name)
    lines.append(f"{name} = ({', '.join(members)}{',' if len(members) == 1 else ''})")
    return lines


def sweep_function(plan, steady: bool):
    """The generated sweep of ``plan`` (of the steady state, or of the first iteration), or ``None`` where
    its sweep is interpreted (more than :data:`MAX_GENERATED_STEPS` steps)."""
    if len(plan.sweep) > MAX_GENERATED_STEPS:
        return None
    source, namespace = sweep_source(plan, steady)
    code = compile(source, f"<fgraph sweep of model {plan.graph.model.name!r}>", "exec")
    exec(code, namespace)
    return namespace["sweep"]


def compared_sweep(plan, steady: bool):
    """``sweep(engine, damping)`` that runs the generated sweep of ``plan`` and then, from the same state, the
    interpreted one, and raises :class:`GeneratedSweepMismatch` unless every message is the same to the bit
    (the same family, parameters and log-scale) — or both raise. The engine is left in the interpreted
    state. ``None`` where the sweep is interpreted anyway (more than :data:`MAX_GENERATED_STEPS` steps)."""
    kernel = sweep_function(plan, steady)
    if kernel is None:
        return None

    def sweep(engine, damping):
        before = engine.state.snapshot()
        try:
            kernel(engine, damping)
        except Exception as error:  # the interpreted sweep must fail as well: it raises its own error
            engine.state.restore(before)
            for step in plan.sweep:
                engine.update(step, damping)
            raise GeneratedSweepMismatch(f"the generated sweep of model {plan.graph.model.name!r} raised "
                                         f"{error!r}; the interpreted one did not") from error
        generated = engine.state.snapshot()[0]
        engine.state.restore(before)
        for step in plan.sweep:
            engine.update(step, damping)
        for step in plan.sweep:
            index = step.socket.index
            if message_numbers(generated[index]) != message_numbers(engine.state.outbound[index]):
                raise GeneratedSweepMismatch(
                    f"step {step.describe()} of model {plan.graph.model.name!r}: generated "
                    f"{generated[index]!r}, interpreted {engine.state.outbound[index]!r}")

    return sweep


def message_numbers(message) -> list:
    """What two messages must share to be the same: the family and every number (natural parameters and
    log-scale, weights and components of a mixture, the value of a point mass; the sums of a plate's
    likelihoods whose elements are not formed), as nested lists."""
    if message is None:
        return [None]
    numbers = [type(message).__name__]
    if isinstance(message, Mixture):
        numbers.append(np.asarray(message.weights).tolist())
        for component in message.components:
            numbers.extend(message_numbers(component))
        return numbers
    # (looked up on the type: a plate's likelihoods given by their sums make their elements on any other name)
    elements_formed = getattr(type(message), "elements_formed", None)
    checked = getattr(type(message), "checked_parameters", None)
    try:
        if elements_formed is not None and not elements_formed(message):
            parameters = message.natural_parameter_totals()  # (the elements are formed only when read)
        elif checked is not None and checked is not ExponentialFamily.checked_parameters:
            # the arrays the family stores (a Gaussian process's moments): its natural parameters would need K⁻¹
            parameters = message.checked_parameters()
        else:
            parameters = message.natural_parameters()
    except (NotImplementedError, AttributeError):
        parameters = (getattr(message, "value", None),)
    numbers.extend(np.asarray(p).tolist() for p in parameters)
    numbers.append(np.asarray(getattr(message, "log_scale", 0.0)).tolist())
    return numbers
