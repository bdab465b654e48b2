"""The multivariate Gauss–Markov chain with a random transition (F, λ): structured VMP, q(x_1..x_T) q(F, λ).

The variational Bayesian linear dynamical system (Beal 2003, ch. 5). With q(F, λ) a matrix-normal–gamma
(mean M, column covariance V, E[λ_i] = ℓ_i) the expected log factor of a transition is

    E_q[log N(x_t | F x_{t−1} + c_t, Λ⁻¹)]
        = −(d/2) log 2π + ½ Σ_i E[log λ_i] − ½ (x_tᵀE[Λ]x_t − 2 x_tᵀE[ΛF]x_{t−1} + x_{t−1}ᵀE[FᵀΛF]x_{t−1}) + …
        = log N(x_t | F̄ x_{t−1} + c_t, Q̄) − ½ x_{t−1}ᵀ X x_{t−1} + ½ Σ_i E[log λ_i] − ½ log det E[Λ],

(the dots: the terms in c_t, which the same rewriting carries) with F̄ = E[Λ]⁻¹E[ΛF] = M, Q̄ = E[Λ]⁻¹ =
diag(1/ℓ) and the extra precision X = E[FᵀΛF] − F̄ᵀE[Λ]F̄ = d V on every x_{t−1} (t = 2..T). So q(x) ∝
Π_t μ_t exp E_q[log f] is the fixed chain of :mod:`fgraph.rules.mv_gauss_markov_chain.out` with F̄, Q̄, its incoming
messages μ_t of x_1..x_{T−1} multiplied by exp(−½ xᵀXx) (their precision W_t + X; the family's coefficient
form keeps κ_t), and the constant above per transition. One pass (:func:`chain_pass`) of the information-form
scans over those folded messages gives, per step,

* the prediction α_t = N(m⁻_t, P⁻_t) and the backward information (η_t, J_t), hence the message to ``out``,
  α_t β_t exp(−½ xᵀX_t x) (X_T = 0): ((I + P⁻(J + X_t))⁻¹(m⁻ + P⁻η), (I + P⁻(J + X_t))⁻¹P⁻), with the
  log-scale log Z' − κ_t − log ∫ N(x | m_o, P_o) h exp(ξ_tᵀx − ½xᵀW_t x), so that the belief with μ_t
  integrates to Z' = ∫ Π_t μ_t exp E_q[log f] (the prediction-error decomposition of the folded chain plus
  (T − 1) ½ Σ_i (E[log λ_i] − log ℓ_i));
* the smoothed marginals N(m_t, S_t) = α_t μ̃_t β_t and the lag-one covariances Cov(x_{t−1}, x_t) =
  G_{t−1} S_t with the RTS gain G_{t−1} = C_{t−1} F̄ᵀ (P⁻_t)⁻¹ (C the filtered covariance of the folded chain);
  they make the two-slice marginals q(x_{t−1}, x_t) = N([m_{t−1}; m_t], [[S_{t−1}, G S_t], [S_t Gᵀ, S_t]]),
  the message to ``pairs`` (log-scale log Z' at every step, as the message to ``out``) and the joint
  marginal of the cluster ``(out, pairs)`` that the update of (F, λ) and the average energy read.

The pass is kept on the incoming message for the q(F, λ) it used, so the messages to ``out`` and ``pairs``, the
joint marginal and the free energy's correction share it. (F, λ) shared by the chains runs one pass over the
whole batch; one per chain runs one pass per chain.

A sum-product (``"bp"``) cluster holding the transition has no closed form (the exact message to (F, λ) is not
in any family here); its rules stop the run at the first message with a ModelError naming the node and pointing
to ``algorithm="vmp"``.
"""
import numpy as np

from fgraph.errors import ModelError
from fgraph.families import Distribution, MultivariateNormal, Uninformative
from fgraph.families.matrix_normal_gamma import MatrixNormalGamma
from fgraph.families.mvnormal import MvNormalMeanCovariance
from fgraph.registry import marginal_rule, rule
from fgraph.scan import associative_scan
from fgraph.nodes.mv_gauss_markov_chain import VariationalMvGaussMarkovChainNode
from fgraph.rules.gauss_markov_chain.elements import (
    combine_filtering, combine_with_backward, information_filtering_elements, log_gaussian_integrals, predictions,
)
from fgraph.rules.mv_gauss_markov_chain.out import incoming_information


def refuse_sum_product(node, interface: str):
    """The error of a sum-product cluster over the chain and its random transition, naming the node (raised by
    the rules the compiler binds under ``algorithm="bp"``, at the first message to or from the node)."""
    raise ModelError(
        f"node {node.name!r} (MvGaussMarkovChain with a random transition) has no sum-product messages (asked for "
        f"its message to {interface!r}): the exact messages to (F, λ), and through them to the states, are in no "
        "family here. Learn the transition with algorithm='vmp' (the structured mean field q(x) q(F, λ) of the "
        "variational Bayesian linear dynamical system, with init={'<transition>': its prior}), or give the chain "
        "a fixed transition and noise")


