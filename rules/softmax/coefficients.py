"""Message of the softmax node towards class k's coefficients β_k (``index`` = k), one rule per operator.

The labels' pseudo-observations N(ψ_k; m_k, v_k) (:func:`fgraph.nodes.softmax.pseudo_observations`) make the factor
Gaussian in ψ_k = β_kᵀx̃: the message is the logistic node's Gaussian message with the weight of ψ κ → m_k/v_k and
the weight of ψ²/2 → 1/v_k. It reads no other class's coefficients (the node declares it).
"""
import numpy as np

from fgraph.families import Distribution, MultivariateNormal, PointMass
from fgraph.registry import rule
from fgraph.nodes.logistic import has_intercept
from fgraph.nodes.softmax import (
    APPROXIMATIONS,
    DEFAULT_EPSILON,
    SoftmaxNode,
    pseudo_observations,
)
from fgraph.rules.logistic.gaussian import coefficients_message, known_input_totals


def _register(method: str) -> None:
    @rule(SoftmaxNode, "coefficients", operator=method)
    def coefficients(q_out: PointMass, q_input: Distribution, index, node) -> MultivariateNormal:
        """``exp((m_k/v_k) E[x̃]ᵀβ_k − ½ (1/v_k) β_kᵀ E[x̃x̃ᵀ] β_k)`` (over a plate of known inputs, from the sums
        X̃ᵀ(m_{·k}/v_{·k}) and X̃ᵀ diag(1/v_{·k}) X̃, every class's at once)."""
        weight, precision, _, _ = pseudo_observations(q_out, node, method)
        intercept = has_intercept(node)
        totals = None
        if isinstance(q_input, PointMass):  # every class's plate sums at once, kept for the other classes' messages
            alpha = getattr(node, "alpha_epsilon", DEFAULT_EPSILON)
            every = q_out.derived_with(f"_softmax_plate_totals_{method}_{alpha!r}_{intercept}_{node.copy_ndim}",
                                       (q_input,),
                                       lambda: known_input_totals(weight, precision, q_input, intercept,
                                                                  node.copy_ndim))
            totals = None if every is None else (every[0][..., index, :], every[1][..., index, :, :])
        return coefficients_message(np.asarray(weight)[..., index], np.asarray(precision)[..., index], q_input,
                                    intercept, node.batch_shape, node.copy_ndim, totals)

    coefficients.__name__ = coefficients.__qualname__ = f"coefficients_{method.replace('-', '_')}"


for _method in APPROXIMATIONS:
    _register(_method)
