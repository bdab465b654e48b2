"""Message out of the stick-breaking logistic node towards ``out`` (the class, one-hot of length K)."""
import numpy as np

from fgraph.families import Distribution
from fgraph.families.categorical import Categorical
from fgraph.registry import rule
from fgraph.nodes.logistic import has_intercept
from fgraph.nodes.stick_breaking_logistic import StickBreakingLogisticNode, expected_logits, reach_costs


@rule(StickBreakingLogisticNode, "out")
def mean_field(q_input: Distribution, q_xi: Distribution, q_coefficients: Distribution, node) -> Categorical:
    """exp E_q[log f]: ``log m(j) = Σ_k [κ_k(j) E[ψ_k] − b_k(j) g_k]``, g_k = log 2 + log cosh(ξ_k/2) + ω̄_k (E[ψ_k²] − ξ_k²)/2.

    With b_k(j) = [k ≤ j] and κ_k(j) = [k = j] − b_k(j)/2 this is
    ``Σ_{k<j} (−E[ψ_k]/2 − g_k) + [j < K−1] (E[ψ_j]/2 − g_j)``: the passed
    sticks, then the one class j breaks off. The bound is linear in the
    one-hot class, so this Categorical is its exact coordinate update; g_k
    depends on j only through b_k(j), so the costs of reaching sticks stay in.
    """
    intercept = has_intercept(node)
    logits = expected_logits(q_coefficients, q_input, intercept)
    costs = reach_costs(q_coefficients, q_input, q_xi, intercept)
    logits, costs = np.broadcast_arrays(logits, costs)
    passed = -0.5 * logits - costs
    zero = np.zeros(passed.shape[:-1] + (1,))
    before = np.concatenate([zero, np.cumsum(passed, axis=-1)], axis=-1)  # Σ_{k<j}, j = 0..K−1
    own = np.concatenate([0.5 * logits - costs, zero], axis=-1)  # the stick j breaks (none for the last class)
    return Categorical.from_natural((before + own,))
