"""The source of a run on floats (:mod:`fgraph.floats`): one function over float locals, written from a plan.

:func:`run_source` writes ``run(state, energies, progress, iterations, free_energy, tol, final, parameters)``:
the sweeps of the plan's steady state, each step its rule's float twin (:mod:`fgraph.float_twins`) on the
expectations of its inputs, the node's power a parameter; after each sweep the free energy, each node's energy
twin and each variable's entropy from its belief (the sum of its messages' natural parameters); the tolerance
test. The source depends on the plan's structure alone (the powers and weights that depend on the data are its
parameters) and is written in the subset of Python that numba compiles. A plan or a state that has no such
form raises :class:`NotOnFloats`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from fgraph.calls import Call, argument_order
from fgraph.float_math import LOG_2PI, digamma  # (the run's code names them)
from fgraph.float_twins import (ENTROPIES, EXPECTATIONS, FLOAT_ENERGIES, FLOAT_RULES, GAMMA, GAMMA_BELIEF, NORMAL,
                                WIDTH)


class NotOnFloats(Exception):
    """A plan, or a state, that has no run on floats (the run stays on objects)."""


@dataclass(frozen=True)
class RunSource:
    """What :func:`run_source` makes: the source, the functions it names, its parameters, its state."""

    source: str
    twins: tuple  # ((name in the source, twin function), ...)
    parameters: list  # the powers and weights the source reads as p0, p1, ...
    layout: tuple  # ((socket index, position of its first float in the state), ...)
    computed: tuple  # socket indices of the messages the sweeps compute
    statements: int  # rule and energy calls per sweep (the unit of HOT_WORK)


def python_namespace(twins: tuple) -> dict:
    namespace = {"log": math.log, "lgamma": math.lgamma, "digamma": digamma, "LOG_2PI": LOG_2PI, "INF": math.inf}
    namespace.update(twins)
    return namespace


def run_source(engine, kinds: dict) -> RunSource:
    """The source of ``run(state, energies, progress, iterations, free_energy, tol, final, parameters)`` ->
    ``(met, failed)``, in the subset of Python that numba compiles.

    ``state`` holds the floats of every message the run reads (the layout); after each complete sweep the
    run writes its computed messages there, appends its free energy (``free_energy``) to ``energies`` at
    ``progress[1]`` and counts the sweep in ``progress[0]``, so an interruption or a NaN (``failed``) leaves
    the last complete sweep in them. ``tol``: stop once two successive free energies differ by less
    (−1: never); ``final``: the free energy of the last sweep only."""
    plan = engine.plan
    names, layout, position = {}, [], 0  # socket index -> the local names of its floats
    for index in sorted(kinds):
        names[index] = [f"s{index}_{j}" for j in range(WIDTH[kinds[index]])]
        layout.append((index, position))
        position += WIDTH[kinds[index]]
    positions = dict(layout)
    computed = tuple(index for index, _ in layout
                     if index in {step.socket.index for step in plan.sweep if step.folded is None})
    twins, parameters = {}, []
    body, steps = [], 0
    for k, step in enumerate(plan.sweep):
        if step.folded is not None:
            continue  # a message of constants: among the state, never changed
        body.extend(_step_lines(k, step, plan, kinds, names, twins, parameters))
        steps += 1
    energy_lines = _free_energy_lines(engine, kinds, names, twins, parameters)
    finite_checks = " and ".join(f"{name} == {name} and abs({name}) != INF" for index in computed
                                 for name in names[index][:2])
    lines = ["def run(state, energies, progress, iterations, free_energy, tol, final, parameters):"]
    lines += [f"    p{j} = parameters[{j}]" for j in range(len(parameters))]
    lines += [f"    {name} = state[{positions[index] + j}]" for index in positions for j, name in enumerate(names[index])]
    lines += ["    n = progress[1]",
              "    met = False",
              "    for iteration in range(iterations):"]
    # the free energy of the state, checked and appended to the energies (after each sweep, or after the last)
    energy = energy_lines + ["if not (F == F and abs(F) != INF):",
                             "    return met, True",
                             "energies[n] = F",
                             "n += 1"]
    lines += ["        " + line for line in body]
    lines += [f"        if not ({finite_checks or 'True'}):",
              "            return met, True",
              "        if free_energy:"]
    lines += ["            " + line for line in energy]
    lines += [f"        state[{positions[index] + j}] = {name}" for index in computed
              for j, name in enumerate(names[index])]
    lines += ["        progress[0] += 1",
              "        progress[1] = n",
              "        if free_energy and n >= 2 and abs(energies[n - 2] - energies[n - 1]) < tol:",
              "            met = True",
              "            break",
              "    if final and progress[0] > 0:  # the free energy of the last sweep only (free_energy=\"last\")"]
    lines += ["        " + line for line in energy]
    lines += ["        progress[1] = n",
              "    return met, False"]
    statements = steps + sum(1 for line in energy_lines if line.startswith("F +="))  # a twin or an entropy each
    return RunSource("\n".join(lines) + "\n", tuple(sorted(twins.items())), parameters, tuple(layout), computed,
                      max(statements, 1))


def _belief(slot, kinds: dict, names: dict) -> tuple:
    """``(kind, expressions of its floats)`` of the belief at ``slot``: the sum of its messages' natural
    parameters (normals: ξ and w; gammas: a − 1 and b)."""
    kinds_here = {kinds[socket.index] for socket in slot.sockets}
    if len(kinds_here) != 1:
        raise NotOnFloats
    kind = kinds_here.pop()
    parts = [names[socket.index] for socket in slot.sockets]
    if kind == NORMAL:
        return NORMAL, ("(" + " + ".join(p[0] for p in parts) + ")", "(" + " + ".join(p[1] for p in parts) + ")")
    shape = "(" + " + ".join(f"({p[0]} - 1.0)" for p in parts) + " + 1.0)"
    return GAMMA, (shape, "(" + " + ".join(p[1] for p in parts) + ")")


def _input_floats(kind_and_source, plan, kinds: dict, names: dict, lines: list, tag: str,
                  beliefs: dict | None = None) -> tuple:
    """``(kind, local names)`` of one input of a rule or energy (a clamped value or a belief), with the
    statements that compute a belief appended to ``lines``; with ``beliefs`` (slot index -> kind and
    locals), each belief is computed once and kept there (the free energy reads each several times)."""
    kind, source = kind_and_source
    if kind not in (Call.CLAMPED, Call.MARGINAL):
        raise NotOnFloats
    if kind == Call.CLAMPED or source.clamped:  # a constant or a datum: its floats are in the state
        if source.index not in kinds:
            raise NotOnFloats
        return kinds[source.index], names[source.index]
    slot = source.slot
    if beliefs is not None:
        return _kept_belief(slot, kinds, names, lines, beliefs)
    belief_kind, expressions = _belief(slot, kinds, names)
    local = [f"b{tag}_{j}" for j in range(len(expressions))]
    lines.append(f"{', '.join(local)} = {', '.join(expressions)}")
    return belief_kind, local


def _kept_belief(slot, kinds: dict, names: dict, lines: list, beliefs: dict) -> tuple:
    """The belief at ``slot`` computed once into locals ``q<slot>_0, q<slot>_1`` (and ``d<slot>`` = ψ(a) for a
    gamma, read by its E[log x] and its entropy): ``(kind, locals)``."""
    found = beliefs.get(slot.index)
    if found is not None:
        return found
    kind, expressions = _belief(slot, kinds, names)
    local = [f"q{slot.index}_{j}" for j in range(len(expressions))]
    lines.append(f"{', '.join(local)} = {', '.join(expressions)}")
    if kind == GAMMA:
        local.append(f"d{slot.index}")
        lines.append(f"d{slot.index} = digamma({local[0]})")
        kind = GAMMA_BELIEF
    beliefs[slot.index] = (kind, local)
    return kind, local


def _expectations(kind: str, local: list, wanted: tuple) -> list:
    table = EXPECTATIONS[kind]
    try:
        return [table[name].format(*local) for name in wanted]
    except KeyError:
        raise NotOnFloats from None


def _step_lines(k: int, step, plan, kinds: dict, names: dict, twins: dict, parameters: list) -> list:
    """The statements of step ``k`` on floats: its inputs' expectations, its rule's twin (named ``T<k>`` in
    ``twins``), the node's power (a parameter)."""
    binding = step.binding
    if binding.index is not None or binding.cluster_inputs or binding.scaled_power:
        raise NotOnFloats
    call = binding.calls[1]
    twin = FLOAT_RULES.get(call.registered)
    if twin is None or call.names is not None or call.extra_for(step.node_plan):
        raise NotOnFloats
    order = [name for name, _ in twin.reads]
    inputs = dict(zip(_argument_names(step.rules[1]), call.sources(step.node_plan)))
    if set(order) != set(inputs):
        raise NotOnFloats
    lines = [f"# step {k + 1}: {_qualified(call.registered)}"]
    arguments = []
    for position, (name, wanted) in enumerate(twin.reads):
        kind, local = _input_floats(inputs[name], plan, kinds, names, lines, f"{k}_{position}")
        arguments.extend(_expectations(kind, local, wanted))
    twins[f"T{k}"] = twin.function
    target = names[step.socket.index]
    if kinds[step.socket.index] != twin.output:
        raise NotOnFloats
    exponent = binding.exponent
    if exponent is None:
        lines.append(f"{', '.join(target)} = T{k}({', '.join(arguments)})")
    elif type(exponent) is not float and getattr(exponent, "ndim", 1) != 0:
        raise NotOnFloats
    else:
        parameters.append(float(exponent))
        power = f"p{len(parameters) - 1}"
        first, second, _ = (f"r{k}_{j}" for j in range(3))
        lines.append(f"{first}, {second}, _ = T{k}({', '.join(arguments)})")
        if twin.output == NORMAL:  # the natural parameters (ξ, −w/2) times the power
            lines.append(f"{', '.join(target)} = {power} * {first}, {power} * {second}, 0.0")
        else:  # (a − 1, −b) times the power
            lines.append(f"{', '.join(target)} = {power} * ({first} - 1.0) + 1.0, {power} * {second}, 0.0")
    return lines


