"""Iterations to convergence from an objective trace, by an exponential fit (CAVI-CMN paper, Appendix E).

The paper counts how many steps a fit needs by recording its objective (ELBO, or log-likelihood for
maximum likelihood) at every step, fitting an exponential decay to the negative of that curve and
reading off the step at which the fitted curve has decayed by 95 %. With the fit

    f(t) = c + a · exp(−b t),      b > 0,

the curve starts at f(0) = c + a and approaches c; it has covered the fraction φ of that decay,
(f(0) − f(t)) / (f(0) − c) = 1 − exp(−b t) = φ, at

    t_φ = −log(1 − φ) / b              (t_0.95 = log 20 / b ≈ 3.0 / b).

Only the rate b matters, and it is the same for a curve and its negative (a changes sign), so the
trace may be given either way: a rising ELBO or a falling loss. Steps are counted from the first
entry of the trace (entry 0 is step 0); ``skip`` drops a transient at the start before fitting
(the authors' code does so for gradient methods) and is added back to the answer.

This module needs numpy and scipy only.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy.optimize import curve_fit

from fgraph.errors import ConvergenceWarning, DataError

__all__ = ["fit_exponential_decay", "iterations_to_fraction"]


def _decay(t, a, b, c):
    return c + a * np.exp(-b * t)


def fit_exponential_decay(trace) -> tuple[float, float, float]:
    """Least-squares fit of f(t) = c + a·exp(−b t) to ``trace`` (T,) at t = 0..T−1: (a, b, c).

    The fit runs on the trace scaled to [0, 1] and time scaled by T (so that every parameter is of
    order one for the optimiser) and is mapped back; the start values are a = first − last,
    c = last and b from the step at which the trace first crosses the middle of its range.
    Raises :class:`~fgraph.errors.DataError` if the trace is shorter than 4 entries or not finite,
    and :class:`RuntimeError` (scipy's) if the fit does not converge.
    """
    y = np.asarray(trace, dtype=np.float64)
    if y.ndim != 1 or y.size < 4:
        raise DataError(f"trace must be one curve of at least 4 values, got shape {y.shape}")
    if not np.all(np.isfinite(y)):
        raise DataError("trace has NaN or infinite values; cut it to its finite part before fitting")
    T = y.size
    t = np.arange(T) / T
    low, span = y.min(), np.ptp(y)
    if span == 0.0:
        return 0.0, np.inf, float(y[0])  # a flat curve: converged at step 0
    z = (y - low) / span
    # the first step at which the curve is past the middle of its start-to-end change: t½ ≈ log 2 / b
    middle = 0.5 * (z[0] + z[-1])
    past = np.nonzero((z - middle) * (z[0] - middle) <= 0)[0]
    half = max(past[0], 1) / T if past.size else 0.5
    start = (z[0] - z[-1], np.log(2.0) / half, z[-1])
    (a, b, c), _ = curve_fit(_decay, t, z, p0=start, maxfev=20000)
    return float(a * span), float(b / T), float(c * span + low)


def iterations_to_fraction(trace, fraction: float = 0.95, skip: int = 0):
    """The step at which an exponential fit to ``trace`` has decayed by ``fraction`` (Appendix E).

    ``trace``: (T,) or (R, T) objective values per step (ELBO, negative ELBO, loss or
    log-likelihood; the direction does not matter, see the module docstring). ``fraction`` in (0, 1).
    ``skip``: leading steps left out of the fit and added back to the result.
    Returns a float (or an (R,) array for a 2-D trace): ``skip − log(1 − fraction) / b`` in steps,
    not rounded. A curve whose fitted decay does not reach ``fraction`` within the trace (b ≤ 0,
    or a step past the last one: the fit would extrapolate), or whose fit fails, gives NaN with a
    :class:`~fgraph.errors.ConvergenceWarning`; a flat curve gives ``skip``.
    """
    if not isinstance(fraction, numbers.Real) or not 0.0 < fraction < 1.0:
        raise DataError(f"fraction must be a number strictly between 0 and 1, got {fraction!r}")
    if not isinstance(skip, numbers.Integral) or skip < 0:
        raise DataError(f"skip must be a whole number ≥ 0, got {skip!r}")
    curves = np.asarray(trace, dtype=np.float64)
    if curves.ndim not in (1, 2):
        raise DataError(f"trace must be (T,) or (R, T), got shape {curves.shape}")
    rows = np.atleast_2d(curves)
    if skip >= rows.shape[1] - 3:
        raise DataError(f"skip = {skip} leaves fewer than 4 of the trace's {rows.shape[1]} steps to fit")
    result = np.empty(rows.shape[0])
    for r, row in enumerate(rows):
        try:
            _, rate, _ = fit_exponential_decay(row[skip:])
        except RuntimeError:
            rate = np.nan
        steps = -np.log1p(-fraction) / rate if rate > 0 else np.nan  # NaN rate or a growing exponential
        if not steps <= row.size - 1 - skip:
            warnings.warn(f"trace {r}: the fitted exponential does not decay by {fraction} within the trace "
                          f"(rate {rate:.3g} per step); its step count is NaN", ConvergenceWarning, stacklevel=2)
            steps = np.nan
        result[r] = skip + steps
    return result if curves.ndim == 2 else float(result[0])
