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

**By associative scans** (:mod:`fgraph.rules.gauss_markov_chain.elements`, after
Särkkä and García-Fernández 2021), with the μ_t as observations m_t = x_t + N(0, v_t):

* the prefixes of the filtering elements give the filtered moments, hence
  α_t = N(a m^f_{t−1}, a² v^f_{t−1} + q) (α_1 = N(m₀, v₀));
* the suffixes of the same elements from t + 1 give β_t in information form
  exp(−½ J_t x² + η_t x) (J_T = η_T = 0), so the message α_t β_t is
  N((m_α + v_α η_t) / (1 + v_α J_t), v_α / (1 + v_α J_t)): a sum of
  non-negative terms, never a division of the smoothed marginal by μ_t,
  which would cancel digits when μ_t is precise;
* its log-scale is log Z − s_t − log N(m_t | m_{αβ}, v_{αβ} + v_t), with
  log Z = Σ_t s_t + log N(m_t | m_α, v_α + v_t) the prediction-error
  decomposition of the evidence (vectorised once the filter is known):
  the belief α_t β_t μ_t integrates to Z at every t.

A causal chain (``node.causal``) sends α_t alone, with the log-scale of the
steps before t: its beliefs are the filtering marginals, and the last one holds
the sequence's evidence. Chains of a batch may start from their own m₀, v₀.

Chains of at most :data:`FLOAT_STEPS` steps (one sequence) run the
sequential recursions above on Python floats, which beat the scans' fixed
cost of numpy calls there.

