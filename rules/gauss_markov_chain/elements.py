"""Linear-Gaussian chains as associative scans: the filtering and smoothing elements of Särkkä & García-Fernández.

Model (state dimension d, time t = 1..T, 0-based in the code)::

    x_1 ~ N(m₀, P₀),   x_t = F x_{t−1} + N(0, Q),   y_t = x_t + N(0, R_t).

The "observations" y_t are the incoming messages of a chain node, N(x_t | y_t, R_t):
the observation matrix is the identity. Following S. Särkkä and
Á. F. García-Fernández, *Temporal parallelization of Bayesian smoothers*
(IEEE TAC 66(1), 2021), each step is an element of an associative operator.

**Filtering elements** a_t = (A, b, C, η, J): p(x_t | y_t, x_{t−1}) = N(x_t | A x_{t−1} + b, C)
and p(y_t | x_{t−1}) ∝ exp(−½ x_{t−1}ᵀ J x_{t−1} + ηᵀ x_{t−1}). With S = Q + R_t,

    A = R_t S⁻¹ F,  b = Q S⁻¹ y_t,  C = R_t S⁻¹ Q,  η = Fᵀ S⁻¹ y_t,  J = Fᵀ S⁻¹ F   (t ≥ 2),

(the paper's ``I − K`` with K = Q S⁻¹ written as R_t S⁻¹, which subtracts nothing), and for
t = 1, with S = P₀ + R_1, A = 0, b = R_1 S⁻¹ m₀ + P₀ S⁻¹ y_1, C = R_1 S⁻¹ P₀, η = J = 0.
The operator (a_i earlier, a_j later), with D = (I + C_i J_j)⁻¹:

    A = A_j D A_i,                b = A_j D (b_i + C_i η_j) + b_j,     C = A_j D C_i A_jᵀ + C_j,
    η = A_iᵀ Dᵀ (η_j − J_j b_i) + η_i,       J = A_iᵀ Dᵀ J_j A_i + J_i.

The prefix a_1 ⊗ … ⊗ a_t has the filtered mean and covariance as (b, C); a suffix
a_{t+1} ⊗ … ⊗ a_T has, as (η, J), the information form of the backward message
β_t(x_t) = p(y_{t+1:T} | x_t) (up to its constant), whatever F (singular or not).

**Smoothing elements** e_t = (E, g, L) from the filtered N(m_t, P_t): for t < T,
E = P_t Fᵀ (F P_t Fᵀ + Q)⁻¹, g = m_t − E F m_t, L = P_t − E F P_t; for t = T, (0, m_T, P_T).
Operator (e_i earlier, e_j later): (E_i E_j, E_i g_j + g_i, E_i L_j E_iᵀ + L_i); the suffix
e_t ⊗ … ⊗ e_T holds the smoothed (Rauch–Tung–Striebel) mean and covariance as (g, L).

**Layout** (that of :mod:`fgraph.scan`): a d-vector is an array ``(d, ..., T)``, a d×d
block ``(d, d, ..., T)``; the leading axes are the element's entries, then batch axes
(independent chains), time last. Constant F, Q, m₀, P₀ are ``(d, d)``/``(d,)`` arrays
(broadcast over batch and time). With d = 1 every block product is one multiplication.
"""
from __future__ import annotations

import numpy as np

from fgraph.families.normal import LOG_2PI
from fgraph.scan import associative_scan, leading_matmul

__all__ = [
    "filtering_elements", "combine_filtering", "combine_scalar_filtering", "scalar_elements",
    "smoothing_elements", "combine_smoothing", "filter_and_backward_information", "predicted_moments",
    "log_evidence_terms", "kalman_smoother", "information_filtering_elements", "predictions",
    "log_gaussian_integrals", "combine_with_backward", "initial_blocks",
]


def _transpose(block):
    return np.swapaxes(block, 0, 1)


