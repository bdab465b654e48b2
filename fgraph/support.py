"""Supports: the values a node interface accepts, declared per node type and checked in one place.

A node type names the support of each interface that is narrower than "any
finite value"::

    class BetaNode(FactorNode):
        support = {"out": UNIT_INTERVAL, "a": POSITIVE, "b": POSITIVE}

The model (:mod:`fgraph.model`) checks every constant and every observed
value against the support of each interface it is attached to: when the
node is built, and whenever data is bound or re-bound (``observed=``,
``fg.infer(data=...)``, ``model.bind``, ``fg.Data`` placeholders). A value
outside the support would otherwise reach the rules and come back as a NaN
evidence or a wrong posterior; here it is a ``ValueError`` that says which
element is wrong, turned by the model into a ``ModelError`` or ``DataError``
naming the variable, node and interface.

Finiteness and shapes are checked generically before any support; a support
only looks at the values. Each support checks a whole batch at once
(``value`` has shape ``batch + event``).
"""
from __future__ import annotations

import math

import numpy as np

from fgraph.families.categorical import SIMPLEX_TOLERANCE
from fgraph.families.linalg import SYMMETRY_TOLERANCE


def _index(position: tuple) -> str:
    """`` at index (i, j)`` for an element of a batch, nothing for a scalar."""
    return f" at index {tuple(int(i) for i in position)}" if position else ""


