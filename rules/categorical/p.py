"""Messages out of the Categorical node towards ``p`` (a probability vector)."""
from fgraph.families import Dirichlet, Distribution, PointMass
from fgraph.families.dirichlet import log_multivariate_beta
from fgraph.registry import rule
from nodes.categorical import CategoricalNode


@rule(CategoricalNode, "p")
def from_observation(q_out: PointMass) -> Dirichlet:
    """The likelihood prod_k p_k^x_k of an observed one-hot x as the scaled density Dir(p | 1 + x).

    Its integral over the simplex (Lebesgue measure on the first K - 1
    coordinates) is B(1 + x) = prod_k Γ(1 + x_k) / Γ(K + 1) = 1 / K!, the
    log-scale.
    """
    alpha = 1.0 + q_out.value
    return Dirichlet(alpha, log_scale=log_multivariate_beta(alpha), check=False)


@rule(CategoricalNode, "p")
def mean_field(q_out: Distribution) -> Dirichlet:
    """exp E_q[log f] = prod_k p_k^E[x_k] ∝ Dir(p | 1 + E[x])."""
    return Dirichlet(1.0 + q_out.mean, check=False)
