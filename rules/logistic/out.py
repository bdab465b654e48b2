"""Message out of the logistic node towards ``out`` (the label)."""
import numpy as np

from fgraph.families import Bernoulli, Distribution
from fgraph.registry import rule
from fgraph.nodes.logistic import LogisticNode, expected_logit, has_intercept


@rule(LogisticNode, "out")
def mean_field(q_coefficients: Distribution, q_input: Distribution, q_xi: Distribution, node) -> Bernoulli:
    """exp E_q[log f] ∝ exp(out · E[ψ]): Bernoulli with log-odds ``E[ψ] = E[β]ᵀ E[x̃]``.

    Of the augmented factor ``½ e^{κψ − ωψ²/2}`` (times the PG(ω | 1, 0) prior)
    only ``κ = out − ½`` depends on ``out``, so ``log m(out) = (out − ½) E[ψ] + const``:
    natural parameters ``(log m(1), log m(0)) = (E[ψ]/2, −E[ψ]/2)``, p = σ(E[ψ]).
    ξ does not enter (b = 1 for either label).
    """
    half_logit = 0.5 * expected_logit(q_coefficients, q_input, has_intercept(node))
    return Bernoulli.from_natural((half_logit, np.negative(half_logit)))
