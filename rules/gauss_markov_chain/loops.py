"""The scalar Kalman filter and backward information filter as compiled loops over time (:mod:`fgraph.jit`).

The quantities the scans of :func:`fgraph.rules.gauss_markov_chain.out._forward_backward_by_scan` produce,
step by step, for chains laid out ``(C, T)``, with observations μ_t = N(y_t, r_t) of x_t, gain a,
process variance q and start N(m₀, v₀) per chain:

* filter: N(m^f_t, v^f_t) = p(x_t | μ_1..μ_t), by the predict/update recursion
  (predicted N(a m^f_{t−1}, a² v^f_{t−1} + q), updated by μ_t in precision form);
* backward information: β_t(x) = exp(−½ J_t x² + η_t x) carries μ_{t+1}..μ_T, J_T = η_T = 0 and,
  with P = J_{t+1} + 1/r_{t+1} and h = η_{t+1} + y_{t+1}/r_{t+1},
  β_t(x) = ∫ N(x' | a x, q) exp(−½ P x'² + h x') dx' ∝ exp(−½ a² P/(1 + qP) x² + a h/(1 + qP) x).

:func:`message_loops` goes on to the chain's message itself (the prediction α_t times β_t, with the
log-scales of :mod:`fgraph.rules.gauss_markov_chain.out`), so that nothing is left to do in numpy.
"""
import numpy as np

from fgraph.jit import compiled

__all__ = ["kalman_loops", "message_loops"]


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

LOG_2PI = 1.8378770664093453  # log 2π


def _message_loops(y, r, scales, gain, var, start_mean, start_var, causal):
    """The message α_t β_t to every x_t: (mean, variance, log-scale), each (C, T).

    ``y``, ``r``, ``scales`` (C, T) the incoming messages N(y_t, r_t) and their log-scales. Forward: the
    prediction α_t = N(m_α, v_α) and the evidence terms s_t + log N(y_t | m_α, v_α + r_t). Causal: the message
    is α_t with the evidence of the steps before t. Otherwise the backward information (η_t, J_t) of β_t and
    the message N((m_α + v_α η_t)/(1 + v_α J_t), v_α/(1 + v_α J_t)) with log-scale
    log Z − s_t − log N(y_t | its mean, its variance + r_t).
    """
    chains, steps = y.shape
    out_mean = np.empty((chains, steps))
    out_var = np.empty((chains, steps))
    out_log = np.empty((chains, steps))
    for c in range(chains):
        mean, variance = start_mean[c], start_var[c]
        log_z = 0.0
        for t in range(steps):
            total = variance + r[c, t]
            difference = y[c, t] - mean
            term = scales[c, t] - 0.5 * (LOG_2PI + np.log(total) + difference * difference / total)
            out_mean[c, t], out_var[c, t] = mean, variance
            out_log[c, t] = log_z  # the evidence of the steps before t (the causal message's)
            log_z += term
            precision = 1.0 / variance + 1.0 / r[c, t]
            filtered = (mean / variance + y[c, t] / r[c, t]) / precision
            mean, variance = gain * filtered, gain * gain / precision + var
        if causal:
            continue
        eta, information = 0.0, 0.0
        for t in range(steps - 1, -1, -1):
            if t < steps - 1:
                p = information + 1.0 / r[c, t + 1]
                h = eta + y[c, t + 1] / r[c, t + 1]
                shrink = 1.0 / (1.0 + var * p)
                information = gain * gain * p * shrink
                eta = gain * h * shrink
            predicted_mean, predicted_var = out_mean[c, t], out_var[c, t]
            shrink = 1.0 / (1.0 + predicted_var * information)
            message_var = predicted_var * shrink
            message_mean = (predicted_mean + predicted_var * eta) * shrink
            total = message_var + r[c, t]
            difference = y[c, t] - message_mean
            out_mean[c, t], out_var[c, t] = message_mean, message_var
            out_log[c, t] = log_z - scales[c, t] + 0.5 * (LOG_2PI + np.log(total) + difference * difference / total)
    return out_mean, out_var, out_log


_compiled_messages = compiled(_message_loops)


def message_loops(y, r, scales, gain: float, var: float, start_mean, start_var, causal: bool):
    """The compiled :func:`_message_loops` (numba), or the same Python loops without numba (slow: tests)."""
    function = _compiled_messages if _compiled_messages is not None else _message_loops
    return function(np.ascontiguousarray(y, dtype=float), np.ascontiguousarray(r, dtype=float),
                    np.ascontiguousarray(scales, dtype=float), float(gain), float(var),
                    np.ascontiguousarray(start_mean, dtype=float), np.ascontiguousarray(start_var, dtype=float),
                    bool(causal))


def kalman_loops(y, r, gain: float, var: float, start_mean, start_var, causal: bool):
    """The compiled :func:`_kalman_loops` (numba), or the same Python loops without numba (slow: tests)."""
    function = _compiled if _compiled is not None else _kalman_loops
    return function(np.ascontiguousarray(y, dtype=float), np.ascontiguousarray(r, dtype=float), float(gain),
                    float(var), np.ascontiguousarray(start_mean, dtype=float),
                    np.ascontiguousarray(start_var, dtype=float), bool(causal))
