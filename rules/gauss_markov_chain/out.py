"""Message out of the Gauss–Markov chain node towards its states: forward and backward passes.

With incoming messages μ_t(x_t) = exp(s_t) N(x_t | m_t, v_t), the message to x_t
is α_t(x_t) β_t(x_t):

* α_t, the prediction of x_t from the prior and μ_1..μ_{t−1} (a Kalman
  filter): α_1 = N(m₀, v₀); filtering multiplies by μ_t (log-scale
  log N(m_α | m_t, v_α + v_t) + s_t), prediction maps N(m, v) to
  N(a m, a² v + q);
* β_t, what μ_{t+1}..μ_T say about x_t: β_T = 1; with g = μ_{t+1} β_{t+1} =
  exp(c) N(m_g, v_g), β_t(x) = ∫ N(x' | a x, q) g(x') dx' = exp(c) N(a x | m_g, v_g + q)
  = exp(c − log|a|) N(x | m_g / a, (v_g + q) / a²).

Every message here is a proper normal (β_T aside, which is 1), so the
returned log-scale is that of the product α_t β_t, the incoming scales of
the other steps included (the node couples its batch).
"""
import math

import numpy as np

from fgraph.families import UnivariateNormal
from fgraph.families.normal import LOG_2PI, NormalMeanVariance
from fgraph.registry import rule
from nodes.gauss_markov_chain import GaussMarkovChainNode


def _log_overlap(mean_a, var_a, mean_b, var_b) -> float:
    """``log ∫ N(x | mean_a, var_a) N(x | mean_b, var_b) dx = log N(mean_a | mean_b, var_a + var_b)``."""
    total = var_a + var_b
    return -0.5 * (LOG_2PI + math.log(total) + (mean_a - mean_b) ** 2 / total)


@rule(GaussMarkovChainNode, "out")
def forward_backward(m_out: UnivariateNormal, node) -> UnivariateNormal:
    """Kalman forward and backward passes along the last batch axis (time).

    One sequence runs on plain floats (a handful of flops per step); a batch
    of independent sequences (leading batch axes) on numpy arrays, one step
    for all sequences at a time.
    """
    if len(node.batch_shape) > 1:
        return _forward_backward_batched(m_out, node)
    steps = node.batch_shape[0]
    a, q = node.gain, node.var
    means = np.broadcast_to(m_out.mean, (steps,)).tolist()
    variances = np.broadcast_to(m_out.var, (steps,)).tolist()
    scales = np.broadcast_to(m_out.log_scale, (steps,)).tolist()
    forward_mean, forward_var, forward_log = [0.0] * steps, [0.0] * steps, [0.0] * steps
    mean, var, log_scale = node.initial_mean, node.initial_var, 0.0
    for t in range(steps):
        forward_mean[t], forward_var[t], forward_log[t] = mean, var, log_scale
        log_scale += _log_overlap(mean, var, means[t], variances[t]) + scales[t]
        precision = 1.0 / var + 1.0 / variances[t]
        mean = (mean / var + means[t] / variances[t]) / precision
        mean, var = a * mean, a * a / precision + q
    out_mean, out_var, out_log = [0.0] * steps, [0.0] * steps, [0.0] * steps
    out_mean[-1], out_var[-1], out_log[-1] = forward_mean[-1], forward_var[-1], forward_log[-1]  # β_T = 1
    # g = μ_{t+1} β_{t+1}, starting from μ_T alone
    g_mean, g_var, g_log = means[-1], variances[-1], scales[-1]
    log_gain = math.log(abs(a))
    for t in range(steps - 2, -1, -1):
        back_mean, back_var, back_log = g_mean / a, (g_var + q) / (a * a), g_log - log_gain  # β_t
        out_log[t] = forward_log[t] + back_log + _log_overlap(forward_mean[t], forward_var[t], back_mean, back_var)
        precision = 1.0 / forward_var[t] + 1.0 / back_var
        out_var[t] = 1.0 / precision
        out_mean[t] = (forward_mean[t] / forward_var[t] + back_mean / back_var) / precision
        # g for the step before: μ_t β_t
        g_log = back_log + scales[t] + _log_overlap(means[t], variances[t], back_mean, back_var)
        precision = 1.0 / variances[t] + 1.0 / back_var
        g_var = 1.0 / precision
        g_mean = (means[t] / variances[t] + back_mean / back_var) / precision
    return NormalMeanVariance(np.array(out_mean), np.array(out_var), log_scale=np.array(out_log), check=False)


def _log_overlaps(mean_a, var_a, mean_b, var_b):
    """:func:`_log_overlap` on arrays."""
    total = var_a + var_b
    return -0.5 * (LOG_2PI + np.log(total) + (mean_a - mean_b) ** 2 / total)


def _forward_backward_batched(m_out, node) -> UnivariateNormal:
    """The recursions of :func:`forward_backward` for sequences along the last axis, vectorised over the others."""
    batch = node.batch_shape
    a, q = node.gain, node.var
    # time first: (T, ...)
    means = np.moveaxis(np.broadcast_to(m_out.mean, batch), -1, 0)
    variances = np.moveaxis(np.broadcast_to(m_out.var, batch), -1, 0)
    scales = np.moveaxis(np.broadcast_to(m_out.log_scale, batch), -1, 0)
    steps = batch[-1]
    forward_mean, forward_var, forward_log = np.empty(means.shape), np.empty(means.shape), np.empty(means.shape)
    mean = np.full(means.shape[1:], node.initial_mean)
    var = np.full(means.shape[1:], node.initial_var)
    log_scale = np.zeros(means.shape[1:])
    for t in range(steps):
        forward_mean[t], forward_var[t], forward_log[t] = mean, var, log_scale
        log_scale = log_scale + _log_overlaps(mean, var, means[t], variances[t]) + scales[t]
        precision = 1.0 / var + 1.0 / variances[t]
        mean = (mean / var + means[t] / variances[t]) / precision
        mean, var = a * mean, a * a / precision + q
    out_mean, out_var, out_log = np.empty(means.shape), np.empty(means.shape), np.empty(means.shape)
    out_mean[-1], out_var[-1], out_log[-1] = forward_mean[-1], forward_var[-1], forward_log[-1]
    g_mean, g_var, g_log = means[-1], variances[-1], scales[-1]
    log_gain = math.log(abs(a))
    for t in range(steps - 2, -1, -1):
        back_mean, back_var, back_log = g_mean / a, (g_var + q) / (a * a), g_log - log_gain
        out_log[t] = forward_log[t] + back_log + _log_overlaps(forward_mean[t], forward_var[t], back_mean, back_var)
        precision = 1.0 / forward_var[t] + 1.0 / back_var
        out_var[t] = 1.0 / precision
        out_mean[t] = (forward_mean[t] / forward_var[t] + back_mean / back_var) / precision
        g_log = back_log + scales[t] + _log_overlaps(means[t], variances[t], back_mean, back_var)
        precision = 1.0 / variances[t] + 1.0 / back_var
        g_var = 1.0 / precision
        g_mean = (means[t] / variances[t] + back_mean / back_var) / precision
    return NormalMeanVariance(np.moveaxis(out_mean, 0, -1), np.moveaxis(out_var, 0, -1),
                              log_scale=np.moveaxis(out_log, 0, -1), check=False)
