"""Collapsing an observed plate of a conjugate factor to its sufficient statistics.

A mean-field factor replicated over a plate of N observations, whose every
latent interface is a variable *outside* the plate (a global parameter), sends
messages whose natural parameters are affine in the expected sufficient
statistics of the data. The sum over the plate of those messages is then N
times the message computed from the *averages* of the statistics:

    sum_i eta(y_i, q) = N * eta(mean_i T(y_i), q).

The same holds for the average energy. The engine uses this to run such a
plate at the cost of one factor per iteration: the data are summarised once,
by :class:`EmpiricalMoments`, when the run starts. Node types opt in with
``collapsible_plates = True`` (every variational rule and energy they
register must be affine in the moments of the observed interface).
"""
from __future__ import annotations

import math

import numpy as np

from fgraph.families.base import expectation_names
from fgraph.families.pointmass import PointMass


# Rows of the matrix view in which plate_sum adds a long vector: BLAS adds each row as a dot product with ones.
SUM_ROW_LENGTH = 1024
_ONES = np.ones(SUM_ROW_LENGTH)
_ONES.flags.writeable = False  # shared by every call


def plate_sum(flat: np.ndarray) -> np.ndarray:
    """``Σ_i flat[i]`` over the leading axis, shape ``flat.shape[1:]``.

    A long contiguous vector of scalars (the common plate of N observations)
    is added as a matrix of rows of ``SUM_ROW_LENGTH`` times a vector of ones
    (one BLAS ``gemv`` pass, memory-bound like the ``dot`` that gives
    ``Σ y²``, where numpy's pairwise ``sum`` is about 1.6 times slower), then
    the row sums and the last partial row by numpy. Each row sum is a BLAS
    dot product of 1024 terms, so the rounding error stays well below that
    of the ``dot`` over all N terms that the second moment already accepts.
    Anything else is numpy's ``add.reduce``.
    """
    count = flat.shape[0]
    if flat.ndim != 1 or count < 4 * SUM_ROW_LENGTH or flat.dtype != np.float64 or not flat.flags.c_contiguous:
        return np.add.reduce(flat, axis=0)
    rows = count // SUM_ROW_LENGTH
    whole = rows * SUM_ROW_LENGTH
    total = np.add.reduce(flat[:whole].reshape(rows, SUM_ROW_LENGTH) @ _ONES)
    return total + np.add.reduce(flat[whole:]) if whole < count else total


