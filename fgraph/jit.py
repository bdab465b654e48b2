"""Compiled loops, when numba is installed (the ``fast`` extra); the numpy paths otherwise.

Some recursions along a long sequence (the forward–backward pass of a two-state hidden Markov
chain, a scalar Kalman filter) do a few floating-point operations per step. The engine runs them
as associative scans in numpy, whose cost is some tens of whole-array operations; a compiled
loop does the same arithmetic in one pass, several times faster on one core. Rules that have such
a loop call it when :func:`enabled` and fall back to their numpy scan otherwise; the tests hold
the two paths equal.

``FGRAPH_COMPILED=0`` in the environment, :func:`set_enabled` (False) or the context manager
``with compiled_loops(False):`` turns the compiled loops off (e.g. to compare the two paths).
Compiled functions are cached on disk next to their source (numba's ``cache=True``), so only a
first run after installation pays the compilation (about a second per function).
"""
from __future__ import annotations

import contextlib
import functools
import importlib.util
import os

__all__ = ["AVAILABLE", "enabled", "set_enabled", "compiled_loops", "compiled"]

AVAILABLE = importlib.util.find_spec("numba") is not None
_state = {"on": AVAILABLE and os.environ.get("FGRAPH_COMPILED", "1") != "0"}


def enabled() -> bool:
    """Whether rules should call their compiled loops now."""
    return _state["on"]


def set_enabled(on: bool) -> None:
    """Turn the compiled loops on (only possible with numba installed) or off."""
    _state["on"] = bool(on) and AVAILABLE


@contextlib.contextmanager
def compiled_loops(on: bool):
    """Inside the ``with`` block, run the compiled loops (``on``, with numba installed) or the numpy paths."""
    previous = _state["on"]
    set_enabled(on)
    try:
        yield
    finally:
        _state["on"] = previous


def compiled(function):
    """``function`` compiled by numba (nopython, cached on disk) when first called, or None without numba.

    numba is imported, and the function compiled, at the first call, so that a module of loops costs
    nothing until a model runs them (importing numba takes about a tenth of a second); callers test
    :func:`enabled` before calling the result.
    """
    if not AVAILABLE:
        return None
    state = {}

    @functools.wraps(function)
    def call(*arguments):
        kernel = state.get("kernel")
        if kernel is None:
            import numba

            kernel = state["kernel"] = numba.njit(cache=True, nogil=True)(function)
        return kernel(*arguments)

    return call
