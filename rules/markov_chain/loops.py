"""Forward–backward of a hidden Markov chain as one compiled loop over time (:mod:`fgraph.jit`).

The same recursions as the scan of :func:`rules.markov_chain.out._forward_backward_by_scan`, step
by step, for chains laid out ``(C, T, K)`` (C independent chains). With D_t the incoming likelihood
of step t (scale s_t), A the transition and π the start:

* forward: α_1 = π; f_t = D_t α_t normalised (its log-normaliser accumulating log Σ D_t α_t + s_t);
  α_{t+1} = A f_t, kept with the log-normaliser of f_t (the evidence of the steps up to t);
* backward: β_T = 1; β_t = Aᵀ (D_{t+1} β_{t+1}) normalised, its log-normaliser accumulating
  log Σ + s_{t+1}.

Each vector is stored normalised with its log-normaliser, as the scan path does, so the message
α_t β_t and its log-scale follow by the same final product.
"""
import numpy as np

from fgraph.jit import compiled

__all__ = ["forward_backward_loops"]


def _forward_backward_loops(start, transition, likelihood, scales, causal):
    """``start`` (C, K), ``transition`` (K, K), ``likelihood`` (C, T, K), ``scales`` (C, T) ->
    (forward (C, T, K), forward_log (C, T), backward (C, T, K), backward_log (C, T))."""
    chains, steps, count = likelihood.shape
    forward = np.empty((chains, steps, count))
    forward_log = np.zeros((chains, steps))
    backward = np.ones((chains, steps, count))
    backward_log = np.zeros((chains, steps))
    filtered = np.empty(count)
    for c in range(chains):
        log_z = 0.0
        for k in range(count):
            forward[c, 0, k] = start[c, k]
        for t in range(steps):
            mass = 0.0
            for k in range(count):
                filtered[k] = likelihood[c, t, k] * forward[c, t, k]
                mass += filtered[k]
            if mass > 0.0:
                log_z += np.log(mass) + scales[c, t]
                for k in range(count):
                    filtered[k] /= mass
            else:
                log_z = -np.inf
            if t + 1 < steps:
                for i in range(count):
                    total = 0.0
                    for j in range(count):
                        total += transition[i, j] * filtered[j]
                    forward[c, t + 1, i] = total
                forward_log[c, t + 1] = log_z
        if causal:
            continue
        for t in range(steps - 2, -1, -1):
            mass = 0.0
            for j in range(count):
                total = 0.0
                for i in range(count):
                    total += transition[i, j] * likelihood[c, t + 1, i] * backward[c, t + 1, i]
                backward[c, t, j] = total
                mass += total
            if mass > 0.0:
                for j in range(count):
                    backward[c, t, j] /= mass
                backward_log[c, t] = backward_log[c, t + 1] + np.log(mass) + scales[c, t + 1]
            else:
                backward_log[c, t] = -np.inf
    return forward, forward_log, backward, backward_log


_compiled = compiled(_forward_backward_loops)


def forward_backward_loops(start, transition, likelihood, scales, causal: bool):
    """The compiled :func:`_forward_backward_loops` (numba), or the same Python loops without numba (slow: tests)."""
    function = _compiled if _compiled is not None else _forward_backward_loops
    return function(np.ascontiguousarray(start, dtype=float), np.ascontiguousarray(transition, dtype=float),
                    np.ascontiguousarray(likelihood, dtype=float), np.ascontiguousarray(scales, dtype=float),
                    bool(causal))
