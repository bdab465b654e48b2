"""Message out of the multivariate Gauss–Markov chain node towards its states: two associative scans.

The incoming messages are μ_t(x) = exp(κ_t) h(x) exp(ξ_tᵀx − ½ xᵀW_t x) (h = (2π)^{−d/2}; W_t only
positive semi-definite: a partial observation of the state sends a rank-deficient one). The message to
x_t is α_t β_t, as for the scalar chain (:mod:`fgraph.rules.gauss_markov_chain.out`):

* α_t = N(m⁻_t, P⁻_t), the prediction of x_t from the prior and μ_1..μ_{t−1}, from the prefixes of
  the information-form filtering elements (:func:`~fgraph.rules.gauss_markov_chain.elements.information_filtering_elements`):
  the filtered moments (b, C) of step t − 1, pushed through the dynamics;
* β_t(x) ∝ exp(η_tᵀx − ½ xᵀJ_t x), what μ_{t+1}..μ_T say about x_t, from the suffixes of the same
  elements from t + 1 (η_T = J_T = 0);
* α_t β_t normalised is N((I + P⁻J)⁻¹(m⁻ + P⁻η), (I + P⁻J)⁻¹P⁻): no inverse of a precision, which
  may be singular, and no division of the smoothed marginal by μ_t;
* its log-scale is log Z − κ_t − log ∫ N(x | m_o, P_o) h(x) exp(ξ_tᵀx − ½ xᵀW_t x) dx, with
  log Z = Σ_t κ_t + log ∫ α_t h exp(ξ_tᵀx − ½ xᵀW_t x) dx the prediction-error decomposition of the
  evidence: the belief α_t β_t μ_t integrates to Z at every t.

A causal chain (``node.causal``) sends α_t alone, with the log-scale log p(μ_1..μ_{t−1}) (the sum of the
evidence terms before t): its belief α_t μ_t is the filtering marginal and integrates to p(μ_1..μ_t), the
whole sequence's evidence at t = T. One forward scan; no backward one.

Arrays are moved to the layout of :mod:`fgraph.scan` (entries first, time last) and back.
"""
import numpy as np

from fgraph.families import MultivariateNormal
from fgraph.families.mvnormal import GaussianLikelihood, MvNormalMeanCovariance
from fgraph.families.normal import LOG_2PI
from fgraph.families.pointmass import Uninformative
from fgraph.registry import rule
from fgraph.scan import associative_scan
from fgraph.nodes.mv_gauss_markov_chain import MvGaussMarkovChainNode
from fgraph.rules.gauss_markov_chain.elements import (
    combine_filtering, combine_with_backward, information_filtering_elements, log_gaussian_integrals, predictions,
)


def incoming_information(m_out: MultivariateNormal, node) -> tuple:
    """(ξ (d, ..., T), W (d, d, ..., T), κ (..., T)) of the incoming messages, in the scan layout."""
    batch, d = node.batch_shape, node.state_dim
    weighted_mean = np.moveaxis(np.broadcast_to(m_out.weighted_mean, batch + (d,)), -1, 0)
    precision = np.moveaxis(np.broadcast_to(m_out.precision, batch + (d, d)), (-2, -1), (0, 1))
    coefficient = np.broadcast_to(m_out.log_coefficient(), batch)
    return weighted_mean, precision, coefficient


def _offset(node):
    return None if node.offset is None else np.moveaxis(node.offset, -1, 0)


def filtered_moments(node, weighted_mean, precision) -> tuple:
    """The filtering elements and the filtered moments N(b_t, C_t) = p(x_t | μ_1..μ_t), scan layout."""
    elements = information_filtering_elements(node.transition, node.noise, node.initial_mean, node.initial_cov,
                                              weighted_mean, precision, _offset(node))
    _, mean, cov, _, _ = associative_scan(combine_filtering, elements)
    return elements, mean, cov


@rule(MvGaussMarkovChainNode, "out")
def forward_backward(m_out: MultivariateNormal, node) -> MultivariateNormal:
    """α_t β_t for every step and chain, from a forward and a backward scan (module docstring).

    ``m_out`` has batch shape ``node.batch_shape = (..., T)`` and event shape ``(d,)``.
    """
    weighted_mean, precision, coefficient = incoming_information(m_out, node)
    elements, filtered_mean, filtered_cov = filtered_moments(node, weighted_mean, precision)
    predicted_mean, predicted_cov = predictions(node.transition, node.noise, node.initial_mean, node.initial_cov,
                                                filtered_mean, filtered_cov, _offset(node))
    evidence_terms = coefficient + log_gaussian_integrals(predicted_mean, predicted_cov, weighted_mean, precision)
    if node.causal:  # α_t with the evidence of the steps before t
        before = np.cumsum(evidence_terms, axis=-1) - evidence_terms
        return _moment_form(predicted_mean, predicted_cov, before)
    eta, information = np.zeros(filtered_mean.shape), np.zeros(filtered_cov.shape)  # β_t; flat at t = T
    if node.batch_shape[-1] > 1:
        suffixes = associative_scan(combine_filtering, tuple(part[..., 1:] for part in elements), reverse=True)
        eta[..., :-1], information[..., :-1] = suffixes[3], suffixes[4]
    log_evidence = np.sum(evidence_terms, axis=-1)
    out_mean, out_cov = combine_with_backward(predicted_mean, predicted_cov, eta, information)
    out_log = log_evidence[..., None] - coefficient - log_gaussian_integrals(out_mean, out_cov, weighted_mean,
                                                                             precision)
    return _moment_form(out_mean, out_cov, out_log)


@rule(MvGaussMarkovChainNode, "out")
def prior(m_out: Uninformative, node) -> MultivariateNormal:
    """Nothing attached to the states: the prior marginals N(m_t, P_t), m_t = F m_{t−1} + c_t,
    P_t = F P_{t−1} Fᵀ + Q (m_1 = m₀, P_1 = P₀), log-scale 0.

    The flat message is the constant 1, a likelihood with ξ = 0, W = 0 and κ = (d/2) log 2π (which cancels
    h(x) = (2π)^{−d/2}); the information-form pass takes it as it takes a partial observation, so the
    prediction α_t is the prior marginal and the backward messages are flat.
    """
    batch, d = node.batch_shape, node.state_dim
    flat = GaussianLikelihood(np.zeros(batch + (d,)), np.zeros(batch + (d, d)),
                              log_scale=np.full(batch, 0.5 * d * LOG_2PI))
    return forward_backward(flat, node)


def _moment_form(mean, cov, log_scale) -> MvNormalMeanCovariance:
    """A normal from the scan layout, (d, ..., T) and (d, d, ..., T), back to batch-then-event arrays."""
    return MvNormalMeanCovariance(np.moveaxis(mean, 0, -1), np.moveaxis(cov, (0, 1), (-2, -1)), log_scale=log_scale,
                                  check=False)