def _inverse(block):
    """Inverse of every d×d block ``(d, d, ...)``; d ≤ 2 in closed form (no transposed copies, no LAPACK calls)."""
    if block.shape[0] == 1:
        return 1.0 / block
    if block.shape[0] == 2:
        a, b, c, d = block[0, 0], block[0, 1], block[1, 0], block[1, 1]
        determinant = a * d - b * c
        return np.stack([np.stack([d, -b]), np.stack([-c, a])]) / determinant
    return np.moveaxis(np.linalg.inv(np.moveaxis(block, (0, 1), (-2, -1))), (-2, -1), (0, 1))


def _log_det(block):
    """log |det| of every d×d block ``(d, d, ...)`` (the blocks here have positive determinants)."""
    if block.shape[0] == 1:
        return np.log(block[0, 0])
    if block.shape[0] == 2:
        return np.log(block[0, 0] * block[1, 1] - block[0, 1] * block[1, 0])
    return np.linalg.slogdet(np.moveaxis(block, (0, 1), (-2, -1)))[1]


def _plus_identity(block):
    """``I + block`` for blocks ``(d, d, ...)``."""
    if block.shape[0] == 1:
        return 1.0 + block
    eye = np.eye(block.shape[0]).reshape(block.shape[:2] + (1,) * (block.ndim - 2))
    return eye + block


def _apply(block, vector):
    """Block–vector products: ``(d, d, ...) · (d, ...) → (d, ...)``."""
    return leading_matmul(block, vector[:, None])[:, 0]


def _as_block(matrix, ndim):
    """A constant (d, d) matrix shaped to broadcast against blocks of ``ndim`` axes."""
    matrix = np.asarray(matrix, dtype=float)
    return matrix.reshape(matrix.shape + (1,) * (ndim - 2))


def filtering_elements(transition, noise, initial_mean, initial_cov, observations, observation_cov) -> tuple:
    """The elements a_1..a_T = (A, b, C, η, J) of the filtering operator (see the module docstring).

    ``transition`` F and ``noise`` Q: (d, d); ``initial_mean`` m₀: (d,); ``initial_cov`` P₀: (d, d);
    ``observations`` y: (d, ..., T); ``observation_cov`` R: (d, d, ..., T).
    Returns blocks (d, d, ..., T) and vectors (d, ..., T).
    """
    observations = np.asarray(observations, dtype=float)
    observation_cov = np.broadcast_to(observation_cov, observations.shape[:1] + observations.shape)
    ndim = observation_cov.ndim
    F, Q = _as_block(transition, ndim), _as_block(noise, ndim)
    P0 = _as_block(initial_cov, ndim)
    m0 = np.asarray(initial_mean, dtype=float).reshape((-1,) + (1,) * (ndim - 2))
    gain_inverse = _inverse(Q + observation_cov)  # S⁻¹ for t ≥ 2
    residual_gain = leading_matmul(observation_cov, gain_inverse)  # R S⁻¹
    A = leading_matmul(residual_gain, F)
    b = _apply(leading_matmul(Q, gain_inverse), observations)
    C = leading_matmul(residual_gain, Q)
    FT_S = leading_matmul(_transpose(F), gain_inverse)
    eta = _apply(FT_S, observations)
    J = leading_matmul(FT_S, F)
    # the first step: the prior in place of the dynamics
    R1, y1 = observation_cov[..., 0], observations[..., 0]
    first_inverse = _inverse(P0[..., 0] + R1)
    A[..., 0], eta[..., 0], J[..., 0] = 0.0, 0.0, 0.0
    first_residual_gain = leading_matmul(R1, first_inverse)  # R_1 S⁻¹ = I − K
    b[..., 0] = _apply(first_residual_gain, m0[..., 0]) + _apply(leading_matmul(P0[..., 0], first_inverse), y1)
    C[..., 0] = leading_matmul(first_residual_gain, P0[..., 0])
    return A, b, C, eta, J


