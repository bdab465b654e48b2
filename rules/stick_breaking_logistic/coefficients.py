"""Message out of the stick-breaking logistic node towards stick k's coefficients β_k (``index`` = k)."""
import numpy as np

from fgraph.families import Distribution, MultivariateNormal, PointMass
from fgraph.registry import rule
from fgraph.nodes.logistic import has_intercept
from fgraph.nodes.stick_breaking_logistic import StickBreakingLogisticNode, stick_weights, tilt_weights
from fgraph.rules.logistic.gaussian import coefficients_message, known_input_totals


@rule(StickBreakingLogisticNode, "coefficients")
def mean_field(q_out: Distribution, q_input: Distribution, q_xi: Distribution, index, node) -> MultivariateNormal:
    """exp E_q[log f] = exp(E[κ_k] E[x̃]ᵀβ_k − ½ w_k β_kᵀ E[x̃x̃ᵀ] β_k), w_k = E[b_k] tanh(ξ_k/2)/(2ξ_k).

    E[b_k] = P(y ≥ k) and E[κ_k] = P(y = k) − E[b_k]/2 under q(out). Over a
    plate of known inputs the message holds its sums ``X̃ᵀE[κ_k]`` and
    ``X̃ᵀ diag(w_k) X̃`` (:func:`fgraph.rules.logistic.gaussian.coefficients_message`).
    The message reads no other stick's coefficients (the node declares it:
    ``messages_independent_of``), so the first sweep needs no initial q(β_j).
    """
    reached, weight = stick_weights(q_out)
    _, omega = tilt_weights(q_xi)
    totals = None
    if isinstance(q_input, PointMass):  # every stick's plate sums at once, kept for the other sticks' messages
        every = q_xi.derived_with("_stick_plate_totals", (q_out, q_input), lambda: known_input_totals(
            weight, reached * np.asarray(omega), q_input, has_intercept(node), node.copy_ndim))
        totals = None if every is None else (every[0][..., index, :], every[1][..., index, :, :])
    return coefficients_message(weight[..., index], reached[..., index] * np.asarray(omega)[..., index], q_input,
                                has_intercept(node), node.batch_shape, node.copy_ndim, totals)