class EmpiricalMoments(PointMass):
    """Observed data of a plate, seen through the averages of its moments.

    It behaves as a point mass whose every moment is the plate average of that
    moment of the data: ``value`` is the mean, ``second_moment`` the mean of
    ``y**2`` (or of ``y y^T``), ``mean_log`` the mean of ``log y``, and so on.
    ``var`` is the empirical variance so that ``mean**2 + var`` is the mean of
    ``y**2``.

    Parameters
    ----------
    data : ndarray, shape ``plate_shape + batch_shape + event_shape``
    event_ndim : int
    plate_ndim : int   number of leading axes averaged over
    """

    def __init__(self, data: np.ndarray, event_ndim: int, plate_ndim: int):
        data = np.asarray(data, dtype=float)
        self._plate_ndim = plate_ndim
        self.count = math.prod(data.shape[:plate_ndim])  # N, the number of plate elements
        # plate axes flattened into one leading axis of length N
        self._flat = data.reshape((self.count,) + data.shape[plate_ndim:])
        super().__init__(plate_sum(self._flat) / self.count, event_ndim)
        self._averages = {}

    def _average(self, name: str) -> np.ndarray:
        if name not in self._averages:
            points = PointMass(self._flat, self.event_ndim)
            self._averages[name] = getattr(points, name).mean(axis=0)
        return self._averages[name]

    @property
    def second_moment(self):
        """Mean of ``y**2`` (scalars) or of ``y yᵀ`` (vectors), in one pass without a temporary."""
        if "second_moment" not in self._averages and self.event_ndim <= 1:
            self._averages["second_moment"], self._averages["spread"] = self._moments()
        return self._average("second_moment")

    def _spread(self) -> np.ndarray:
        """Empirical (co)variance: mean of ``(y - ȳ)²`` or of ``(y - ȳ)(y - ȳ)ᵀ``."""
        self.second_moment
        return self._averages["spread"]

    def _moments(self) -> tuple:
        """``(E[y²], E[(y - ȳ)²])`` (outer products for vectors), each accurate to rounding."""
        flat, count = self._flat, self.count
        if flat.ndim == 1:  # scalars without batch axes, the common case: one BLAS dot product
            second = np.dot(flat, flat) / count
        elif flat.ndim == 2 and self.event_ndim == 1:  # vectors without batch axes: Σ_i y_i y_iᵀ by BLAS
            second = (flat.T @ flat) / count
        else:
            subscripts = "i...,i...->..." if self.event_ndim == 0 else "i...j,i...k->...jk"
            second = np.einsum(subscripts, flat, flat) / count
        # E[y²] − ȳ² cancels when the spread is tiny next to the mean; then centre first (two passes)
        mean = self.value
        if flat.ndim == 1 and second - mean * mean >= 1e-4 * (mean * mean):  # the common case, in floats
            return second, second - mean * mean
        square = mean**2 if self.event_ndim == 0 else mean[..., :, None] * mean[..., None, :]
        spread = second - square
        diagonal = spread if self.event_ndim == 0 else np.diagonal(spread, axis1=-2, axis2=-1)
        scale = square if self.event_ndim == 0 else np.diagonal(square, axis1=-2, axis2=-1)
        if np.any(diagonal < 1e-4 * scale):  # rounding error of the difference above 1e-12 relative
            centred = flat - mean
            if self.event_ndim == 0:
                spread = np.einsum("i...,i...->...", centred, centred) / count
            else:
                spread = np.einsum("i...j,i...k->...jk", centred, centred) / count
            second = spread + square
        return second, spread

    @property
    def var(self):
        if self.event_ndim == 0:
            return self._spread()
        return np.diagonal(self.cov, axis1=-2, axis2=-1)

    @property
    def cov(self):
        return self._spread()

    def __repr__(self):
        return f"EmpiricalMoments(plate of {self.count}, event_shape={self.event_shape})"



def _plate_average(name: str) -> property:
    return property(lambda self: self._average(name), doc=f"Plate average of the data's ``{name}``.")


# Every other expectation a rule or an energy may ask of the data (E[log y], E[1/y], log Γ(y), ...) is the plate
# average of the per-element value, which is what the sum over the plate needs of a statistic the factor is affine
# in; deriving them from PointMass's list keeps a new expectation from falling back to the value at the mean.
for _name in expectation_names(PointMass):
    if _name != "mean" and _name not in vars(EmpiricalMoments):  # the mean is the point's value
        setattr(EmpiricalMoments, _name, _plate_average(_name))

def empirical_moments(value: np.ndarray, event_ndim: int, node_batch: tuple, copy_ndim: int) -> EmpiricalMoments:
    """The plate averages of a collapsed node's data (the node's plate: every batch axis but the copy axes).

    Data shared by every copy of a model with copies has the plate's shape
    and averages to one point; data given per copy (``copies + padded plate``)
    averages over the plate axes into one point per copy, of batch
    ``copies + (1,) * plate rank``, the batch of the collapsed sockets.
    """
    batch_ndim = value.ndim - event_ndim
    if not copy_ndim or batch_ndim < len(node_batch):  # no copies, or shared: every batch axis is a plate axis
        return EmpiricalMoments(value, event_ndim, batch_ndim if copy_ndim else len(node_batch))
    plate_ndim = batch_ndim - copy_ndim
    # the plate axes first (averaged over), then the copy axes and the plate's place kept with length 1
    moved = np.moveaxis(value, tuple(range(copy_ndim)), tuple(range(plate_ndim, batch_ndim)))
    shape = moved.shape
    moved = moved.reshape(shape[:batch_ndim] + (1,) * plate_ndim + shape[batch_ndim:])
    return EmpiricalMoments(moved, event_ndim, plate_ndim)


def _copy_ndim(node_plan) -> int:
    """The number of copy axes of the model a node belongs to (see :mod:`fgraph.model`)."""
    for socket in node_plan.sockets.values():
        if socket.slot is not None:
            return socket.slot.variable.model.copy_ndim
    return 0


