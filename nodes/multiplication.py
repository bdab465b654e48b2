"""Multiplication by a known gain: f(out, in) = δ(out - a in) or δ(out - A in).

The gain is a fixed attribute of the node (``node.gain``), not an interface:

* ``Multiplication``: scalars, ``gain`` a non-zero number ``a``;
* ``MvMultiplication``: vectors, ``gain`` an m x n matrix ``A`` mapping
  ``in`` (dimension n) to ``out`` (dimension m). ``MvMultiplication`` derives
  from ``Multiplication`` so both share the rules in ``rules/multiplication``,
  which dispatch on the message family.

The gain is not batched: one gain serves every element of the node's plate
(for one known vector per observation, see :mod:`fgraph.nodes.dot`). The message to
``out`` is a proper Gaussian only if ``A`` has full row rank (``A Σ A^T``
invertible; the rule raises otherwise). The message to ``in`` is a proper
Gaussian if ``A`` has full column rank, and otherwise a
:class:`~fgraph.families.mvnormal.GaussianLikelihood`, flat along the null
space of ``A``, which the other messages at ``in`` make proper.

The factor is deterministic, so it has no proper average energy; none is
registered and the node only takes part in sum-product message passing (see
``fgraph.nodes.addition``).
"""
from __future__ import annotations

import numpy as np

from fgraph.errors import ModelError, ModelTypeError
from fgraph.model import Variable, numeric_array, random_variable
from fgraph.node import FactorNode

__all__ = ["Multiply", "Multiplication", "MvMultiplication"]


class Multiplication(FactorNode):
    """``out = a * in`` for scalars, ``a`` a non-zero number (attribute ``gain``)."""

    interfaces = ("out", "in")
    event_ndims = {"out": 0, "in": 0}
    gain_ndim = 0

    def __init__(self, name, batch_shape=(), power=1.0, gain=None, **attributes):
        gain = numeric_array(gain, f"node {name!r}: the gain", TypeError)
        if gain.ndim != self.gain_ndim:
            raise ValueError(
                f"node {name!r}: {type(self).__name__} needs a gain of {self.gain_ndim} dimension(s), got shape {gain.shape}"
            )
        if not np.all(np.isfinite(gain)):
            raise ValueError(f"node {name!r}: the gain contains NaN or infinite values")
        if gain.ndim == 0 and gain == 0.0:
            raise ValueError(f"node {name!r}: a zero gain disconnects out from in; use a constant instead")
        super().__init__(name, batch_shape, power, gain=gain, **attributes)


class MvMultiplication(Multiplication):
    """``out = A @ in`` for vectors, ``A`` an m x n matrix (attribute ``gain``)."""

    event_ndims = {"out": 1, "in": 1}
    gain_ndim = 2


def Multiply(name, gain, x, observed=None, batch_shape=None):
    """The variable ``name = gain * x`` (scalars) or ``gain @ x`` (vectors).

    ``x`` is a variable. A number ``gain`` times a scalar variable gives a
    :class:`Multiplication` node; a matrix ``gain`` (m x n) times a vector
    variable (dimension n) gives an :class:`MvMultiplication` node and an
    ``out`` of dimension m; a number times a vector variable is ``gain * I``.
    ``observed`` binds data to the product (then ``x`` is determined: the gain
    must be a non-zero number or a square invertible matrix).
    """
    if not isinstance(x, Variable):
        raise ModelError(f"Multiply {name!r}: x must be a variable; multiply constants before building the model")
    gain = numeric_array(gain, f"Multiply {name!r}: the gain", ModelTypeError)
    if x.event_ndim == 0:
        if gain.ndim != 0:
            raise ModelError(f"Multiply {name!r}: a scalar variable needs a scalar gain, got shape {gain.shape}")
        return random_variable(
            Multiplication, name, {"in": x}, observed, batch_shape=batch_shape, event_shape=(), gain=gain
        )
    if x.event_ndim != 1:
        raise ModelError(f"Multiply {name!r}: only scalars and vectors can be multiplied, got event shape {x.event_shape}")
    dimension = x.event_shape[0]
    if gain.ndim == 0:
        gain = gain * np.eye(dimension)
    if gain.ndim != 2 or gain.shape[1] != dimension:
        raise ModelError(
            f"Multiply {name!r}: the gain must be a number or an m x {dimension} matrix for a variable of "
            f"dimension {dimension}, got shape {gain.shape}"
        )
    return random_variable(
        MvMultiplication, name, {"in": x}, observed, batch_shape=batch_shape, event_shape=(gain.shape[0],), gain=gain
    )
