"""Message out of the Gaussian mixture node towards ``out``: the switch-weighted normal (mean field)."""
import numpy as np

from fgraph.families import Distribution, MultivariateNormal, MvNormalWeightedMeanPrecision
from fgraph.registry import rule
from fgraph.nodes.gaussian_mixture import GaussianMixtureNode, component_moments, switch_weights


@rule(GaussianMixtureNode, "out")
def mean_field(q_switch: Distribution, q_parameters: Distribution, node) -> MultivariateNormal:
    """exp E_q[log f] = Π_k exp(E[z_k] E[log N(x | μ_k, Λ_k⁻¹)]) ∝ N(x) with precision Σ_k E[z_k] ν_k W_k and
    weighted mean Σ_k E[z_k] ν_k W_k m_k (up to a constant)."""
    moments = component_moments(q_parameters, node)
    weights = switch_weights(q_switch, node.components) * moments["df"]  # E[z_k] ν_k, plate batch + (K,)
    scale, location = moments["scale"], moments["location"]
    precision = np.einsum("...k,...kij->...ij", weights, scale)
    weighted_mean = np.einsum("...k,...kij,...kj->...i", weights, scale, location)
    return MvNormalWeightedMeanPrecision(weighted_mean, precision, check=False)
