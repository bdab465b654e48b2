"""Message out of the Gaussian mixture node towards ``switch``: the expected log-likelihood of each component."""
from fgraph.families import Distribution
from fgraph.families.categorical import Categorical
from fgraph.registry import rule
from fgraph.nodes.gaussian_mixture import GaussianMixtureNode, expected_log_likelihoods


@rule(GaussianMixtureNode, "switch")
def mean_field(q_out: Distribution, q_parameters: Distribution, node) -> Categorical:
    """exp E_q[log f] for switch = e_k: log μ(k) = E[log N(x | μ_k, Λ_k⁻¹)]
    = −(d/2) log 2π + ½ E[log |Λ_k|] − ½ (d/β_k + ν_k ((x̄ − m_k)ᵀ W_k (x̄ − m_k) + tr(W_k Σ_x))), normalised over k."""
    return Categorical.from_natural((expected_log_likelihoods(q_out, q_parameters, node),))