def expected_dynamics(q_transition: MatrixNormalGamma) -> tuple:
    """(F̄ = M, Q̄ = diag(1/ℓ), X = d V, ½ Σ_i (E[log λ_i] − log ℓ_i)) of q(F, λ), each with its batch."""
    precision = np.asarray(q_transition.mean_precision)  # ℓ, batch + (d,)
    d = precision.shape[-1]
    noise = np.zeros(precision.shape + (d,))
    index = np.arange(d)
    noise[..., index, index] = 1.0 / precision
    constant = 0.5 * np.sum(q_transition.mean_log_precision - np.log(precision), axis=-1)
    return np.asarray(q_transition.matrix_mean), noise, d * np.asarray(q_transition.column_covariance), constant


def chain_pass(m_out: MultivariateNormal, q_transition: MatrixNormalGamma, node) -> dict:
    """The scans of the chain under q(F, λ) over the incoming messages (module docstring), kept on ``m_out``.

    Returns, batch-then-event: ``mean``/``cov`` of the message to ``out`` (..., T, d)/(..., T, d, d) and its
    ``log_scale`` (..., T); ``smoothed_mean``, ``smoothed_cov``; ``lag_cov`` Cov(x_{t−1}, x_t) at t = 2..T,
    (..., T − 1, d, d); ``log_evidence`` log Z' (...,).
    """
    return m_out.derived_with(f"_mv_gauss_markov_pass_{id(node)}", (q_transition,),
                              lambda: _chain_pass(m_out, q_transition, node))


def _chain_pass(m_out, q_transition, node) -> dict:
    weighted_mean, precision, coefficient = incoming_information(m_out, node)
    transition, noise, extra, constant = expected_dynamics(q_transition)
    offset = None if node.offset is None else np.moveaxis(node.offset, -1, 0)
    if not q_transition.batch_shape:  # shared by every chain: one pass over the whole batch
        return _pass(transition, noise, extra, constant, node.initial_mean, node.initial_cov, weighted_mean,
                     precision, coefficient, offset)
    chains = node.batch_shape[:-1]
    parts = []
    for chain in np.ndindex(chains):
        vector, block = (slice(None),) + chain, (slice(None), slice(None)) + chain
        m0 = node.initial_mean if node.initial_mean.ndim == 1 else node.initial_mean[chain]  # one start, or one each
        P0 = node.initial_cov if node.initial_cov.ndim == 2 else node.initial_cov[chain]
        parts.append(_pass(transition[chain][0], noise[chain][0], extra[chain][0], constant[chain][0], m0, P0,
                           weighted_mean[vector], precision[block], coefficient[chain],
                           None if offset is None else offset[vector]))
    return {key: np.stack([part[key] for part in parts]).reshape(chains + parts[0][key].shape) for key in parts[0]}


def _pass(transition, noise, extra, constant, initial_mean, initial_cov, weighted_mean, precision, coefficient,
          offset) -> dict:
    """One (F̄, Q̄, X) for the chains of ``weighted_mean`` (d, ..., T), ``precision`` (d, d, ..., T)."""
    steps, d = weighted_mean.shape[-1], weighted_mean.shape[0]
    extra_block = extra.reshape((d, d) + (1,) * (precision.ndim - 2))
    folded = precision.copy()  # μ̃_t: the extra precision X on x_1..x_{T−1}
    folded[..., :-1] += extra_block
    elements = information_filtering_elements(transition, noise, initial_mean, initial_cov, weighted_mean, folded,
                                              offset)
    _, filtered_mean, filtered_cov, _, _ = associative_scan(combine_filtering, elements)
    predicted_mean, predicted_cov = predictions(transition, noise, initial_mean, initial_cov, filtered_mean,
                                                filtered_cov, offset)
    evidence_terms = coefficient + log_gaussian_integrals(predicted_mean, predicted_cov, weighted_mean, folded)
    log_evidence = np.sum(evidence_terms, axis=-1) + (steps - 1) * constant
    suffixes = associative_scan(combine_filtering, tuple(part[..., 1:] for part in elements), reverse=True)
    eta, information = np.zeros(filtered_mean.shape), np.zeros(filtered_cov.shape)  # β_t; flat at t = T
    eta[..., :-1], information[..., :-1] = suffixes[3], suffixes[4]
    own_extra = np.zeros(filtered_cov.shape)  # X_t on the message to x_t, t < T
    own_extra[..., :-1] = extra_block
    out_mean, out_cov = combine_with_backward(predicted_mean, predicted_cov, eta, information + own_extra)
    out_log = log_evidence[..., None] - coefficient - log_gaussian_integrals(out_mean, out_cov, weighted_mean,
                                                                             precision)
    smoothed_mean, smoothed_cov = combine_with_backward(predicted_mean, predicted_cov, eta + weighted_mean,
                                                       information + folded)
    filtered_cov, predicted_cov = _batch_first(filtered_cov, 2), _batch_first(predicted_cov, 2)
    smoothed_cov = _batch_first(smoothed_cov, 2)
    # G_{t−1}ᵀ = (P⁻_t)⁻¹ F̄ C_{t−1}: the RTS gain of the folded chain; Cov(x_{t−1}, x_t) = G_{t−1} S_t
    gain_transposed = np.linalg.solve(predicted_cov[..., 1:, :, :], transition @ filtered_cov[..., :-1, :, :])
    lag_cov = np.swapaxes(gain_transposed, -1, -2) @ smoothed_cov[..., 1:, :, :]
    return {"mean": _batch_first(out_mean, 1), "cov": _batch_first(out_cov, 2), "log_scale": out_log,
            "smoothed_mean": _batch_first(smoothed_mean, 1), "smoothed_cov": smoothed_cov, "lag_cov": lag_cov,
            "log_evidence": log_evidence}


