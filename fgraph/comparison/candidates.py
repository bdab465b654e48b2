"""The candidates of a comparison and the numbers given per candidate: checks, and building them in the model.

A candidate is a function that builds its sub-model in the active model and
returns the variable (or fixed number) that enters the mixture; a prior or a
Dirichlet concentration is given per candidate as an array in candidate order
or a dict keyed by candidate name. Everything here raises a
:class:`~fgraph.errors.ModelError` that names the argument and the candidate.
"""
from __future__ import annotations

import inspect
from typing import Callable, Mapping

import numpy as np

from fgraph.errors import ModelError
from fgraph.families.categorical import SIMPLEX_TOLERANCE
from fgraph.model import Model, Variable


def candidate_names(candidates) -> tuple:
    """The names of the candidates (a dict name -> function, at least two), in switch order."""
    if not isinstance(candidates, Mapping):
        raise ModelError(
            "candidates must be a dict {name: function}, each function building its sub-model in the "
            f"active model and returning the variable that enters the mixture; got {type(candidates).__name__}"
        )
    names = tuple(candidates)
    if len(names) < 2:
        raise ModelError(f"candidates: give at least two candidate models, got {len(names)}")
    for key, function in candidates.items():
        if not isinstance(key, str) or not key:
            raise ModelError(f"candidates: names must be non-empty strings, got {key!r}")
        if not callable(function):
            raise ModelError(
                f"candidates[{key!r}] must be a function that builds the sub-model and returns its variable, "
                f"got {type(function).__name__}"
            )
    return names


def probability_vector(value, names: tuple, argument: str) -> np.ndarray:
    """A probability vector over the candidates from an array or a dict keyed by candidate name."""
    vector = _per_candidate(value, names, argument)
    if np.any(vector < 0.0):
        worst = int(np.argmin(vector))
        raise ModelError(
            f"{argument} must hold non-negative probabilities, got {float(vector[worst]):g} for candidate {names[worst]!r}"
        )
    total = float(vector.sum())
    if abs(total - 1.0) > SIMPLEX_TOLERANCE:
        raise ModelError(
            f"{argument} must sum to one (a probability vector over the candidates), but it sums to {total:.6g}"
        )
    return vector


def concentrations_per_candidate(value, names: tuple, argument: str) -> np.ndarray:
    """Dirichlet concentrations over the candidates: a positive number (for all) or one per candidate."""
    if np.ndim(value) == 0 and not isinstance(value, Mapping):
        value = np.full(len(names), _finite_float(value, argument))
    vector = _per_candidate(value, names, argument)
    if np.any(vector <= 0.0):
        worst = int(np.argmin(vector))
        raise ModelError(
            f"{argument} must hold positive concentrations, got {float(vector[worst]):g} for candidate {names[worst]!r}"
        )
    return vector


def _finite_float(value, argument: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ModelError(f"{argument} must be a number or one number per candidate, got {value!r}") from None
    if not np.isfinite(number):
        raise ModelError(f"{argument} must be finite, got {number!r}")
    return number


def _per_candidate(value, names: tuple, argument: str) -> np.ndarray:
    if isinstance(value, Mapping):
        unknown = [key for key in value if key not in names]
        if unknown:
            raise ModelError(
                f"{argument} names unknown candidate(s) {unknown}; the candidates are {list(names)}"
            )
        missing = [key for key in names if key not in value]
        if missing:
            raise ModelError(f"{argument} has no entry for candidate(s) {missing}; give one per candidate")
        value = [value[key] for key in names]
    try:
        vector = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"{argument} must be numeric, got {value!r}") from None
    if vector.shape != (len(names),):
        raise ModelError(
            f"{argument} must have one entry per candidate ({len(names)}: {', '.join(names)}), "
            f"got shape {vector.shape}"
        )
    if not np.all(np.isfinite(vector)):
        raise ModelError(f"{argument} contains NaN or infinite values")
    return vector


def plate_shape(batch_shape, argument: str = "batch_shape") -> tuple:
    """A plate as a tuple of positive integers (``None``: no plate)."""
    if batch_shape is None:
        return ()
    if np.ndim(batch_shape) == 0:
        batch_shape = (batch_shape,)
    try:
        plate = tuple(int(size) for size in batch_shape)
    except (TypeError, ValueError):
        raise ModelError(f"{argument} must be a tuple of positive integers, got {batch_shape!r}") from None
    if any(size < 1 for size in plate):
        raise ModelError(f"{argument} must be a tuple of positive integers, got {batch_shape!r}")
    return plate


def takes_batch_shape(function: Callable) -> bool:
    """Whether a candidate function accepts ``batch_shape`` (then it builds one sub-model per copy)."""
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):  # builtins without a signature
        return False
    return "batch_shape" in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


def _is_finite_number(value) -> bool:
    try:
        return value is not None and bool(np.all(np.isfinite(np.asarray(value, dtype=float))))
    except (TypeError, ValueError):
        return False


def build_candidates(candidates: Mapping, names: tuple, plate: tuple) -> list:
    """Call every candidate function in the active model; check what comes back."""
    model = Model.current()
    ends = []
    for key in names:
        function = candidates[key]
        end = function(batch_shape=plate) if takes_batch_shape(function) else function()
        if isinstance(end, Variable):
            if end.model is not model:
                raise ModelError(f"candidates[{key!r}] returned variable {end.name!r} of another model")
        elif not _is_finite_number(end):
            raise ModelError(
                f"candidates[{key!r}] returned {end!r}; a candidate must return the variable that enters the "
                "mixture (or a fixed number)"
            )
        ends.append(end)
    shapes = {key: end.event_shape for key, end in zip(names, ends) if isinstance(end, Variable)}
    if len(set(shapes.values())) > 1:
        raise ModelError(f"candidates: the returned variables must share one event shape, got {shapes}")
    return ends
