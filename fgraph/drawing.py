"""Drawing a model as the Forney-style factor graph it is: ``model.draw()``.

Every factor is a box (its name and node type); every variable an edge between the (at most two) factors it
joins, labelled with its name and shape; a variable on more than two factors meets them at an equality node
(a box marked ``=``), and a variable on one factor ends in a small circle — filled when it is observed. Clamped
parameters (constants) are grey text on a dotted edge. Factors replicated over a plate are drawn inside a box
labelled with the plate's size; a model with copies says so in its title.

Drawn from a compiled plan (``result.draw()``, or :func:`draw` with ``plan=``), each end of an edge at a factor also
carries the rule bound to the message that leaves the factor there, e.g. ``2. normal_mean_precision.mean.mean_field``:
its number in ``print(result.schedule)``, then the rule's name without the ``fgraph.rules.`` prefix (the steady-state
rule, the one the schedule prints, when the first iteration binds another), and the schedule's note on it in
parentheses (``when read``: an exact plan computes the message only for a reading that needs it; ``not computed``: a
plan compiled with ``marginals=`` never computes it). A factor's end at observed data has no label (the factor
reads the data and sends no message there), nor have the ends at ``=`` nodes and small circles, which multiply the
messages they receive without a rule.

The drawing is DOT text (Graphviz's language), built here without any dependency. :func:`draw` returns it as a
``graphviz.Source`` — which renders in a notebook and saves with ``.render()`` — when the ``graphviz`` package and
Graphviz's ``dot`` program are both installed (the ``draw`` extra installs the package; ``dot`` comes from the
system, e.g. ``apt-get install graphviz``), and as the DOT text itself otherwise.
"""
from __future__ import annotations

import shutil

import numpy as np

from fgraph.errors import ModelError

__all__ = ["draw", "rule_label", "to_dot"]


def _quoted(*lines: str) -> str:
    """A DOT string of one or more lines (DOT's ``\\n`` between them), quotes and backslashes escaped."""
    escaped = [str(line).replace("\\", "\\\\").replace('"', '\\"') for line in lines]
    return '"' + "\\n".join(escaped) + '"'


def _shape_text(shape: tuple) -> str:
    return "" if not shape else "[" + ", ".join(str(size) for size in shape) + "]"


def _constant_text(interface: str, value) -> str:
    array = np.asarray(value)
    if array.size == 1:
        return f"{interface} = {float(array.reshape(-1)[0]):.4g}"
    return f"{interface} {_shape_text(array.shape)}"


def rule_label(name: str) -> str:
    """A bound rule's name as a drawing shows it: ``fgraph.rules.gamma.out.from_shape_and_rate`` is
    ``gamma.out.from_shape_and_rate``; a rule of the engine itself loses ``fgraph.``; any other keeps its full name."""
    for prefix in ("fgraph.rules.", "fgraph."):
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def _rule_labels(plan) -> dict:
    """``{(node name, interface): "<number>. <rule>[ (<note>)]"}`` for every step of ``plan``'s schedule, numbered as
    ``print(plan.schedule)`` numbers them (several steps of one message, in a schedule given so, joined by ``; ``)."""
    notes = plan.schedule.notes
    labels: dict = {}
    for number, step in enumerate(plan.schedule, start=1):
        rule = rule_label(step.rules[-1].name) if step.rules else "(unresolved)"
        note = f" ({notes[step]})" if step in notes else ""
        labels.setdefault((step.node.name, step.interface), []).append(f"{number}. {rule}{note}")
    return {key: "; ".join(texts) for key, texts in labels.items()}


