"""The exact classification model's evidence lower bound for the posterior of a likelihood approximation
(Appendix B of Bui, "Likelihood approximations via Gaussian approximate inference").

The approximate posterior ``q(f_b) = N(μ_b, Σ_b)`` — the exact posterior of GP regression on the pseudo-observations
``(ỹ_b, ṽ_b)`` of the labels (:func:`~fgraph.models.gp.regression.gp_posterior`) — is a variational family of the
*exact* model (softmax or logistic likelihood) with the parameters α_ε (through ``ỹ``, ``ṽ``), θ and m. Its bound

    𝓑 = Σ_n E_q[log p(y_n | f_n)] − Σ_b KL[q(f_b) ‖ N(m_b 1, K)]  ≤  log p(y | θ)

is computed without ``K⁻¹``: with ``S = K + V``, ``Σ = K − K S⁻¹ K``, ``μ − m = K α``,

    KL_b = ½ (−tr(S⁻¹ K) + αᵀ K α + log|S| − log|V|)

(from ``K⁻¹Σ = I − S⁻¹K`` and ``|Σ|/|K| = |V|/|S|``). The expected log-likelihood uses the marginals
``q(f_bn) = N(μ_bn, Σ_b,nn)``: a one-dimensional integral for the logistic model
(:func:`~fgraph.families.basis_matching.expected_log_sigmoid`), quasi-Monte Carlo over K independent logits for
the softmax (:func:`~fgraph.models.logistic.bound.expected_log_softmax`).
"""
from __future__ import annotations

import numpy as np

from fgraph.families.basis_matching import expected_log_sigmoid
from fgraph.models.gp.regression import GPPosterior
from fgraph.models.logistic.bound import SOFTMAX_DRAWS, expected_log_softmax

__all__ = ["gp_kl_divergences", "classification_bound"]


def gp_kl_divergences(posterior: GPPosterior) -> np.ndarray:
    """``KL[q(f_b) ‖ p(f_b)]`` of each function (B,) (module docstring); cost one ``S⁻¹K`` per function (N³)."""
    belief = posterior.belief
    alpha = belief.weights
    size = alpha.shape[-1]
    prior_cov = np.broadcast_to(posterior.kernel(posterior.inputs), belief.batch_shape + (size, size))
    trace = np.trace(belief.solve(prior_cov), axis1=-2, axis2=-1)
    quadratic = np.einsum("bi,bi->b", alpha, belief.mean - posterior.means[:, None])
    return 0.5 * (-trace + quadratic + belief.log_det_evidence_cov() - np.sum(np.log(posterior.variances), axis=-1))


def classification_bound(posterior: GPPosterior, labels, draws: int = SOFTMAX_DRAWS) -> float:
    """The bound 𝓑 (module docstring) for labels in 0..K−1 (N,): logistic (label 1 the positive class) when the
    posterior has one function, softmax over its B = K functions otherwise (``draws`` quasi-Monte Carlo points)."""
    labels = np.asarray(labels, dtype=int)
    means, stds = posterior.belief.mean, np.sqrt(np.maximum(posterior.belief.var, 0.0))
    if means.shape[0] == 1:
        signs = 2.0 * labels - 1.0
        expected = np.sum(expected_log_sigmoid(signs * means[0], stds[0]))
    else:
        expected = np.sum(expected_log_softmax(means.T, stds.T, labels, draws))
    return float(expected - np.sum(gp_kl_divergences(posterior)))
