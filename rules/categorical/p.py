"""Messages out of the Categorical node towards ``p`` (a probability vector)."""
import numpy as np

from fgraph.families import Dirichlet, Distribution, PointMass
from fgraph.families.base import batch_total
from fgraph.families.dirichlet import log_multivariate_beta
from fgraph.registry import rule
from fgraph.nodes.categorical import CategoricalNode


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
def mean_field(q_out: Distribution, node) -> Dirichlet:
    """exp E_q[log f] = prod_k p_k^E[x_k] ∝ Dir(p | 1 + E[x]).

    Its natural parameters are E[x] themselves; their sums over a plate (which a shared p reads) are
    given with the message, one matrix product rather than α − 1 formed and summed."""
    weights = np.asarray(q_out.mean, dtype=float)
    message = Dirichlet(1.0 + weights, check=False)
    if weights.ndim > 1 + node.copy_ndim:
        message.with_natural_parameter_totals((batch_total(weights, 1, keep=node.copy_ndim),), node.copy_ndim)
    return message
