"""The checks of Trustworthy VB's arguments, shared by every table and by Algorithm 1, and the paper's grid of ω
(:func:`omega_grid`). A check returns the value it accepts (as a plain ``int``, ``float`` or array; nothing for
:func:`check_sampling`) or raises a named :class:`~fgraph.models.tvb.errors.TVBError`."""
from __future__ import annotations

import numbers

import numpy as np

from fgraph.models.tvb.errors import BootstrapCountError, GridError, PowerRangeError, TVBError

__all__ = ["omega_grid", "check_grid", "check_bootstrap", "check_level", "check_positive_integer",
           "check_sampling"]


def omega_grid(size: int = 100, low: float = 1e-3, high: float = 1.0) -> np.ndarray:
    """``size`` values of ω evenly spaced in log ω from ``low`` to ``high`` (the paper's grid: 100 in
    [0.001, 1])."""
    if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 1:
        raise GridError(f"TVB: the grid needs at least one value, got size={size!r}")
    for name, value in (("low", low), ("high", high)):
        if not (isinstance(value, numbers.Real) and 0.0 < value <= 1.0):
            raise PowerRangeError(f"TVB: the grid's {name} end must be a power in (0, 1], got {value!r}")
    if low > high:
        raise GridError(f"TVB: the grid's low end {low!r} is above its high end {high!r}")
    return np.exp(np.linspace(np.log(low), np.log(high), int(size)))


def check_grid(grid) -> np.ndarray:
    """A grid of ω: a one-dimensional array of distinct powers in (0, 1]."""
    try:
        values = np.asarray(grid, dtype=float)
    except (TypeError, ValueError):
        raise GridError(f"TVB: the grid must be numbers, got {grid!r}") from None
    if values.ndim != 1:
        raise GridError(f"TVB: the grid must be a one-dimensional array of ω, got shape {values.shape}")
    if values.size == 0:
        raise GridError("TVB: the grid of ω is empty; give at least one ω in (0, 1] (omega_grid() is the paper's)")
    bad = ~((values > 0.0) & (values <= 1.0))
    if np.any(bad):
        raise PowerRangeError(f"TVB: every ω must lie in (0, 1]; the grid has {values[bad][0]!r} "
                              f"(at index {int(np.argmax(bad))})")
    if np.unique(values).size != values.size:
        raise GridError("TVB: the grid has repeated values of ω")
    return values


def check_bootstrap(n_bootstrap) -> int:
    """The number of bootstrap resamples B, an integer >= 1."""
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, numbers.Integral) or n_bootstrap < 1:
        raise BootstrapCountError(f"TVB: the number of bootstrap resamples B must be an integer >= 1, got "
                                  f"{n_bootstrap!r}")
    return int(n_bootstrap)


def check_level(level) -> float:
    """A credible level 1 − α in (0, 1)."""
    if isinstance(level, bool) or not isinstance(level, numbers.Real) or not 0.0 < level < 1.0:
        raise TVBError(f"TVB: the credible level 1 − α must lie in (0, 1), got {level!r}")
    return float(level)


def check_positive_integer(name: str, value) -> int:
    """The setting ``name``, an integer >= 1."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise TVBError(f"TVB: {name} must be an integer >= 1, got {value!r}")
    return int(value)


def check_sampling(resampling: str, seed, random_state) -> None:
    """The table's ``resampling`` (``"common"`` or ``"per_omega"``) and its seeds: ``seed`` an integer,
    ``random_state`` an integer or None (both are stored with the table)."""
    if resampling not in ("common", "per_omega"):
        raise TVBError(f"TVB: resampling must be 'common' or 'per_omega', got {resampling!r}")
    for name, value in (("seed", seed), ("random_state", random_state)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Integral)):
            raise TVBError(f"TVB: {name} must be an integer (it is stored with the table), got {value!r}")
    if seed is None:
        raise TVBError("TVB: seed must be an integer (it is stored with the table), got None")