def combine_filtering(earlier: tuple, later: tuple) -> tuple:
    """The filtering operator a_i ⊗ a_j (Särkkä & García-Fernández 2021, Lemma 8), blocks batched."""
    Ai, bi, Ci, ei, Ji = earlier
    Aj, bj, Cj, ej, Jj = later
    if Ai.shape[0] == 1:  # scalar states: the same formulas without block products
        A, b, C, eta, J = combine_scalar_filtering(scalar_elements(earlier), scalar_elements(later))
        return A[None, None], b[None], C[None, None], eta[None], J[None, None]
    D = _inverse(_plus_identity(leading_matmul(Ci, Jj)))
    AjD = leading_matmul(Aj, D)
    AiDT = leading_matmul(_transpose(Ai), _transpose(D))
    return (leading_matmul(AjD, Ai), _apply(AjD, bi + _apply(Ci, ej)) + bj,
            leading_matmul(leading_matmul(AjD, Ci), _transpose(Aj)) + Cj,
            _apply(AiDT, ej - _apply(Jj, bi)) + ei, leading_matmul(leading_matmul(AiDT, Jj), Ai) + Ji)


def combine_scalar_filtering(earlier: tuple, later: tuple) -> tuple:
    """:func:`combine_filtering` for d = 1 on arrays without the entry axes, (A, b, C, η, J) each (..., T)."""
    Ai, bi, Ci, ei, Ji = earlier
    Aj, bj, Cj, ej, Jj = later
    D = 1.0 / (1.0 + Ci * Jj)
    AjD, AiD = Aj * D, Ai * D
    return (AjD * Ai, AjD * (bi + Ci * ej) + bj, AjD * Ci * Aj + Cj, AiD * (ej - Jj * bi) + ei, AiD * Jj * Ai + Ji)


def scalar_elements(element: tuple) -> tuple:
    """A d = 1 filtering element without its entry axes: blocks (1, 1, ...) → (...), vectors (1, ...) → (...)."""
    return tuple(part[0, 0] if index in (0, 2, 4) else part[0] for index, part in enumerate(element))


def smoothing_elements(transition, noise, filtered_mean, filtered_cov) -> tuple:
    """The elements e_1..e_T = (E, g, L) of the smoothing operator from filtered means (d, ..., T) and covariances."""
    ndim = filtered_cov.ndim
    F, Q = _as_block(transition, ndim), _as_block(noise, ndim)
    PFT = leading_matmul(filtered_cov, _transpose(F))  # P_t Fᵀ
    E = leading_matmul(PFT, _inverse(leading_matmul(F, PFT) + Q))
    EF = leading_matmul(E, F)
    g = filtered_mean - _apply(EF, filtered_mean)
    L = filtered_cov - leading_matmul(EF, filtered_cov)
    E[..., -1], g[..., -1], L[..., -1] = 0.0, filtered_mean[..., -1], filtered_cov[..., -1]
    return E, g, L


def combine_smoothing(earlier: tuple, later: tuple) -> tuple:
    """The smoothing operator e_i ⊗ e_j (Särkkä & García-Fernández 2021, Lemma 10), blocks batched."""
    Ei, gi, Li = earlier
    Ej, gj, Lj = later
    if Ei.shape[0] == 1:  # scalar states: (1, 1, ...) blocks and (1, ...) vectors
        return Ei * Ej, Ei[0] * gj + gi, Ei * Lj * Ei + Li
    return (leading_matmul(Ei, Ej), _apply(Ei, gj) + gi,
            leading_matmul(leading_matmul(Ei, Lj), _transpose(Ei)) + Li)