class Support:
    """A set of values. ``check(value, name)`` raises ``ValueError`` describing the first value outside it.

    Attributes
    ----------
    description : str
        The set in words, e.g. ``"(0, 1)"`` or ``"one-hot vectors"``.
    event_ndim : int
        Rank of one value (0 scalars, 1 vectors, 2 matrices): the last
        ``event_ndim`` axes of a checked array form one value.
    """

    description = "any finite value"
    event_ndim = 0

    def check(self, value: np.ndarray, name: str) -> None:
        """Raise ``ValueError`` unless every value of the batch ``value`` lies in the support."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.description})"


class Real(Support):
    """Any finite number (finiteness is checked for every value before the support)."""


class Interval(Support):
    """Scalars between ``low`` and ``high``, each end open or closed."""

    def __init__(self, low: float, high: float, low_closed: bool = False, high_closed: bool = False):
        self.low, self.high = float(low), float(high)
        self.low_closed, self.high_closed = low_closed, high_closed
        if high == math.inf and low == 0.0 and not low_closed:
            self.description = "strictly positive"
        elif high == math.inf and low == 0.0:
            self.description = "non-negative"
        else:
            self.description = f"{'[' if low_closed else '('}{low:g}, {high:g}{']' if high_closed else ')'}"

    def check(self, value: np.ndarray, name: str) -> None:
        if value.ndim == 0:  # one number (a parameter, one observation): a Python comparison, no array passes
            number = float(value)
            if ((number >= self.low if self.low_closed else number > self.low)
                    and (number <= self.high if self.high_closed else number < self.high)):
                return
        above = value >= self.low if self.low_closed else value > self.low
        below = value <= self.high if self.high_closed else value < self.high
        outside = ~(above & below)
        if not outside.any():
            return
        if self.high == math.inf:  # one-sided: the smallest value says how far off the data is
            position = np.unravel_index(np.argmin(value), np.shape(value))
            raise ValueError(
                f"{name} must be {self.description}, got minimum {float(value[position])!r}{_index(position)}"
            )
        position = tuple(int(i) for i in np.argwhere(outside)[0])
        raise ValueError(f"{name} must lie in {self.description}, got {float(value[position])!r}{_index(position)}")


class Binary(Support):
    """The numbers 0 and 1 (booleans become 0.0 and 1.0)."""

    description = "{0, 1}"

    def check(self, value: np.ndarray, name: str) -> None:
        outside = (value != 0.0) & (value != 1.0)
        if outside.any():
            position = tuple(int(i) for i in np.argwhere(outside)[0])
            raise ValueError(f"{name} must be 0 or 1, got {float(value[position])!r}{_index(position)}")


class _Vectors(Support):
    """A support of vectors (or matrices) along the last axes; ``bad_rows`` marks the values outside it."""

    event_ndim = 1

    def bad_rows(self, value: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def what(self, row: np.ndarray) -> str:
        """Why ``row`` is outside the support (a phrase after ``"... is not ... ("``)."""
        return f"{row!r}"

    def check(self, value: np.ndarray, name: str) -> None:
        if value.ndim < self.event_ndim:
            raise ValueError(f"{name} must have at least {self.event_ndim} axis/axes, got shape {value.shape}")
        bad = np.asarray(self.bad_rows(value))
        if bad.any():
            position = tuple(int(i) for i in np.argwhere(bad)[0])
            where = f"{name}{list(position)}" if position else name
            raise ValueError(f"{where} must be {self.description}, got {self.what(value[position])}")


class OneHot(_Vectors):
    """Vectors with a single 1 and zeros elsewhere (the engine's form of a categorical value)."""

    description = "one-hot (a single 1, zeros elsewhere, along the last axis)"

    def bad_rows(self, value):
        return ~(np.all((value == 0.0) | (value == 1.0), axis=-1) & (value.sum(axis=-1) == 1.0))

    def what(self, row):
        return f"{np.array2string(row, precision=4)}; pass integer labels to the node's constructor to have them converted"


class Simplex(_Vectors):
    """Probability vectors: non-negative (or, ``open``, positive) entries summing to one along the last axis."""

    def __init__(self, open: bool = False):
        self.open = open
        entries = "positive" if open else "non-negative"
        self.description = f"a probability vector ({entries} entries that sum to one within {SIMPLEX_TOLERANCE:g})"

    def bad_rows(self, value):
        negative = np.any(value <= 0.0, axis=-1) if self.open else np.any(value < 0.0, axis=-1)
        return negative | (np.abs(value.sum(axis=-1) - 1.0) > SIMPLEX_TOLERANCE)

    def what(self, row):
        return f"{np.array2string(row, precision=4)} (sum {row.sum():.6g})"


class ColumnStochastic(_Vectors):
    """Matrices whose every column is a probability vector: ``A[i, j] = P(i | j)``."""

    event_ndim = 2

    def __init__(self, open: bool = False):
        self.open = open
        entries = "positive" if open else "non-negative"
        self.description = f"column-stochastic ({entries} entries, every column summing to one within {SIMPLEX_TOLERANCE:g})"

    def bad_rows(self, value):
        negative = np.any(value <= 0.0, axis=(-2, -1)) if self.open else np.any(value < 0.0, axis=(-2, -1))
        return negative | np.any(np.abs(value.sum(axis=-2) - 1.0) > SIMPLEX_TOLERANCE, axis=-1)

    def what(self, matrix):
        return f"column sums {np.array2string(matrix.sum(axis=-2), precision=6)} and minimum entry {matrix.min():.6g}"


class PositiveDefinite(_Vectors):
    """Symmetric positive-definite d x d matrices (symmetric to :data:`SYMMETRY_TOLERANCE`, relative)."""

    event_ndim = 2
    description = "symmetric positive definite"

    def check(self, value: np.ndarray, name: str) -> None:
        if value.ndim < 2 or value.shape[-1] != value.shape[-2] or value.shape[-1] == 0:
            raise ValueError(f"{name} must be a square matrix or a batch of them (shape (..., d, d)), got shape {value.shape}")
        super().check(value, name)

    def bad_rows(self, value):
        magnitude = np.max(np.abs(value), axis=(-2, -1))
        asymmetric = np.max(np.abs(value - np.swapaxes(value, -1, -2)), axis=(-2, -1)) > SYMMETRY_TOLERANCE * magnitude
        # the smallest eigenvalue of the symmetric part; a Cholesky factorisation would say the same for SPD input
        smallest = np.linalg.eigvalsh(0.5 * (value + np.swapaxes(value, -1, -2)))[..., 0]
        return asymmetric | ~(smallest > 0.0)

    def what(self, matrix):
        asymmetry = np.max(np.abs(matrix - matrix.T))
        if asymmetry > SYMMETRY_TOLERANCE * np.max(np.abs(matrix)):
            return f"a matrix with |A - A^T| up to {asymmetry:.3g}; symmetrise it with (A + A^T) / 2"
        return f"a matrix with smallest eigenvalue {np.linalg.eigvalsh(matrix)[0]:.6g}"


REAL = Real()
POSITIVE = Interval(0.0, math.inf)
UNIT_INTERVAL = Interval(0.0, 1.0)  # open: a Beta density is 0 or infinite at the ends
PROBABILITY = Interval(0.0, 1.0, low_closed=True, high_closed=True)
BINARY = Binary()
ONE_HOT = OneHot()
SIMPLEX = Simplex()
OPEN_SIMPLEX = Simplex(open=True)
COLUMN_STOCHASTIC = ColumnStochastic()
OPEN_COLUMN_STOCHASTIC = ColumnStochastic(open=True)
POSITIVE_DEFINITE = PositiveDefinite()
