"""Message out of the Markov-chain node towards its states: one forward–backward pass.

With incoming messages μ_t(z_t) = exp(s_t) p_t(z_t) (normalised p_t, log-scale s_t)
the message to z_t is

    μ'_t(z_t) = Σ_{z_s, s ≠ t} π(z_1) Π_u A[z_u, z_{u−1}] Π_{s ≠ t} μ_s(z_s)
              = α_t(z_t) β_t(z_t),

the forward message α_t (the chain and every μ_s before t) times the backward
message β_t (every μ_s after t). The returned log-scale is log Σ_z α_t β_t
plus the log-normalisers of both (the node couples its batch: it weighs the
incoming scales itself). The belief μ'_t μ_t then holds the evidence of the
whole model at every t.

**As products of matrices.** With D_t = diag(p_t) and H_t = D_t A
(``H[i, j] = p_t(i) A[i, j]``, 0-based t), the filtered vectors
f_t = D_t α_t and the backward messages are

    f_t  = H_t H_{t−1} ⋯ H_1 f_0,              f_0 = D_0 π,
    β_tᵀ = 1ᵀ H_{T−1} H_{T−2} ⋯ H_{t+1},        β_{T−1} = 1,

and α_t = A f_{t−1} (α_0 = π). Both are prefix products of the same T − 1
matrices, the backward ones in reverse order and transposed
(β_t = H_{t+1}ᵀ ⋯ H_{T−1}ᵀ 1), so one associative scan
(:func:`fgraph.scan.associative_scan`) computes both at once, the two
directions stacked on a batch axis. The boundary vector is folded into the
first element as the rank-one matrix ``H_1 f_0 1ᵀ`` (resp. ``H_{T−1}ᵀ 1 1ᵀ``),
whose prefixes have f_t (resp. β_t) in every column. Every element is kept
normalised (entries summing to one) with its log-normaliser carried
separately, so a chain of 10⁶ steps neither underflows nor overflows.

Few states and a short single chain run the sequential recursion on Python
floats instead (:data:`FLOAT_STATES`, :data:`FLOAT_STEPS`): up to about fifty
steps the scan's fixed cost (a dozen numpy calls per level, about 0.3 ms in
all) exceeds the loop's few µs per step; from a hundred steps on the scan is
faster, 0.3 µs per step at T = 10⁴ against 4–7 µs.
"""
import math

import numpy as np

from fgraph import jit
from fgraph.families.categorical import Categorical
from fgraph.families.pointmass import Uninformative
from fgraph.registry import rule
from fgraph.scan import associative_scan, leading_matmul
from fgraph.nodes.markov_chain import MarkovChainNode
from fgraph.rules.markov_chain.loops import forward_backward_loops

# A single chain of at most FLOAT_STATES states and at most FLOAT_STEPS steps runs on Python floats.
FLOAT_STATES = 3
FLOAT_STEPS = 50


@rule(MarkovChainNode, "out")
def forward_backward(m_out: Categorical, node) -> Categorical:
    """α, β along the last batch axis (time); leading batch axes are independent chains.

    ``m_out`` has batch shape ``node.batch_shape = (..., T)`` and probabilities ``(..., T, K)``.
    """
    initial, transition = node.initial, node.transition
    batch, count = node.batch_shape, initial.shape[-1]
    likelihood = np.broadcast_to(m_out.probabilities, batch + (count,))
    scales = np.broadcast_to(m_out.log_scale, batch)
    if len(batch) == 1 and count <= FLOAT_STATES and batch[0] <= FLOAT_STEPS:
        return _forward_backward_in_floats(initial, transition, likelihood, scales, node.causal)
    return _forward_backward_by_scan(initial, transition, likelihood, scales, node.causal)