def _free_energy_lines(engine, kinds: dict, names: dict, twins: dict, parameters: list) -> list:
    """Statements computing ``F``, the free energy of the state, as :func:`fgraph.free_energy.free_energy`
    (each node's energy twin named ``U<position>`` in ``twins``, its weight a parameter)."""
    from fgraph.free_energy import energy_call, variable_terms

    plan = engine.plan
    lines = ["F = 0.0"]
    beliefs = {}
    for position, node_plan in enumerate(plan.nodes.values()):
        if node_plan.sum_product or any(len(cluster) > 1 for cluster in node_plan.clusters):
            raise NotOnFloats
        energy = node_plan.energy
        twin = FLOAT_ENERGIES.get(energy.function) if energy is not None else None
        if twin is None:
            raise NotOnFloats
        call = energy_call(engine.state, node_plan)
        if call.names is not None or call.extra_for(node_plan):
            raise NotOnFloats
        inputs = dict(zip(_argument_names(energy), call.sources(node_plan)))
        if set(inputs) != {name for name, _ in twin.reads}:
            raise NotOnFloats
        arguments = []
        for index, (name, wanted) in enumerate(twin.reads):
            kind, local = _input_floats(inputs[name], plan, kinds, names, lines, f"e{position}_{index}", beliefs)
            arguments.extend(_expectations(kind, local, wanted))
        node = node_plan.node
        batch = node.batch_shape if node_plan.copies == 1 else ()
        if node_plan.copies == 1 and batch != ():
            raise NotOnFloats
        weight = float(node_plan.copies) * float(node.power)
        if type(node.power) is not float:
            raise NotOnFloats
        twins[f"U{position}"] = twin.function
        parameters.append(weight)
        lines.append(f"F += p{len(parameters) - 1} * U{position}({', '.join(arguments)})  # {_qualified(energy.function)}")
    for slot, degree, coefficient in variable_terms(engine.state):
        if coefficient is None:
            raise NotOnFloats
        kind, local = _kept_belief(slot, kinds, names, lines, beliefs)
        lines.append(f"F += {coefficient!r} * ({ENTROPIES[kind].format(*local)})  # entropy of slot {slot.index}")
    return lines


def _qualified(function) -> str:
    function = getattr(function, "__wrapped__", function)
    return f"{function.__module__}.{function.__qualname__}"


def _argument_names(bound) -> list:
    """The names of a bound rule's or energy's inputs in the order its call fetches them."""
    return list(argument_order(bound.function, bound.input_names)[0])
