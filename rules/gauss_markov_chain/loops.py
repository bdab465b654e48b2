"""The scalar Kalman filter and backward information filter as compiled loops over time (:mod:`fgraph.jit`).

The quantities the scans of :func:`rules.gauss_markov_chain.out._forward_backward_by_scan` produce,
step by step, for chains laid out ``(C, T)``, with observations μ_t = N(y_t, r_t) of x_t, gain a,
process variance q and start N(m₀, v₀) per chain:

* filter: N(m^f_t, v^f_t) = p(x_t | μ_1..μ_t), by the predict/update recursion
  (predicted N(a m^f_{t−1}, a² v^f_{t−1} + q), updated by μ_t in precision form);
* backward information: β_t(x) = exp(−½ J_t x² + η_t x) carries μ_{t+1}..μ_T, J_T = η_T = 0 and,
  with P = J_{t+1} + 1/r_{t+1} and h = η_{t+1} + y_{t+1}/r_{t+1},
  β_t(x) = ∫ N(x' | a x, q) exp(−½ P x'² + h x') dx' ∝ exp(−½ a² P/(1 + qP) x² + a h/(1 + qP) x).
"""
import numpy as np

from fgraph.jit import compiled

__all__ = ["kalman_loops"]


def _kalman_loops(y, r, gain, var, start_mean, start_var, causal):
    """``y``, ``r`` (C, T), ``start_mean``, ``start_var`` (C,) -> (filtered_mean, filtered_var, eta, information),
    each (C, T); η, J are zero when ``causal`` (not computed)."""
    chains, steps = y.shape
    filtered_mean = np.empty((chains, steps))
    filtered_var = np.empty((chains, steps))
    eta = np.zeros((chains, steps))
    information = np.zeros((chains, steps))
    for c in range(chains):
        mean, variance = start_mean[c], start_var[c]
        for t in range(steps):
            precision = 1.0 / variance + 1.0 / r[c, t]
            mean = (mean / variance + y[c, t] / r[c, t]) / precision
            variance = 1.0 / precision
            filtered_mean[c, t], filtered_var[c, t] = mean, variance
            mean, variance = gain * mean, gain * gain * variance + var
        if causal:
            continue
        for t in range(steps - 2, -1, -1):
            p = information[c, t + 1] + 1.0 / r[c, t + 1]
            h = eta[c, t + 1] + y[c, t + 1] / r[c, t + 1]
            shrink = 1.0 / (1.0 + var * p)
            information[c, t] = gain * gain * p * shrink
            eta[c, t] = gain * h * shrink
    return filtered_mean, filtered_var, eta, information


_compiled = compiled(_kalman_loops)


def kalman_loops(y, r, gain: float, var: float, start_mean, start_var, causal: bool):
    """The compiled :func:`_kalman_loops` (numba), or the same Python loops without numba (slow: tests)."""
    function = _compiled if _compiled is not None else _kalman_loops
    return function(np.ascontiguousarray(y, dtype=float), np.ascontiguousarray(r, dtype=float), float(gain),
                    float(var), np.ascontiguousarray(start_mean, dtype=float),
                    np.ascontiguousarray(start_var, dtype=float), bool(causal))