def _global(batch_shape: tuple, copy_ndim: int) -> bool:
    """A batch outside every plate: ``()``, or in a model with copies only copy axes and axes of length 1."""
    if not copy_ndim:
        return batch_shape == ()
    return all(size == 1 for size in batch_shape[copy_ndim:])


def _collapsed_batch(node, copy_ndim: int) -> tuple:
    """The batch of a collapsed socket: the copy axes alone (``()`` without copies), padded with ones."""
    if not copy_ndim:
        return ()
    return node.batch_shape[:copy_ndim] + (1,) * (len(node.batch_shape) - copy_ndim)


def _plate_shape_ok(node_plan) -> bool:
    """One observed interface spans the node's plate; every other value is global (unbatched).

    With two observed interfaces a factor's terms may multiply them (the
    ``(a_i − 1) log x_i`` of a gamma factor with observed shapes and outputs),
    and the plate sum of a product is not the product of the plate averages.
    """
    node = node_plan.node
    copy_ndim = _copy_ndim(node_plan)
    if copy_ndim and _global(node.batch_shape, copy_ndim):
        return False  # no plate, only copies
    observed = False
    for socket in node_plan.sockets.values():
        if socket.slot is not None and socket.slot.kind == "observed":
            if observed or socket.batch_shape != node.batch_shape or socket.slot.variable.batch_shape != node.batch_shape:
                return False
            observed = True
        elif socket.slot is None:  # a constant
            if not _global(socket.target.batch_shape, copy_ndim):
                return False
        elif not _global(socket.slot.variable.batch_shape, copy_ndim):
            return False
    return observed


def collapsible(node_plan) -> bool:
    """Whether a variational node's observed plate can be collapsed (see module docstring)."""
    node = node_plan.node
    if node_plan.sum_product or not getattr(type(node), "collapsible_plates", False) or not node.batch_shape:
        return False
    return _plate_shape_ok(node_plan)


def collapse(node_plan) -> None:
    """Rewire a collapsible node: latent sockets carry one message standing for N copies."""
    copy_ndim = _copy_ndim(node_plan)
    node = node_plan.node
    copies = math.prod(node.batch_shape[copy_ndim:])  # the plate's size (the copies of a model are not a plate)
    for socket in node_plan.sockets.values():
        if socket.slot is not None and socket.slot.kind == "observed":
            socket.empirical = True
        else:
            socket.carry_one_message(_collapsed_batch(node, copy_ndim))
            socket.copies = copies
    node_plan.copies = copies


def plate_rule_for(node_plan):
    """The plate rule of a sum-product node over an observed plate, or ``None``.

    A sum-product factor replicated over N observations with one latent,
    global interface sends N messages whose product the equality node forms
    anyway. A node type may register that product directly as a function of
    the data's sufficient statistics, scale included (``@plate_rule``); e.g.
    ``Π_i N(μ | y_i, v) = N(μ | ȳ, v/N)`` times a constant of ``N``, ``ȳ``
    and the empirical variance. The plate then costs one message per sweep.
    """
    from fgraph import registry

    node = node_plan.node
    if not node_plan.sum_product or not node.batch_shape or type(node).couples_batch:
        return None
    latent = [i for i, s in node_plan.sockets.items() if not s.clamped]
    if len(latent) != 1 or not _plate_shape_ok(node_plan):
        return None
    families = {}
    for interface, socket in node_plan.sockets.items():
        if socket.clamped:
            observed = socket.slot is not None and socket.slot.kind == "observed"
            families[f"q_{interface}"] = EmpiricalMoments if observed else PointMass
    try:
        return registry.resolve(registry.PLATE, type(node), latent[0], families, f"node {node.name!r}")
    except LookupError:
        return None


def collapse_sum_product(node_plan) -> None:
    """Rewire a sum-product plate whose product message a plate rule computes: one message, one factor."""
    for socket in node_plan.sockets.values():
        if socket.slot is not None and socket.slot.kind == "observed":
            socket.empirical = True
        else:  # the global latent interface and the constants
            socket.carry_one_message(_collapsed_batch(node_plan.node, _copy_ndim(node_plan)))
