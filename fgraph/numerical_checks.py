"""The checks of the numbers a run makes: a message with NaN or infinite parameters is refused where it is made,
and an overflow of float64 is traced back to the data or constants too large for it.

Finite messages cost one sum of their parameters (or of their sums over a plate, which the equality node's
reduction reads anyway); the search for the cause runs only once a non-finite number has been found.
"""
from __future__ import annotations

import math

import numpy as np

from fgraph.errors import FgraphError, NumericalError, RuleError
from fgraph.families.base import Distribution, ExponentialFamily, compressed
from fgraph.families.pointmass import PointMass
from fgraph.model import Constant


def explain_overflow(graph, data: dict | None, vertex: tuple, message: str) -> str:
    """``message`` (about a NaN or infinity found at ``vertex``), led by what overflowed if the data or
    constants are too large for float64; ``message`` itself when none is.

    ``vertex`` is ``("node", name)`` or ``("variable", name)``, where the NaN or infinity was found. Every
    data array and constant clamped to a node of its connected component whose largest magnitude ``M``
    exceeds :data:`OVERFLOW_MAGNITUDE` is named, with what overflowed: ``M²`` itself past float64's
    largest number (1.8e308), the sum of the squares over its elements, or neither — then the products
    of those squares with precisions or counts did. A NaN of another cause keeps its message alone.

    Called only once a non-finite number has been found: finite data cost nothing more. Size alone is
    no fault (a likelihood that reads its data through sums, not squares, takes 1e200), so the data are
    not refused when they are bound.
    """
    component = next((c for c in graph.connected_components() if vertex in c), ())
    node_names = {name for kind, name in component if kind == "node"}
    culprits, seen = [], set()
    for socket in graph.sockets:
        if not socket.clamped or socket.node.name not in node_names:
            continue
        target = socket.target
        if isinstance(target, Constant):
            what, value = f"parameter {socket.interface!r} of node {socket.node.name!r}", target.value
            name = f"the {socket.interface} of {socket.node.name!r}"
        else:
            what, name = f"data for {target.name!r}", repr(target.name)
            value = data.get(target.name) if data is not None else None  # (None: folding constants)
        if what in seen or value is None:
            continue
        seen.add(what)
        sentence = _too_large(what, name, value)
        if sentence:
            culprits.append(sentence)
    if not culprits:
        return message
    return "".join(f"{sentence}. " for sentence in culprits) + f"The overflow surfaced as: {message}"


def rule_failure(step, error: Exception, state) -> Exception:
    """The error to raise when the rule of ``step`` raised ``error`` (a ValueError, ArithmeticError or
    LinAlgError): fgraph's own errors as they are, others as a RuleError saying where, in the rule's own
    words, led by what overflowed if the data did."""
    if isinstance(error, FgraphError):
        return error
    bound = step.rules[1] if state.steady else step.rules[0]
    return RuleError(explain_overflow(state.graph, state.data, ("node", step.node.name),
                                      f"the rule {bound.name} for {where(step)} failed: {error}"))


#: Magnitude from which a clamped value is reported as too large when a NaN or infinity appears: its square,
#: 1e300, leaves float64 (largest number 1.8e308) less than nine orders of magnitude for the sums over a
#: plate and the products with precisions that every Gaussian factor forms.
OVERFLOW_MAGNITUDE = 1e150


def _too_large(what: str, name: str, value) -> str:
    """A sentence saying that ``value`` (data or a constant, called ``what``) overflows float64 arithmetic,
    with the fix, or ``""`` when its largest magnitude is at most :data:`OVERFLOW_MAGNITUDE`."""
    value = np.asarray(value, dtype=float)
    with np.errstate(invalid="ignore"):
        largest = float(np.max(np.abs(value), initial=0.0))
    if not largest > OVERFLOW_MAGNITUDE:  # (NaN compares False: non-finite data never reach the engine anyway)
        return ""
    with np.errstate(over="ignore"):
        square = largest * largest
        squares = float(np.sum(np.square(value)))
    if not math.isfinite(square):
        overflowed = "their squares overflow"
    elif not math.isfinite(squares):
        overflowed = "the sum of their squares overflows"
    else:
        overflowed = (f"their squares reach {square:.3g}, and the products of such squares with precisions "
                      "or counts overflow")
    return (f"{what} are too large for float64 arithmetic (overflow): they are finite, largest magnitude "
            f"{largest:.3g}, but {overflowed} (float64 holds numbers up to {np.finfo(float).max:.3g}); "
            f"scale or standardise {name} (divide by a typical magnitude, or subtract the mean and divide by the "
            "standard deviation) and transform the posterior back")


