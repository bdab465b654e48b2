"""Addition factor nodes: f(out, in1, in2) = δ(out - in1 - in2).

``Addition`` adds scalars (event rank 0), ``MvAddition`` adds vectors of one
dimension d (event rank 1); ``MvAddition`` derives from ``Addition``, so both
share the rules in ``rules/addition`` (which dispatch on the message family).
The DSL constructor :func:`Add` picks the node type from the event rank of its
variable inputs.

The factor is deterministic, so it has no proper average energy
(``-E_q[log δ(...)]`` is infinite under any factorised q), and the node only
takes part in sum-product message passing. In a VMP model, keep it
sum-product with ``constraints={"factorization": {"<name>": "bp"}}``; a
mean-field factorisation of it fails at compile time, as no mean-field rule
exists.

The one energy registered is for a node whose three interfaces are all
observed or constant: the factor is then a number. A sum determined by its
inputs is treated as a point mass (as the messages of this node are: the
message to ``out`` from known inputs is ``δ(out - a - b)`` with log-scale 0),
so an observation equal to ``a + b`` adds nothing to the log evidence, and one
that differs is impossible: it raises a :class:`~fgraph.errors.DataError`
naming the node, rather than returning ``-inf``.
"""
from __future__ import annotations

import numpy as np

from fgraph.errors import DataError, ModelError
from fgraph.families import PointMass
from fgraph.model import Variable, random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy
from fgraph.nodes.multiplication import Multiply

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
    ``Add(name, x, x)`` the node ``name = 2 x`` (:func:`fgraph.nodes.multiplication.Multiply`),
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


# Observed sums equal to in1 + in2 up to the rounding of three floating-point numbers are consistent.
ROUNDING = 4.0 * np.finfo(float).eps


@average_energy(Addition)
def _known_sum_energy(q_out: PointMass, q_in1: PointMass, q_in2: PointMass, node):
    """All interfaces known: 0 (log 1) where ``out = in1 + in2``; a contradiction raises a DataError.

    ``out`` counts as equal when ``|out - (in1 + in2)| <= 4 ε (|out| + |in1| + |in2|)``
    (ε the machine epsilon), which covers the rounding of data written in decimal.
    Shape: the node's batch shape (vectors are compared over their last axis).
    """
    out, in1, in2 = q_out.value, q_in1.value, q_in2.value
    difference = np.abs(out - (in1 + in2))
    consistent = difference <= ROUNDING * (np.abs(out) + np.abs(in1) + np.abs(in2))
    if not np.all(consistent):
        index = tuple(int(i) for i in np.argwhere(~consistent)[0])
        out, in1, in2 = (float(np.broadcast_to(v, consistent.shape)[index]) for v in (out, in1, in2))
        raise DataError(
            f"node {node.name!r} ({type(node).__name__}): the observed out = {out!r} is not in1 + in2 = "
            f"{in1!r} + {in2!r}{f' (element {index})' if index else ''}; a noise-free sum of known inputs "
            "cannot take another value. Fix the data, or observe the sum with noise "
            "(Normal(..., mean=<the sum>, var=..., observed=...))"
        )
    return np.zeros(consistent.shape[: consistent.ndim - q_out.event_ndim])
