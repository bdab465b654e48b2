"""Message out of the stick-breaking logistic node towards ``xi``, the tilts of q(ω_k) = PG(b_k, ξ_k)."""
import numpy as np

from fgraph.families import Distribution, PointMass
from fgraph.registry import rule
from fgraph.nodes.logistic import has_intercept
from fgraph.nodes.stick_breaking_logistic import StickBreakingLogisticNode, expected_squared_logits


@rule(StickBreakingLogisticNode, "xi")
def optimum(q_input: Distribution, q_coefficients: Distribution, node) -> PointMass:
    """The point mass at ``c_k = sqrt(E[ψ_k²])`` for every stick (event ``(K−1,)``): the tilts minimising the energy.

    Stick k's energy depends on ξ_k through ``E[b_k] (log cosh(ξ_k/2) + ω̄_k (E[ψ_k²] − ξ_k²)/2)``,
    minimal at ξ_k² = E[ψ_k²] as for the binary node (``fgraph.rules.logistic.xi``); with
    E[b_k] = 0 (a stick no class of q(out) reaches) every ξ_k is a minimiser and
    c_k is kept. ``out`` does not enter (the node declares it: ``messages_independent_of``).
    """
    return PointMass(np.sqrt(expected_squared_logits(q_coefficients, q_input, has_intercept(node))), 1)