def filter_and_backward_information(transition, noise, initial_mean, initial_cov, observations, observation_cov):
    """Filtered moments and backward messages of every step, by two scans over the filtering elements.

    Returns ``(filtered_mean (d, ..., T), filtered_cov (d, d, ..., T), eta (d, ..., T), J (d, d, ..., T))``
    with (η_t, J_t) the information form of β_t(x_t) = p(y_{t+1:T} | x_t) (zero at t = T).
    """
    elements = filtering_elements(transition, noise, initial_mean, initial_cov, observations, observation_cov)
    _, filtered_mean, filtered_cov, _, _ = associative_scan(combine_filtering, elements)
    eta, J = np.zeros(filtered_mean.shape), np.zeros(filtered_cov.shape)
    if filtered_mean.shape[-1] > 1:
        suffixes = associative_scan(combine_filtering, tuple(part[..., 1:] for part in elements), reverse=True)
        eta[..., :-1], J[..., :-1] = suffixes[3], suffixes[4]
    return filtered_mean, filtered_cov, eta, J


def predicted_moments(transition, noise, initial_mean, initial_cov, filtered_mean, filtered_cov):
    """The predictions of x_t from y_1..y_{t−1}: (F m_{t−1}, F P_{t−1} Fᵀ + Q), and (m₀, P₀) at t = 1."""
    ndim = filtered_cov.ndim
    F, Q = _as_block(transition, ndim), _as_block(noise, ndim)
    mean, cov = np.empty(filtered_mean.shape), np.empty(filtered_cov.shape)
    mean[..., 0] = np.asarray(initial_mean, dtype=float).reshape((-1,) + (1,) * (ndim - 3))
    cov[..., 0] = _as_block(initial_cov, ndim - 1)
    mean[..., 1:] = _apply(F, filtered_mean[..., :-1])
    cov[..., 1:] = leading_matmul(leading_matmul(F, filtered_cov[..., :-1]), _transpose(F)) + Q
    return mean, cov


def log_evidence_terms(predicted_mean, predicted_cov, observations, observation_cov):
    """``log N(y_t | m⁻_t, P⁻_t + R_t)`` per step (..., T): the prediction-error decomposition of log p(y_1:T)."""
    d = observations.shape[0]
    innovation = observations - predicted_mean
    total = predicted_cov + observation_cov
    if d == 1:
        return -0.5 * (LOG_2PI + np.log(total[0, 0]) + innovation[0] ** 2 / total[0, 0])
    moved = np.moveaxis(total, (0, 1), (-2, -1))
    _, log_det = np.linalg.slogdet(moved)
    solved = np.linalg.solve(moved, np.moveaxis(innovation, 0, -1)[..., None])[..., 0]
    quadratic = np.sum(np.moveaxis(innovation, 0, -1) * solved, axis=-1)
    return -0.5 * (d * LOG_2PI + log_det + quadratic)


def kalman_smoother(transition, noise, initial_mean, initial_cov, observations, observation_cov) -> dict:
    """Kalman filter, RTS smoother and log evidence of every chain, all by associative scans.

    Shapes as in :func:`filtering_elements`. Returns ``filtered_mean``/``smoothed_mean`` (d, ..., T),
    ``filtered_cov``/``smoothed_cov`` (d, d, ..., T) and ``log_evidence`` (...,) = log p(y_1:T).
    """
    observations = np.asarray(observations, dtype=float)
    observation_cov = np.broadcast_to(observation_cov, observations.shape[:1] + observations.shape)
    elements = filtering_elements(transition, noise, initial_mean, initial_cov, observations, observation_cov)
    _, filtered_mean, filtered_cov, _, _ = associative_scan(combine_filtering, elements)
    _, smoothed_mean, smoothed_cov = associative_scan(
        combine_smoothing, smoothing_elements(transition, noise, filtered_mean, filtered_cov), reverse=True)
    predicted = predicted_moments(transition, noise, initial_mean, initial_cov, filtered_mean, filtered_cov)
    terms = log_evidence_terms(*predicted, observations, observation_cov)
    return {"filtered_mean": filtered_mean, "filtered_cov": filtered_cov, "smoothed_mean": smoothed_mean,
            "smoothed_cov": smoothed_cov, "log_evidence": terms.sum(axis=-1)}