def to_dot(model, plan=None) -> str:
    """The DOT text of ``model``'s factor graph (module docstring); with ``plan`` (compiled from ``model``), each
    factor's end of an edge is labelled with the rule of the message leaving it there."""
    if plan is not None and plan.graph.model is not model:
        raise ModelError(f"the plan was compiled from model {plan.graph.model.name!r}, not from the model "
                         f"{model.name!r} being drawn; draw a result with result.draw()")
    rules = _rule_labels(plan) if plan is not None else {}

    def ends_text(*factor_ends) -> str:  # the rule labels of an edge's factor ends: DOT's tail, then head
        texts = [rules.get(end) for end in factor_ends]
        return "".join(f", {side}label={_quoted(text)}" for side, text in zip(("tail", "head"), texts) if text)

    lines = [f"graph {_quoted(model.name)} {{",
             "  graph [rankdir=LR, fontname=Helvetica, fontsize=11" + (", ranksep=1.5" if rules else "")
             + (f", label={_quoted('copies ' + _shape_text(model.copy_shape))}, labelloc=t" if model.copy_shape else "")
             + "];",
             "  node [fontname=Helvetica, fontsize=10];",
             "  edge [fontname=Helvetica, fontsize=9"
             + (", labelfontsize=8, labelfontcolor=blue4, labeldistance=2.5, labelangle=20" if rules else "")
             + "];"]
    copies = len(model.copy_shape)
    ends: dict = {}  # variable name -> [(factor id, (node name, interface))]
    plates: dict = {}  # plate shape -> [factor ids]
    constants = []
    for index, node in enumerate(model.nodes):
        factor = f"f{index}"
        lines.append(f"  {factor} [shape=box, style=rounded, label={_quoted(node.name, type(node).__name__)}];")
        plate = tuple(node.batch_shape[copies:])
        if plate:
            plates.setdefault(plate, []).append(factor)
        for interface, target in model.connections.get(node.name, {}).items():
            if model.variables.get(getattr(target, "name", None)) is target:  # a variable, not a constant
                ends.setdefault(target.name, []).append((factor, (node.name, interface)))
            else:
                constants.append((factor, interface, getattr(target, "value", target)))
    for number, (plate, factors) in enumerate(plates.items()):
        lines.append(f"  subgraph cluster_plate{number} {{")
        lines.append(f"    label={_quoted('plate ' + _shape_text(plate))}; style=rounded; color=gray50; fontsize=9;")
        lines.append("    " + "; ".join(factors) + ";")
        lines.append("  }")
    for name, joined in ends.items():
        variable = model.variables[name]
        label = _quoted(name + _shape_text(tuple(variable.plate_shape) + tuple(variable.event_shape)))
        if len(joined) == 2:
            (left, left_end), (right, right_end) = joined
            lines.append(f"  {left} -- {right} [label={label}{ends_text(left_end, right_end)}];")
            continue
        if len(joined) == 1:
            end = f"v_{len(lines)}"
            fill = "black" if variable.observed else "white"
            lines.append(f"  {end} [shape=circle, width=0.15, fixedsize=true, label=\"\", style=filled, "
                         f"fillcolor={fill}, tooltip={_quoted(name)}];")
        else:
            end = f"eq_{len(lines)}"
            lines.append(f"  {end} [shape=box, width=0.3, height=0.3, fixedsize=true, label=\"=\"];")
        for factor, factor_end in joined:
            lines.append(f"  {factor} -- {end} [label={label}{ends_text(factor_end)}];")
    for number, (factor, interface, value) in enumerate(constants):
        label = _quoted(_constant_text(interface, value))
        lines.append(f"  c{number} [shape=plaintext, fontcolor=gray40, label={label}];")
        lines.append(f"  {factor} -- c{number} [style=dotted, color=gray60];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def draw(model, plan=None):
    """``model``'s factor graph as a ``graphviz.Source`` when the ``graphviz`` package and the ``dot`` program are
    installed, else as DOT text (module docstring); with ``plan``, labelled with its bound rules."""
    text = to_dot(model, plan)
    if shutil.which("dot") is None:
        return text
    try:
        import graphviz
    except ImportError:
        return text
    return graphviz.Source(text)
