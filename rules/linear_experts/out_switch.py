"""Joint marginal of the structured cluster (out, switch) of LinearExperts.

q(y, z = k) ∝ m_switch(k) f̃_k(y) m_out(y) = γ_k N(y | μ_k, Σ_k): a mixture over y whose weights
are q(z), γ_k ∝ π_k ∫ f̃_k m̄_out (see :mod:`fgraph.rules.linear_experts.switch`), and whose components
are q(y | z = k), natural parameters (D_k M_k x̃ + ξ, D_k + W).
"""
import numpy as np

from fgraph.families import Categorical, Distribution, MultivariateNormal, MvNormalWeightedMeanPrecision, PointMass
from fgraph.families.base import logsumexp
from fgraph.families.mixture import Mixture
from fgraph.registry import marginal_rule
from fgraph.nodes.linear_experts import LinearExpertsNode
from fgraph.rules.linear_experts.switch import log_evidence_per_expert


@marginal_rule(LinearExpertsNode, ("out", "switch"))
def structured(m_out: MultivariateNormal, m_switch: Categorical, q_parameters: Distribution, q_input: PointMass,
               node) -> Mixture.of(MultivariateNormal):
    """γ_k ∝ π_k ∫ f̃_k m̄_out, components q(y | k) with precision D_k + W and weighted mean D_k M_k x̃ + ξ.

    Kept on the message to ``out`` for the other inputs: the sweep and the free energy ask for the same one."""
    return m_out.derived_with(f"_joint_marginal_{id(node)}", (m_switch, q_parameters, q_input),
                              lambda: _joint_marginal(m_out, m_switch, q_parameters, q_input, node))


def _joint_marginal(m_out, m_switch, q_parameters, q_input, node) -> Mixture:
    log_z, weighted_mean, precision = log_evidence_per_expert(m_out, q_parameters, q_input, node)
    with np.errstate(divide="ignore"):
        log_weights = np.log(m_switch.probabilities) + log_z
    components = [MvNormalWeightedMeanPrecision(weighted_mean[..., k, :], precision[..., k, :, :], check=False)
                  for k in range(log_z.shape[-1])]
    return Mixture.create(log_weights, components, None, logsumexp(log_weights, axis=-1))