# ---- information form: incoming messages exp(κ) h(x) exp(ξᵀx − ½ xᵀWx), W only positive semi-definite ----


def _per_step(matrix, ndim):
    """A transition or noise matrix as blocks: a constant (d, d) broadcast to ``ndim`` axes, or per-step
    ``(T − 1, d, d)`` (entry t maps step t to t + 1) as ``(d, d, 1…, T)`` with a placeholder at t = 1."""
    matrix = np.asarray(matrix, dtype=float)
    if matrix.ndim == 2:
        return _as_block(matrix, ndim)
    steps = matrix.shape[0] + 1
    block = np.empty(matrix.shape[1:] + (steps,))
    block[..., 0] = 0.0
    block[..., 1:] = np.moveaxis(matrix, 0, -1)
    return block.reshape(block.shape[:2] + (1,) * (ndim - 3) + (steps,))


def initial_blocks(initial_mean, initial_cov, ndim) -> tuple:
    """m₀ and P₀ in the scan layout without the time axis: (d, ...) and (d, d, ...) for elements of ``ndim``
    axes ((d, d, ..., T) blocks). Either one state for every chain, (d,) and (d, d), or one per chain,
    ``batch + (d,)`` and ``batch + (d, d)`` (e.g. the filter state a stream carries from chunk to chunk)."""
    m0 = np.moveaxis(np.asarray(initial_mean, dtype=float), -1, 0)
    P0 = np.moveaxis(np.asarray(initial_cov, dtype=float), (-2, -1), (0, 1))
    batch_ndim = ndim - 3
    m0 = m0.reshape(m0.shape[:1] + (1,) * (1 + batch_ndim - m0.ndim) + m0.shape[1:])
    P0 = P0.reshape(P0.shape[:2] + (1,) * (2 + batch_ndim - P0.ndim) + P0.shape[2:])
    return m0, P0


def information_filtering_elements(transition, noise, initial_mean, initial_cov, weighted_mean, precision,
                                   offset=None) -> tuple:
    """The filtering elements (A, b, C, η, J) of a chain whose t-th message is exp(ξ_tᵀx − ½ xᵀW_t x).

    Model: x_1 ~ N(m₀, P₀), x_t = F_t x_{t−1} + c_t + N(0, Q_t). With G = (I + Q W)⁻¹ (invertible for
    positive semi-definite Q and W; no inverse of W, which may be singular, nor of Q):

        C = G Q = (Q⁻¹ + W)⁻¹,   A = G F,   b = G (c + Q ξ),
        J = Fᵀ W G F,            η = Fᵀ (Gᵀ ξ − W G c),

    from completing the square in x_t of N(x_t | F x + c, Q) exp(ξᵀx_t − ½ x_tᵀW x_t) (W G = (W⁻¹ + Q)⁻¹
    is symmetric, and I − G Q W = G). With W = R⁻¹ and ξ = R⁻¹y these are the elements of
    :func:`filtering_elements`. At t = 1, G₀ = (I + P₀ W)⁻¹: A = 0, b = G₀ (m₀ + P₀ ξ), C = G₀ P₀, η = J = 0.

    ``transition``/``noise``: (d, d), or per step (T − 1, d, d); ``initial_mean`` (d,) or per chain (..., d),
    ``initial_cov`` (d, d) or (..., d, d) (:func:`initial_blocks`); ``weighted_mean`` ξ (d, ..., T);
    ``precision`` W (d, d, ..., T); ``offset`` c (d, ..., T) or None (c_1 unused). Returns blocks
    (d, d, ..., T) and vectors (d, ..., T), as :func:`combine_filtering` takes them.
    """
    ndim = precision.ndim
    F, Q = _per_step(transition, ndim), _per_step(noise, ndim)
    m0, P0 = initial_blocks(initial_mean, initial_cov, ndim)
    W = precision
    G = _inverse(_plus_identity(leading_matmul(Q, W)))
    A = leading_matmul(G, F)
    forced = _apply(Q, weighted_mean) if offset is None else offset + _apply(Q, weighted_mean)
    b = _apply(G, forced)
    C = leading_matmul(G, Q)
    WG = leading_matmul(W, G)
    FT = _transpose(F)
    pulled = _apply(_transpose(G), weighted_mean)
    if offset is not None:
        pulled = pulled - _apply(WG, offset)
    eta = _apply(FT, pulled)
    J = leading_matmul(leading_matmul(FT, WG), F)
    # the first step: the prior in place of the dynamics
    first = _inverse(_plus_identity(leading_matmul(P0, W[..., 0])))
    A[..., 0], eta[..., 0], J[..., 0] = 0.0, 0.0, 0.0
    b[..., 0] = _apply(first, m0 + _apply(P0, weighted_mean[..., 0]))
    C[..., 0] = leading_matmul(first, P0)
    return A, b, C, eta, J


