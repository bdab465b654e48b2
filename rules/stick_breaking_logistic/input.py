"""Message out of the stick-breaking logistic node towards ``input`` x (dimension d; the node appends the 1)."""
import numpy as np

from fgraph.families import Distribution, MultivariateNormal
from fgraph.registry import rule
from fgraph.nodes.logistic import has_intercept
from fgraph.nodes.stick_breaking_logistic import StickBreakingLogisticNode, stick_weights, tilt_weights
from fgraph.rules.logistic.gaussian import gaussian_message


@rule(StickBreakingLogisticNode, "input")
def mean_field(q_out: Distribution, q_xi: Distribution, q_coefficients: Distribution, node) -> MultivariateNormal:
    """exp E_q[log f] = Π_k exp((E[κ_k]E[v_k] − w_k E[v_k β₀_k])ᵀx − ½ w_k xᵀE[v_kv_kᵀ]x), β_k = [v_k; β₀_k].

    The logistic node's message to its input (``fgraph.rules.logistic.input``) for
    every stick, with κ → E[κ_k] and E[ω] → w_k = E[b_k] tanh(ξ_k/2)/(2ξ_k),
    multiplied: natural parameters summed over the sticks. Without an
    intercept β_k = v_k and the E[v_k β₀_k] term is absent.
    """
    reached, weight = stick_weights(q_out)
    _, omega = tilt_weights(q_xi)
    quadratic = reached * omega  # batch + (K−1,)
    means = np.stack(np.broadcast_arrays(*[np.asarray(q.mean) for q in q_coefficients]), axis=-2)
    seconds = np.stack(np.broadcast_arrays(*[np.asarray(q.second_moment) for q in q_coefficients]), axis=-3)
    if has_intercept(node):
        weighted_mean = (np.einsum("...k,...ki->...i", weight, means[..., :-1])
                         - np.einsum("...k,...ki->...i", quadratic, seconds[..., :-1, -1]))
        precision = np.einsum("...k,...kij->...ij", quadratic, seconds[..., :-1, :-1])
    else:
        weighted_mean = np.einsum("...k,...ki->...i", weight, means)
        precision = np.einsum("...k,...kij->...ij", quadratic, seconds)
    return gaussian_message(weighted_mean, precision)
