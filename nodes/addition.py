"""Addition factor nodes: f(out, in1, in2) = δ(out - in1 - in2).

``Addition`` adds scalars (event rank 0), ``MvAddition`` adds vectors of one
dimension d (event rank 1); ``MvAddition`` derives from ``Addition``, so both
share the rules in ``rules/addition`` (which dispatch on the message family).
The DSL constructor :func:`Add` picks the node type from the event rank of its
variable inputs.

The factor is deterministic, so it has no proper average energy
(``-E_q[log δ(...)]`` is infinite under any factorised q): no energy is
registered, and the node only takes part in sum-product message passing. In a
VMP model, keep it sum-product with
``constraints={"factorization": {"<name>": "bp"}}``; a mean-field
factorisation of it fails at compile time, as no mean-field rule exists.
"""
from __future__ import annotations

import numpy as np

from fgraph.errors import ModelError
from fgraph.model import Variable, random_variable
from fgraph.node import FactorNode
from nodes.multiplication import Multiply

__all__ = ["Add", "Addition", "MvAddition"]


class Addition(FactorNode):
    """``out = in1 + in2`` for scalars."""

    interfaces = ("out", "in1", "in2")
    event_ndims = {"out": 0, "in1": 0, "in2": 0}


class MvAddition(Addition):
    """``out = in1 + in2`` for vectors of dimension d."""

    event_ndims = {"out": 1, "in1": 1, "in2": 1}

    @classmethod
    def out_event_shape(cls, parameters) -> tuple:
        """``out`` has the event shape ``(d,)`` of the variable inputs."""
        return next(p.event_shape for p in parameters.values() if isinstance(p, Variable))


def Add(name, in1, in2, observed=None, batch_shape=None):
    """The variable ``name = in1 + in2``.

    At least one of ``in1``, ``in2`` must be a variable; the other may be a
    constant (a number or array, batched as the variable's batch and event
    shapes dictate). Scalar variables give an :class:`Addition` node, vector
    variables (event shape ``(d,)``) an :class:`MvAddition` node, and
    ``Add(name, x, x)`` the node ``name = 2 x`` (:func:`nodes.multiplication.Multiply`),
    exact where a sum node with x on both inputs would be a loop. ``observed``
    binds data to the sum (a noise-free observation of ``in1 + in2``).
    """
    variables = [v for v in (in1, in2) if isinstance(v, Variable)]
    if not variables:
        raise ModelError(f"Add {name!r}: at least one input must be a variable; add constants before building the model")
    if in1 is in2:
        # x + x = 2x: one interface for x. Two would tie x to one node twice, a loop its rules cannot see.
        return Multiply(name, 2.0, in1, observed=observed, batch_shape=batch_shape)
    event_shapes = {v.event_shape for v in variables}
    if len(event_shapes) > 1:
        raise ModelError(f"Add {name!r}: the inputs have different event shapes {sorted(event_shapes)}")
    event_shape = event_shapes.pop()
    if len(event_shape) == 0:
        node_type = Addition
    elif len(event_shape) == 1:
        node_type = MvAddition
    else:
        raise ModelError(f"Add {name!r}: only scalars and vectors can be added, got event shape {event_shape}")
    for constant in (in1, in2):
        if event_shape and not isinstance(constant, Variable) and np.shape(constant)[-1:] != event_shape:
            raise ModelError(
                f"Add {name!r}: the constant input has shape {np.shape(constant)}, but the variable input has "
                f"event shape {event_shape}; the constant's last axis must match it"
            )
    return random_variable(
        node_type, name, {"in1": in1, "in2": in2}, observed, batch_shape=batch_shape, event_shape=event_shape
    )
