"""Message out of the switching regression node towards ``switch``: the expected log-likelihood of each component."""
from fgraph.families import Distribution, PointMass
from fgraph.families.categorical import Categorical
from fgraph.registry import rule
from fgraph.nodes.switching_regression import SwitchingRegressionNode, expected_log_likelihoods, to_plate_batch


@rule(SwitchingRegressionNode, "switch")
def from_observed_out(q_out: PointMass, q_input: PointMass, q_coefficients: Distribution, node) -> Categorical:
    """exp E_q[log f] for switch = e_k: log μ(k) = E[log N(y | X β_k, λ⁻¹ I_J)]
    = (J/2) log(λ/2π) − (λ/2)(yᵀy − 2 (Xᵀy)ᵀm_k + tr(XᵀX E[β_kβ_kᵀ])), normalised over k."""
    return Categorical.from_natural((to_plate_batch(expected_log_likelihoods(q_out, q_input, q_coefficients, node),
                                                    node),))