def _suspicious(array) -> bool:
    """True if ``array`` may hold NaN or +inf (-inf is a legitimate log-probability)."""
    if type(array) is np.float64 or type(array) is float:
        return array != array or array == math.inf
    array = compressed(np.asarray(array))  # a value broadcast over a plate is checked once
    if array.ndim == 1 and array.size <= 16:  # a few probabilities: a sum on floats costs less than numpy's
        total = sum(array.tolist())
    else:
        total = array.item() if array.size == 1 else float(array.sum())  # NaN or +inf anywhere makes the sum so
    return total != total or total == math.inf


#: From this many batch elements on, a message is checked through the sums of its natural parameters.
PLATE_CHECK_SIZE = 64


def _checked_by_totals(message: ExponentialFamily) -> bool:
    """Whether a message's check can read the sums of its natural parameters over the plate.

    For a plate they are one pass that the equality node's reduction reuses
    (or no pass, when the rule gave them); a family that checks other arrays
    than its natural parameters keeps its own check.
    """
    if not message.batch_shape or type(message).checked_parameters is not ExponentialFamily.checked_parameters:
        return False
    return message.knows_natural_parameter_totals() or math.prod(message.batch_shape) >= PLATE_CHECK_SIZE


def check_message(message: Distribution, step, graph, data: dict | None) -> None:
    """Refuse a message with NaN or infinite parameters or log-scale: a NumericalError naming ``step``, led
    by the data or constants of its component that overflowed, if any did (:func:`explain_overflow` on
    ``graph`` and the run's ``data``). The one place a non-finite message is found."""
    try:
        _check_numbers(message, step)
    except NumericalError as error:
        explained = explain_overflow(graph, data, ("node", step.node.name), str(error))
        if explained == str(error):
            raise
        raise NumericalError(explained) from None


def _check_numbers(message: Distribution, step) -> None:
    if (not message.batch_shape and isinstance(message, ExponentialFamily)
            and type(message).checked_parameters is ExponentialFamily.checked_parameters):
        # one message of numbers: NaN or +inf anywhere makes the sum NaN or +inf (and -inf alone is legitimate)
        total = float(message.log_scale)
        for parameter in message.natural_parameters():
            total += parameter if type(parameter) is np.float64 or type(parameter) is float else float(np.sum(parameter))
        if total == total and total != math.inf:
            return
    if _suspicious(message.log_scale) and np.any(np.isnan(message.log_scale) | (message.log_scale == np.inf)):
        raise NumericalError(
            f"the message out of {where(step)} has a NaN or infinite log-scale; check the inputs of this node")
    if isinstance(message, ExponentialFamily):
        if _checked_by_totals(message) and not any(_suspicious(t) for t in message.natural_parameter_totals()):
            return  # the sums over the plate are finite, so is every element (the reduction reads the same sums)
        for parameter in message.checked_parameters():
            if _suspicious(parameter) and np.any(np.isnan(parameter) | (parameter == np.inf)):
                raise NumericalError(
                    f"the message out of {where(step)} has NaN or infinite parameters; check the inputs of this node"
                )
    elif isinstance(message, PointMass) and not np.all(np.isfinite(message.value)):
        raise NumericalError(f"the message out of {where(step)} is a point mass at NaN or infinity")


def where(step) -> str:
    """The node, its type and the interface of ``step``, for messages."""
    return f"node {step.node.name!r} ({type(step.node).__name__}), interface {step.interface!r}"