@rule(MarkovChainNode, "out")
def prior(m_out: Uninformative, node) -> Categorical:
    """Nothing attached to the states (no emission, no observation): the prior marginals p(z_t) = A^{t−1} π.

    The flat message is the constant 1, here the uniform vector 1/K with log-scale log K at every step, so
    the same pass applies: the forward messages propagate π through A, the backward ones are Aᵀ1 = 1 (A is
    column-stochastic), and the log-scale is 0 (nothing observed, p() = 1). Shape ``batch + (K,)``.
    """
    return forward_backward(flat_states(node), node)


def flat_states(node) -> Categorical:
    """The constant function 1 over the K states of every step, as a Categorical message (batch ``node.batch_shape``)."""
    count = node.initial.shape[-1]
    return Categorical(np.broadcast_to(1.0 / count, node.batch_shape + (count,)),
                       log_scale=np.broadcast_to(math.log(count), node.batch_shape), check=False)


def _normalised(vectors, log_scales, axis=0):
    """``(v / Σv, log_scales + log Σv)``, sums over ``axis``; a zero vector gives zeros and −∞."""
    mass = vectors.sum(axis=axis)
    positive = mass > 0.0
    return (vectors / np.expand_dims(np.where(positive, mass, 1.0), axis),
            log_scales + np.log(np.where(positive, mass, 0.0)))


def _multiply(earlier: tuple, later: tuple) -> tuple:
    """Scan operator on (normalised matrices (K, K, ...), log-normalisers (...)): ``later @ earlier``."""
    return _normalised(leading_matmul(later[0], earlier[0]), earlier[1] + later[1], axis=(0, 1))


