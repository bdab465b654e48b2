"""Message out of the logistic node towards ``input`` x (dimension d; the node appends the 1)."""
import numpy as np

from fgraph.families import Distribution, MultivariateNormal
from fgraph.registry import rule
from fgraph.nodes.logistic import LogisticNode, expected_omega, has_intercept, label_weight
from fgraph.rules.logistic.gaussian import gaussian_message


@rule(LogisticNode, "input")
def mean_field(q_out: Distribution, q_coefficients: Distribution, q_xi: Distribution, node) -> MultivariateNormal:
    """exp E_q[log f] = exp((κE[w] − E[ω]E[wβ₀])ᵀx − ½ E[ω] xᵀE[wwᵀ]x), β = [w; β₀].

    From ψ² = (wᵀx + β₀)² = xᵀwwᵀx + 2β₀wᵀx + β₀²: the blocks of E[ββᵀ] give
    E[wwᵀ] (top left) and E[wβ₀] (last column). Proper when E[wwᵀ] is
    positive definite (a posterior over w with a proper covariance), else a
    GaussianLikelihood (e.g. a known β: rank one). Without an intercept
    (``node.intercept`` false) β = w: ``exp(κE[w]ᵀx − ½ E[ω] xᵀE[wwᵀ]x)``.
    """
    kappa = np.asarray(label_weight(q_out))[..., None]
    omega = np.asarray(expected_omega(q_xi))[..., None]
    mean, second = np.asarray(q_coefficients.mean), np.asarray(q_coefficients.second_moment)
    if not has_intercept(node):
        return gaussian_message(kappa * mean, omega[..., None] * second)
    weighted_mean = kappa * mean[..., :-1] - omega * second[..., :-1, -1]
    return gaussian_message(weighted_mean, omega[..., None] * second[..., :-1, :-1])