A chain with a random gain or precision (:class:`~fgraph.nodes.gauss_markov_chain.VariationalGaussMarkovChainNode`,
``algorithm="vmp"``) sends the same passes over exp E_q[log f] (:func:`structured_mean_field`): gain E[a],
variance 1/E[w] (one pair per chain, broadcast) and the precision E[w] Var[a] of the expectation of
(a x_{t−1})² folded into the incoming messages of x_1..x_{T−1}; always by the scans (a mean gain of 0, where a
backward recursion on floats would divide by it, is fine there), or by the compiled loops when the gain and
precision are shared by every chain.
"""
import math

import numpy as np

from fgraph import jit
from fgraph.families import PointMass, UnivariateNormal
from fgraph.families.normal import LOG_2PI, NormalMeanVariance
from fgraph.families.pointmass import Uninformative
from fgraph.registry import rule
from fgraph.scan import associative_scan
from fgraph.nodes.gauss_markov_chain import (READ_MOMENTS, GaussMarkovChainNode, VariationalGaussMarkovChainNode,
                                      read_moments)
from fgraph.rules.gauss_markov_chain.loops import kalman_loops, message_loops
from fgraph.rules.gauss_markov_chain.elements import combine_scalar_filtering, filtering_elements, scalar_elements

# A single chain of at most FLOAT_STEPS steps runs on Python floats.
FLOAT_STEPS = 500


def _log_overlap(mean_a, var_a, mean_b, var_b) -> float:
    """``log ∫ N(x | mean_a, var_a) N(x | mean_b, var_b) dx = log N(mean_a | mean_b, var_a + var_b)``."""
    total = var_a + var_b
    return -0.5 * (LOG_2PI + math.log(total) + (mean_a - mean_b) ** 2 / total)


@rule(GaussMarkovChainNode, "out")
def forward_backward(m_out: UnivariateNormal, node) -> UnivariateNormal:
    """Kalman forward and backward passes along the last batch axis (time), leading axes independent chains.

    ``m_out`` has batch shape ``node.batch_shape = (..., T)``.
    """
    batch = node.batch_shape
    if len(batch) == 1 and batch[0] <= FLOAT_STEPS:
        return _forward_backward_in_floats(m_out, node)
    return _forward_backward_by_scan(m_out, node)


@rule(GaussMarkovChainNode, "out")
def prior(m_out: Uninformative, node) -> UnivariateNormal:
    """Nothing attached to the states: the prior marginals N(m_t, v_t), m_t = a m_{t−1}, v_t = a² v_{t−1} + q
    (m_1 = m₀, v_1 = v₀), log-scale 0 (the backward messages are flat and nothing is observed).

    A flat message has no mean-variance form, so the passes for proper messages cannot take it; the two
    recursions are first-order linear filters, run along time (the last batch axis) by ``lfilter``, with
    one start per chain where the chains have their own.
    """
    from scipy.signal import lfilter  # here, not with the module: it costs a third of a second to import

    batch = node.batch_shape
    start_mean, start_var = np.zeros(batch), np.full(batch, node.var)
    start_mean[..., 0], start_var[..., 0] = node.initial_mean, node.initial_var
    a = node.gain
    mean = lfilter([1.0], [1.0, -a], start_mean, axis=-1)  # m_t = a m_{t−1} + (m₀ at t = 1, else 0)
    var = lfilter([1.0], [1.0, -a * a], start_var, axis=-1)  # v_t = a² v_{t−1} + (v₀ at t = 1, else q)
    return NormalMeanVariance(mean, var, log_scale=np.zeros(batch), check=False)


def _forward_backward_in_floats(m_out, node) -> UnivariateNormal:
    """One sequence, the recursions step by step on Python floats."""
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
    if node.causal:
        return NormalMeanVariance(np.array(forward_mean), np.array(forward_var), log_scale=np.array(forward_log),
                                  check=False)
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


def _forward_backward_by_scan(m_out, node) -> UnivariateNormal:
    """α_t β_t for every step from two associative scans over the filtering elements (see the module docstring)."""
    batch = node.batch_shape
    a, q, m0, v0 = node.gain, node.var, node.initial_mean, node.initial_var
    y = np.broadcast_to(m_out.mean, batch)  # (..., T), time last as the scan wants it
    r = np.broadcast_to(m_out.var, batch)
    scales = np.broadcast_to(m_out.log_scale, batch)
    if jit.enabled():  # the whole message by compiled loops over time
        chains = (-1, batch[-1])
        out_mean, out_var, out_log = (part.reshape(batch) for part in message_loops(
            y.reshape(chains), r.reshape(chains), scales.reshape(chains), a, q,
            np.broadcast_to(m0, batch[:-1]).reshape(-1), np.broadcast_to(v0, batch[:-1]).reshape(-1), node.causal))
        return NormalMeanVariance(out_mean, out_var, log_scale=out_log, check=False)
    # the filtering elements (A, b, C, η, J) of d = 1 chains, without their 1 × 1 entry axes: each (..., T);
    # the first step's (b, C) = the prior N(m₀, v₀) times μ_1, written here for a start per chain
    elements = scalar_elements(filtering_elements([[a]], [[q]], [0.0], [[1.0]], y[None], r[None, None]))
    elements[1][..., 0] = (r[..., 0] * m0 + v0 * y[..., 0]) / (v0 + r[..., 0])
    elements[2][..., 0] = r[..., 0] * v0 / (v0 + r[..., 0])
    _, filtered_mean, filtered_var, _, _ = associative_scan(combine_scalar_filtering, tuple(elements))
    predicted_mean, predicted_var = np.empty(batch), np.empty(batch)  # α_t
    predicted_mean[..., 0], predicted_var[..., 0] = m0, v0
    predicted_mean[..., 1:] = a * filtered_mean[..., :-1]
    predicted_var[..., 1:] = a * a * filtered_var[..., :-1] + q
    evidence_terms = scales + _log_overlaps(y, r, predicted_mean, predicted_var)
    if node.causal:  # α_t with the evidence of the steps before t
        return NormalMeanVariance(predicted_mean, predicted_var,
                                  log_scale=np.cumsum(evidence_terms, axis=-1) - evidence_terms, check=False)
    eta, information = np.zeros(batch), np.zeros(batch)  # β_t; flat at t = T
    if batch[-1] > 1:
        suffixes = associative_scan(combine_scalar_filtering, tuple(part[..., 1:] for part in elements), reverse=True)
        eta[..., :-1], information[..., :-1] = suffixes[3], suffixes[4]
    log_evidence = np.sum(evidence_terms, axis=-1)
    shrink = 1.0 / (1.0 + predicted_var * information)
    out_var = predicted_var * shrink
    out_mean = (predicted_mean + predicted_var * eta) * shrink
    out_log = log_evidence[..., None] - scales - _log_overlaps(y, r, out_mean, out_var)
    return NormalMeanVariance(out_mean, out_var, log_scale=out_log, check=False)


def _log_overlaps(mean_a, var_a, mean_b, var_b):
    """:func:`_log_overlap` on arrays."""
    total = var_a + var_b
    return -0.5 * (LOG_2PI + np.log(total) + (mean_a - mean_b) ** 2 / total)


# ---- a random gain and process precision (VariationalGaussMarkovChainNode, algorithm="vmp") ----


@rule(VariationalGaussMarkovChainNode, "out")
def structured_mean_field(m_out: UnivariateNormal, q_moments: PointMass, node) -> UnivariateNormal:
    """exp E_{q(a) q(w)}[log f] as a chain, then the forward and backward passes (structured mean field).

    With the moments ā = E[a], Var[a], w̄ = E[w], E[log w] of q(a), q(w) (``q_moments``, see
    :mod:`fgraph.rules.gauss_markov_chain.moments`), E[log N(x_t | a x_{t−1}, 1/w)] = log N(x_t | ā x_{t−1}, 1/w̄)
    − ½ c x²_{t−1} + ½ (E[log w] − log w̄), c = w̄ Var[a]: the fixed chain with gain ā and variance 1/w̄, the factor
    exp(−½ c x_t²) on x_1..x_{T−1} and a constant. That factor is folded into the incoming messages,
    μ̃_t = μ_t e^{−c x²/2} (precision + c, log-scale − ½ log(1 + c v_t) − ½ c m_t² / (1 + c v_t)); the scans of
    the fixed chain over μ̃ (its filtering elements, with ā and 1/w̄ per chain) give the prediction α_t and the
    backward information (η_t, J_t), and the message is α_t β_t e^{−c_t x²/2} (c_T = 0):
    N((m_α + v_α η_t) / (1 + v_α (J_t + c_t)), v_α / (1 + v_α (J_t + c_t))), with the log-scale that makes the
    belief with μ_t integrate to Z' = ∫ Π_t μ_t exp E_q[log f] (the evidence terms of μ̃ plus the constant).
    The message keeps the moments it read (the node's free-energy term needs them once q(a), q(w) move on).
    """
    batch = node.batch_shape
    read = q_moments.value
    gain, gain_var, precision, log_precision = read_moments(read)
    a, q = gain, 1.0 / precision
    extra = np.zeros(batch)  # c on x_1..x_{T−1}, 0 on x_T
    extra[..., :-1] = precision * gain_var
    y = np.broadcast_to(m_out.mean, batch)
    r = np.broadcast_to(m_out.var, batch)
    scales = np.broadcast_to(m_out.log_scale, batch)
    spread = 1.0 + extra * r
    folded_var = r / spread  # μ̃_t: (m_t / v_t) / (1/v_t + c) and 1 / (1/v_t + c), written without 1/v_t
    folded_mean = y / spread
    folded_scales = scales - 0.5 * np.log(spread) - 0.5 * extra * y * folded_mean
    m0, v0 = node.initial_mean, node.initial_var
    if jit.enabled() and np.ndim(a) == 0:  # one gain and precision for every chain: the compiled loops
        chains = (-1, batch[-1])
        filtered_mean, filtered_var, eta, information = (part.reshape(batch) for part in kalman_loops(
            folded_mean.reshape(chains), folded_var.reshape(chains), a, q,
            np.broadcast_to(m0, batch[:-1]).reshape(-1), np.broadcast_to(v0, batch[:-1]).reshape(-1), False))
    else:
        filtered_mean, filtered_var, eta, information = _folded_scans(folded_mean, folded_var, a, q, m0, v0, batch)
    predicted_mean, predicted_var = np.empty(batch), np.empty(batch)  # α_t
    predicted_mean[..., 0], predicted_var[..., 0] = m0, v0
    predicted_mean[..., 1:] = a * filtered_mean[..., :-1]
    predicted_var[..., 1:] = a * a * filtered_var[..., :-1] + q
    constant = np.broadcast_to(0.5 * (batch[-1] - 1) * (log_precision - np.log(precision)), batch[:-1] + (1,))
    log_evidence = np.sum(folded_scales + _log_overlaps(folded_mean, folded_var, predicted_mean, predicted_var),
                          axis=-1) + constant[..., 0]
    shrink = 1.0 / (1.0 + predicted_var * (information + extra))
    out_var = predicted_var * shrink
    out_mean = (predicted_mean + predicted_var * eta) * shrink
    out_log = log_evidence[..., None] - scales - _log_overlaps(y, r, out_mean, out_var)
    message = NormalMeanVariance(out_mean, out_var, log_scale=out_log, check=False)
    message.__dict__[READ_MOMENTS] = read
    return message


def _folded_scans(folded_mean, folded_var, a, q, m0, v0, batch) -> tuple:
    """(filtered mean, filtered variance, η, J) of the chain with gain ``a`` and variance ``q`` (per chain) over
    the folded messages, by a forward and a backward associative scan."""
    total = q + folded_var  # the filtering elements of d = 1 (fgraph.rules.gauss_markov_chain.elements), a and q per chain
    elements = (a * folded_var / total, q * folded_mean / total, folded_var * q / total, a * folded_mean / total,
                a * a / total)
    for part in (0, 3, 4):
        elements[part][..., 0] = 0.0
    first_var = folded_var[..., 0]
    elements[1][..., 0] = (first_var * m0 + v0 * folded_mean[..., 0]) / (v0 + first_var)
    elements[2][..., 0] = first_var * v0 / (v0 + first_var)
    _, filtered_mean, filtered_var, _, _ = associative_scan(combine_scalar_filtering, elements)
    suffixes = associative_scan(combine_scalar_filtering, tuple(part[..., 1:] for part in elements), reverse=True)
    eta, information = np.zeros(batch), np.zeros(batch)  # β_t; flat at t = T
    eta[..., :-1], information[..., :-1] = suffixes[3], suffixes[4]
    return filtered_mean, filtered_var, eta, information