def predictions(transition, noise, initial_mean, initial_cov, filtered_mean, filtered_cov, offset=None) -> tuple:
    """α_t = N(m⁻_t, P⁻_t), the prediction of x_t from the messages before t: (F_t m_{t−1} + c_t,
    F_t P_{t−1} F_tᵀ + Q_t), and (m₀, P₀) at t = 1. Transition and noise as in
    :func:`information_filtering_elements`; filtered moments (d, ..., T), (d, d, ..., T)."""
    ndim = filtered_cov.ndim
    F, Q = _per_step(transition, ndim), _per_step(noise, ndim)
    mean, cov = np.empty(filtered_mean.shape), np.empty(filtered_cov.shape)
    mean[..., 0], cov[..., 0] = initial_blocks(initial_mean, initial_cov, ndim)
    F_next, Q_next = F[..., 1:] if F.shape[-1] > 1 else F, Q[..., 1:] if Q.shape[-1] > 1 else Q
    mean[..., 1:] = _apply(F_next, filtered_mean[..., :-1])
    if offset is not None:
        mean[..., 1:] += offset[..., 1:]
    cov[..., 1:] = leading_matmul(leading_matmul(F_next, filtered_cov[..., :-1]), _transpose(F_next)) + Q_next
    return mean, cov


def log_gaussian_integrals(mean, cov, weighted_mean, precision):
    """``log ∫ N(x | m, P) h(x) exp(ξᵀx − ½ xᵀW x) dx`` per block, h = (2π)^{−d/2}, W only semi-definite:

        −d/2 log 2π − ½ log|I + P W| + ξᵀm − ½ mᵀW m + ½ uᵀ (I + P W)⁻¹ P u,   u = ξ − W m,

    from x = m + δ, δ ~ N(0, P) (no inverse of P or W). Shapes (d, ...), (d, d, ...).
    """
    d = mean.shape[0]
    spread = _plus_identity(leading_matmul(cov, precision))  # I + P W
    u = weighted_mean - _apply(precision, mean)
    solved = _apply(leading_matmul(_inverse(spread), cov), u)
    return (-0.5 * d * LOG_2PI - 0.5 * _log_det(spread) + np.sum(weighted_mean * mean, axis=0)
            - 0.5 * np.sum(mean * _apply(precision, mean), axis=0) + 0.5 * np.sum(u * solved, axis=0))


def combine_with_backward(mean, cov, eta, J) -> tuple:
    """The normal N(m, P) times exp(ηᵀx − ½ xᵀJ x), normalised: ((I + P J)⁻¹ (m + P η), (I + P J)⁻¹ P)."""
    shrink = _inverse(_plus_identity(leading_matmul(cov, J)))
    out_cov = leading_matmul(shrink, cov)
    return _apply(shrink, mean + _apply(cov, eta)), 0.5 * (out_cov + _transpose(out_cov))
