"""Message out of the logistic node towards ``xi``, the tilt of q(ω) = PG(1, ξ)."""
import numpy as np

from fgraph.families import Distribution, PointMass
from fgraph.registry import rule
from fgraph.nodes.logistic import LogisticNode, expected_squared_logit, has_intercept


@rule(LogisticNode, "xi")
def optimum(q_out: Distribution, q_coefficients: Distribution, q_input: Distribution, node) -> PointMass:
    """The point mass at ``c = sqrt(E[ψ²])``, ``E[ψ²] = tr(E[ββᵀ] E[x̃x̃ᵀ])``: the ξ that minimises the free energy.

    The node's energy depends on ξ through ``log cosh(ξ/2) + E[ω](E[ψ²] − ξ²)/2``
    (E[ω] = tanh(ξ/2)/(2ξ)), whose derivative in ξ is ``(E[ψ²] − ξ²) dE[ω]/dξ / 2``:
    zero at ξ² = E[ψ²] (E[ω] is decreasing in ξ > 0, so it is the minimum). ``out``
    does not enter (b = 1 for either label).
    """
    return PointMass(np.sqrt(expected_squared_logit(q_coefficients, q_input, has_intercept(node))))
