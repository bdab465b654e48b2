"""Forward–backward of a hidden Markov chain as one compiled loop over time (:mod:`fgraph.jit`).

The same recursions as the scan of :func:`fgraph.rules.markov_chain.out._forward_backward_by_scan`, step
by step, for chains laid out ``(C, T, K)`` (C independent chains). With D_t the incoming likelihood
of step t (scale s_t), A the transition and π the start:

* forward: α_1 = π; f_t = D_t α_t normalised (its log-normaliser accumulating log Σ D_t α_t + s_t);
  α_{t+1} = A f_t, kept with the log-normaliser of f_t (the evidence of the steps up to t);
* backward: β_T = 1; β_t = Aᵀ (D_{t+1} β_{t+1}) normalised, its log-normaliser accumulating
  log Σ + s_{t+1}.

Each vector is kept normalised with its log-normaliser, as the scan path does; the message α_t β_t,
normalised, and its log-scale are written during the backward pass.
"""
import numpy as np

from fgraph.jit import compiled

__all__ = ["forward_backward_loops"]


def _forward_backward_loops(start, transition, likelihood, scales, causal):
    """``start`` (C, K), ``transition`` (K, K), ``likelihood`` (C, T, K), ``scales`` (C, T) -> the message to
    every z_t: (probabilities (C, T, K) of α_t β_t normalised, log-scales (C, T)).

    The forward pass stores α_t (normalised) and its log-normaliser; the backward pass carries β_t alone and
    writes each step's message as it goes. ``causal``: β_t = 1 (the message is α_t).
    """
    chains, steps, count = likelihood.shape
    forward = np.empty((chains, steps, count))
    forward_log = np.zeros((chains, steps))
    probabilities = np.empty((chains, steps, count))
    log_scale = np.empty((chains, steps))
    filtered = np.empty(count)
    backward = np.empty(count)
    weighted = np.empty(count)
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
        backward_log = 0.0
        for k in range(count):
            backward[k] = 1.0
        for t in range(steps - 1, -1, -1):
            mass = 0.0
            for k in range(count):
                probabilities[c, t, k] = forward[c, t, k] * backward[k]
                mass += probabilities[c, t, k]
            if mass > 0.0:
                for k in range(count):
                    probabilities[c, t, k] /= mass
                log_scale[c, t] = forward_log[c, t] + backward_log + np.log(mass)
            else:
                log_scale[c, t] = -np.inf
            if causal or t == 0:
                continue
            # β_{t−1} = Aᵀ (D_t β_t), normalised
            for i in range(count):
                weighted[i] = likelihood[c, t, i] * backward[i]
            mass = 0.0
            for j in range(count):
                total = 0.0
                for i in range(count):
                    total += transition[i, j] * weighted[i]
                backward[j] = total
                mass += total
            if mass > 0.0:
                for j in range(count):
                    backward[j] /= mass
                backward_log += np.log(mass) + scales[c, t]
            else:
                backward_log = -np.inf
    return probabilities, log_scale


_compiled = compiled(_forward_backward_loops)


def forward_backward_loops(start, transition, likelihood, scales, causal: bool):
    """The compiled :func:`_forward_backward_loops` (numba), or the same Python loops without numba (slow: tests)."""
    function = _compiled if _compiled is not None else _forward_backward_loops
    return function(np.ascontiguousarray(start, dtype=float), np.ascontiguousarray(transition, dtype=float),
                    np.ascontiguousarray(likelihood, dtype=float), np.ascontiguousarray(scales, dtype=float),
                    bool(causal))