def _forward_backward_by_scan(initial, transition, likelihood, scales, causal=False) -> Categorical:
    """The message to every z_t from one associative scan over both directions (:func:`chain_pass`);
    ``causal``: α_t alone (its log-normaliser the evidence of the steps before t). With compiled loops
    available (:mod:`fgraph.jit`) the same recursions run as one loop over time instead.
    """
    if jit.enabled():
        return _forward_backward_by_loops(initial, transition, likelihood, scales, causal)
    passed = chain_pass(initial, transition, likelihood, scales, likelihood.shape[:-1])
    forward, forward_log = passed["forward"], passed["forward_log"]
    backward, backward_log = passed["backward"], passed["backward_log"]
    if causal:
        backward, backward_log = np.ones(forward.shape), np.zeros(forward_log.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        probabilities, log_scale = _normalised(forward * backward, forward_log + backward_log)
    return Categorical(np.moveaxis(probabilities, 0, -1), log_scale=log_scale, check=False)


def chain_pass(initial, transition, probabilities, log_scales, batch: tuple) -> dict:
    """The scaled forward–backward pass of chains of batch ``batch = (..., T)`` with any non-negative matrix.

    ``initial`` π: ``(K,)`` or ``batch[:-1] + (K,)``; ``transition`` M: ``(K, K)`` or
    ``batch_M + (K, K)`` with ``batch_M`` broadcasting against ``batch[:-1] + (1,)`` (one matrix per
    chain); ``probabilities`` ``batch + (K,)`` and ``log_scales`` ``batch`` of the incoming messages.
    Laid out states first and time last ``(K, ..., T)``: one associative scan over the products of
    ``H_t = D_t M`` in both directions (the module docstring).

    Returns, in that layout: ``forward`` α_t and ``backward`` β_t (normalised) with their
    log-normalisers ``forward_log``, ``backward_log``; ``filtered`` f_0..f_{T−1} (normalised
    D_t α_t); ``likelihood`` p_t; ``matrix`` M as ``(K, K, ..., 1)``; and ``log_evidence``, log Z
    of every chain (shape ``batch[:-1]``), the incoming scales included.
    """
    count = np.shape(initial)[-1]
    steps = batch[-1]
    likelihood = np.moveaxis(np.broadcast_to(probabilities, batch + (count,)), -1, 0)  # (K, ..., T)
    scales = np.broadcast_to(log_scales, batch)
    matrix = np.moveaxis(transition, (-2, -1), (0, 1))  # (K, K, *batch_M), batch_M aligned with batch from the right
    matrix = matrix.reshape((count, count) + (1,) * (len(batch) - (matrix.ndim - 2)) + matrix.shape[2:])
    # π as (K, ...): one for every chain, or one per chain of the batch
    start = np.moveaxis(initial, -1, 0).reshape((count,) + (1,) * (len(batch) - np.ndim(initial))
                                                + np.shape(initial)[:-1])
    with np.errstate(divide="ignore", invalid="ignore"):  # an impossible observation gives −∞, not a warning
        first, first_log = _normalised(likelihood[..., 0] * start, scales[..., 0])  # f_0 = D_0 π
        forward = np.empty(likelihood.shape)
        forward_log = np.empty(scales.shape)
        forward[..., 0], forward_log[..., 0] = np.broadcast_to(start, first.shape), 0.0
        backward = np.empty(likelihood.shape)
        backward_log = np.empty(scales.shape)
        backward[..., -1], backward_log[..., -1] = 1.0, 0.0
        filtered = np.empty(likelihood.shape)
        filtered[..., 0] = first
        log_evidence = first_log
        if steps > 1:
            # H_t = D_t M for t = 1..T−1, (K, K, ..., T−1); the backward elements H_{T−1}ᵀ..H_1ᵀ
            forward_elements = likelihood[:, None, ..., 1:] * matrix
            backward_elements = np.swapaxes(forward_elements, 0, 1)[..., ::-1]
            elements = np.stack([forward_elements, backward_elements], axis=2)  # (K, K, 2, ..., T−1)
            element_logs = np.stack([scales[..., 1:], scales[..., :0:-1]])  # (2, ..., T−1)
            # fold the boundary vectors into the first elements: H_1 f_0 1ᵀ and H_{T−1}ᵀ 1 1ᵀ
            elements[:, :, 0, ..., 0] = leading_matmul(elements[:, :, 0, ..., 0], first[:, None])
            elements[:, :, 1, ..., 0] = elements[:, :, 1, ..., 0].sum(axis=1, keepdims=True)
            element_logs[0, ..., 0] += first_log
            elements, element_logs = _normalised(elements, element_logs, axis=(0, 1))
            products, logs = associative_scan(_multiply, (elements, element_logs))
            filtered[..., 1:], filtered_log = _normalised(products[:, 0, 0], logs[0])  # f_1..f_{T−1}: column 0
            forward[..., 1:] = leading_matmul(matrix, filtered[:, None, ..., :-1])[:, 0]  # α_t = M f_{t−1}
            forward_log[..., 1] = first_log
            forward_log[..., 2:] = filtered_log[..., :-1]
            backward[..., -2::-1], backward_log[..., -2::-1] = _normalised(products[:, 0, 1], logs[1])
            log_evidence = filtered_log[..., -1]
    return {"forward": forward, "forward_log": forward_log, "backward": backward, "backward_log": backward_log,
            "filtered": filtered, "likelihood": likelihood, "matrix": matrix, "log_evidence": log_evidence}


def _forward_backward_by_loops(initial, transition, likelihood, scales, causal=False) -> Categorical:
    """:func:`_forward_backward_by_scan` by the compiled loops of :mod:`fgraph.rules.markov_chain.loops`."""
    batch, count = likelihood.shape[:-1], likelihood.shape[-1]
    steps = batch[-1]
    start = np.broadcast_to(initial, batch[:-1] + (count,)).reshape(-1, count)
    probabilities, log_scale = forward_backward_loops(
        start, transition, likelihood.reshape(-1, steps, count), scales.reshape(-1, steps), causal)
    return Categorical(probabilities.reshape(batch + (count,)), log_scale=log_scale.reshape(batch), check=False)


def _forward_backward_in_floats(initial, transition, likelihood, scales, causal=False) -> Categorical:
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
    if causal:  # α_t with the evidence of the steps before t
        return Categorical(np.array(forward), log_scale=np.array(forward_log), check=False)
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
