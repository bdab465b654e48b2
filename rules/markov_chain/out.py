"""Message out of the Markov-chain node towards its states: one forward–backward pass.

With incoming messages μ_t(z_t) = exp(s_t) p_t(z_t) (normalised p_t, log-scale s_t)
the message to z_t is

    μ'_t(z_t) = Σ_{z_s, s ≠ t} π(z_1) Π_u A[z_u, z_{u−1}] Π_{s ≠ t} μ_s(z_s)
              = α_t(z_t) β_t(z_t),

the forward message α_t (the chain and every μ_s before t) times the backward
message β_t (every μ_s after t). Both are kept normalised, with their
log-normalisers accumulated, so long chains neither underflow nor overflow;
the returned log-scale is log Σ_z α_t β_t plus those normalisers (the
node couples its batch: it weighs the incoming scales itself). The belief
μ'_t μ_t then holds the evidence of the whole model at every t.
"""
import math

import numpy as np

from fgraph.families.categorical import Categorical
from fgraph.registry import rule
from nodes.markov_chain import MarkovChainNode


# Up to this many states the recursions run on Python floats, which beat numpy's per-call cost on tiny vectors.
FLOAT_STATES = 3


@rule(MarkovChainNode, "out")
def forward_backward(m_out: Categorical, node) -> Categorical:
    """α, β recursions along the last batch axis (time); leading batch axes are independent chains.

    ``m_out`` has batch shape ``node.batch_shape = (..., T)`` and probabilities ``(..., T, K)``.
    """
    initial, transition = node.initial, node.transition
    batch, count = node.batch_shape, initial.size
    likelihood = np.broadcast_to(m_out.probabilities, batch + (count,))
    scales = np.broadcast_to(m_out.log_scale, batch)
    if len(batch) == 1 and count <= FLOAT_STATES:
        return _forward_backward_in_floats(initial, transition, likelihood, scales)
    steps = batch[-1]
    likelihood = np.moveaxis(likelihood, -2, 0)  # (T, ..., K): time first
    scales = np.moveaxis(scales, -1, 0)  # (T, ...)
    forward = np.empty(likelihood.shape)  # α_t, normalised
    forward_log = np.empty(scales.shape)  # log-normaliser of α_t
    predicted = np.broadcast_to(initial, likelihood.shape[1:])
    log_norm = np.zeros(scales.shape[1:])
    with np.errstate(divide="ignore", invalid="ignore"):  # an impossible observation gives -inf, not a warning
        for t in range(steps):
            forward[t], forward_log[t] = predicted, log_norm
            joint = predicted * likelihood[t]
            mass = joint.sum(axis=-1)
            log_norm = log_norm + np.log(mass) + scales[t]
            predicted = (joint / mass[..., None]) @ transition.T  # A f for every chain
        backward = np.empty(likelihood.shape)  # β_t, normalised
        backward_log = np.empty(scales.shape)
        following = np.ones(likelihood.shape[1:])
        log_norm = np.zeros(scales.shape[1:])
        for t in range(steps - 1, -1, -1):
            backward[t], backward_log[t] = following, log_norm
            if t == 0:
                break
            weighted = (likelihood[t] * following) @ transition  # Aᵀ g for every chain
            mass = weighted.sum(axis=-1)
            log_norm = log_norm + np.log(mass) + scales[t]
            following = weighted / mass[..., None]
        product = forward * backward
        mass = product.sum(axis=-1)
        probabilities = np.moveaxis(product / mass[..., None], 0, -2)
        log_scale = np.moveaxis(forward_log + backward_log + np.log(mass), 0, -1)
        return Categorical(probabilities, log_scale=log_scale, check=False)


def _forward_backward_in_floats(initial, transition, likelihood, scales) -> Categorical:
    """The same recursions as :func:`forward_backward`, on lists of floats (a few states)."""
    steps, count = likelihood.shape
    states = range(count)
    matrix = transition.tolist()
    columns = transition.T.tolist()
    rows = likelihood.tolist()
    scale_list = scales.tolist()
    forward, forward_log = [None] * steps, [0.0] * steps
    predicted, log_norm = initial.tolist(), 0.0
    for t in range(steps):
        forward[t], forward_log[t] = predicted, log_norm
        joint = [p * q for p, q in zip(predicted, rows[t])]
        mass = sum(joint)
        if mass <= 0.0:  # an impossible step: the evidence is zero from here on
            log_norm = -math.inf
            predicted = [0.0] * count
            continue
        log_norm += math.log(mass) + scale_list[t]
        filtered = [value / mass for value in joint]
        predicted = [sum(row[j] * filtered[j] for j in states) for row in matrix]
    backward, backward_log = [None] * steps, [0.0] * steps
    following, log_norm = [1.0] * count, 0.0
    for t in range(steps - 1, -1, -1):
        backward[t], backward_log[t] = following, log_norm
        if t == 0:
            break
        weighted_next = [p * b for p, b in zip(rows[t], following)]
        weighted = [sum(column[i] * weighted_next[i] for i in states) for column in columns]
        mass = sum(weighted)
        if mass <= 0.0:
            log_norm = -math.inf
            following = [1.0] * count
            continue
        log_norm += math.log(mass) + scale_list[t]
        following = [value / mass for value in weighted]
    product = np.array(forward) * np.array(backward)
    mass = product.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return Categorical(product / mass[:, None], log_scale=np.array(forward_log) + np.array(backward_log) + np.log(mass),
                           check=False)
