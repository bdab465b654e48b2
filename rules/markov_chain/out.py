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
    """α, β recursions over t = 1..T; ``m_out`` has batch shape (T,) and probabilities (T, K)."""
    initial, transition = node.initial, node.transition
    steps, count = node.batch_shape[0], initial.size
    likelihood = np.broadcast_to(m_out.probabilities, (steps, count))
    scales = np.broadcast_to(m_out.log_scale, (steps,))
    if count <= FLOAT_STATES:
        return _forward_backward_in_floats(initial, transition, likelihood, scales)
    forward = np.empty((steps, count))  # α_t, normalised
    forward_log = np.empty(steps)  # log-normaliser of α_t
    predicted, log_norm = initial, 0.0
    with np.errstate(divide="ignore", invalid="ignore"):  # an impossible observation gives -inf, not a warning
        for t in range(steps):
            forward[t], forward_log[t] = predicted, log_norm
            joint = predicted * likelihood[t]
            mass = joint.sum()
            log_norm += np.log(mass) + scales[t]
            predicted = transition @ (joint / mass)
        backward = np.empty((steps, count))  # β_t, normalised
        backward_log = np.empty(steps)
        following, log_norm = np.ones(count), 0.0
        for t in range(steps - 1, -1, -1):
            backward[t], backward_log[t] = following, log_norm
            if t == 0:
                break
            weighted = transition.T @ (likelihood[t] * following)
            mass = weighted.sum()
            log_norm += np.log(mass) + scales[t]
            following = weighted / mass
        product = forward * backward
        mass = product.sum(axis=-1)
        return Categorical(product / mass[:, None], log_scale=forward_log + backward_log + np.log(mass), check=False)


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