def _batch_first(array, event: int):
    """From the scan layout (entries first, time last) to batch-then-event: (d, ..., T) → (..., T, d)."""
    return np.moveaxis(array, tuple(range(event)), tuple(range(-event, 0)))


def two_slice_marginals(passed: dict) -> tuple:
    """Means ``(..., T, 2d)`` and covariances ``(..., T, 2d, 2d)`` of q(x_{t−1}, x_t), ``[previous; current]``;
    element 1 (no predecessor) is q(x_1) and an independent copy of it."""
    mean, cov, lag = passed["smoothed_mean"], passed["smoothed_cov"], passed["lag_cov"]
    previous_mean = np.concatenate([mean[..., :1, :], mean[..., :-1, :]], axis=-2)
    previous_cov = np.concatenate([cov[..., :1, :, :], cov[..., :-1, :, :]], axis=-3)
    cross = np.concatenate([np.zeros(cov[..., :1, :, :].shape), lag], axis=-3)
    pair_cov = np.concatenate([np.concatenate([previous_cov, cross], axis=-1),
                               np.concatenate([np.swapaxes(cross, -1, -2), cov], axis=-1)], axis=-2)
    return np.concatenate([previous_mean, mean], axis=-1), pair_cov


@rule(VariationalMvGaussMarkovChainNode, "out")
def structured(m_out: MultivariateNormal, m_pairs: Uninformative, q_transition: MatrixNormalGamma,
               node) -> MultivariateNormal:
    """α_t β_t exp(−½ xᵀX_t x) of the chain with F̄, Q̄, X from q(F, λ), with log-scale log Z' − (the scale of
    μ_t's overlap): the belief integrates to Z' = ∫ Π_t μ_t exp E_q[log f] at every step."""
    passed = chain_pass(m_out, q_transition, node)
    return MvNormalMeanCovariance(passed["mean"], passed["cov"], log_scale=passed["log_scale"], check=False)


@rule(VariationalMvGaussMarkovChainNode, "pairs")
def two_slices(m_pairs: Uninformative, m_out: MultivariateNormal, q_transition: MatrixNormalGamma,
               node) -> MultivariateNormal:
    """The two-slice marginals q(x_{t−1}, x_t) (:func:`two_slice_marginals`), each with the log Z' of its chain."""
    passed = chain_pass(m_out, q_transition, node)
    mean, cov = two_slice_marginals(passed)
    log_scale = np.broadcast_to(passed["log_evidence"][..., None], node.batch_shape)
    return MvNormalMeanCovariance(mean, cov, log_scale=log_scale, check=False)


@marginal_rule(VariationalMvGaussMarkovChainNode, ("out", "pairs"))
def chain_posterior(m_out: MultivariateNormal, m_pairs: Uninformative, q_transition: MatrixNormalGamma,
                    node) -> MultivariateNormal:
    """q(x) ∝ Π_t μ_t exp E_q[log f], as its two-slice marginals (what the update of (F, λ) and the energy read)."""
    return MvNormalMeanCovariance(*two_slice_marginals(chain_pass(m_out, q_transition, node)), check=False)


@rule(VariationalMvGaussMarkovChainNode, "out")
def sum_product(m_out: Distribution, m_pairs: Distribution, m_transition: Distribution, node) -> MultivariateNormal:
    """Refused (:func:`refuse_sum_product`)."""
    refuse_sum_product(node, "out")


@rule(VariationalMvGaussMarkovChainNode, "pairs")
def sum_product_pairs(m_pairs: Distribution, m_out: Distribution, m_transition: Distribution,
                      node) -> MultivariateNormal:
    """Refused (:func:`refuse_sum_product`)."""
    refuse_sum_product(node, "pairs")
