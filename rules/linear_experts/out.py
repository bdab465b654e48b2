"""Messages out of LinearExperts towards ``out``: Σ_k m_switch(k) f̃_k(y), a mixture of K Gaussians.

f̃_k(y) = N(y | M_k x̃, diag(ℓ_k)⁻¹) exp(c_k) (see :mod:`fgraph.nodes.linear_experts`), so the message is
the mixture with weights ∝ π_k exp(c_k) and components N(M_k x̃, diag(ℓ_k)⁻¹), and its local
log-scale is log Σ_k π_k exp(c_k) (the integral over y of the unnormalised message).
"""
import numpy as np

from fgraph.families import (
    Categorical,
    Distribution,
    MultivariateNormal,
    MvNormalMeanPrecision,
    MvNormalWeightedMeanPrecision,
    PointMass,
)
from fgraph.families.base import logsumexp
from fgraph.families.mixture import Mixture
from fgraph.registry import rule
from fgraph.nodes.linear_experts import LinearExpertsNode, expected_factor


def _mixture(probabilities, q_parameters, q_input, node) -> Mixture:
    predicted, precision, offset = expected_factor(q_parameters, q_input, node)
    with np.errstate(divide="ignore"):  # an expert the switch rules out has weight zero
        log_weights = np.log(probabilities) + offset
    log_norm = logsumexp(log_weights, axis=-1)
    h = precision.shape[-1]
    components = [MvNormalMeanPrecision(predicted[..., k, :], precision[..., k, :, None] * np.eye(h), check=False)
                  for k in range(precision.shape[-2])]
    return Mixture.create(log_weights, components, log_norm, log_norm)


@rule(LinearExpertsNode, "out")
def structured(m_switch: Categorical, q_parameters: Distribution, q_input: PointMass, node) -> Mixture.of(
        MultivariateNormal):
    """Σ_k π_k f̃_k(y): weights ∝ π_k exp(c_k), components N(M_k x̃, diag(E[λ_k])⁻¹), log-scale log Σ_k π_k e^{c_k}."""
    return _mixture(m_switch.probabilities, q_parameters, q_input, node)


@rule(LinearExpertsNode, "out")
def mean_field(q_switch: Distribution, q_parameters: Distribution, q_input: PointMass, node) -> MultivariateNormal:
    """exp E_q[log f] = Π_k f̃_k(y)^{w_k} ∝ N(y) with precision Σ_k w_k diag(E[λ_k]) and weighted mean
    Σ_k w_k E[λ_k] ∘ M_k x̃ (w = E[z]; mean field, up to a constant)."""
    predicted, precision, _ = expected_factor(q_parameters, q_input, node)
    weights = np.asarray(q_switch.mean, dtype=float)[..., None]
    diagonal = np.sum(weights * precision, axis=-2)
    weighted_mean = np.sum(weights * precision * predicted, axis=-2)
    return MvNormalWeightedMeanPrecision(weighted_mean, diagonal[..., :, None] * np.eye(diagonal.shape[-1]),
                                         check=False)


@rule(LinearExpertsNode, "out")
def from_known_switch(q_switch: PointMass, q_parameters: Distribution, q_input: PointMass, node) -> Mixture.of(
        MultivariateNormal):
    """f̃_k(y) for the expert k a known one-hot switch selects (the others at weight zero), log-scale c_k."""
    return _mixture(q_switch.value, q_parameters, q_input, node)
