"""Message of the softmax node towards its ``input`` x (dimension d; the node appends the 1), one rule per operator.

The product over the classes of the Gaussian messages of the pseudo-observations N(ψ_k; m_k, v_k), ψ_k = β_kᵀx̃:
natural parameters summed over k.
"""
import numpy as np

from fgraph.families import Distribution, MultivariateNormal, PointMass
from fgraph.registry import rule
from fgraph.nodes.logistic import has_intercept
from fgraph.nodes.softmax import APPROXIMATIONS, SoftmaxNode, pseudo_observations
from fgraph.rules.logistic.gaussian import gaussian_message


def _register(method: str) -> None:
    @rule(SoftmaxNode, "input", operator=method)
    def input(q_out: PointMass, q_coefficients: Distribution, node) -> MultivariateNormal:
        """``exp(Σ_k ((m_k/v_k) E[w_k] − E[w_k β_k0]/v_k)ᵀx − ½ xᵀ(Σ_k E[w_kw_kᵀ]/v_k)x)``, β_k = [w_k; β_k0]
        (without an intercept β_k = w_k and the E[w_k β_k0] term is absent)."""
        weight, precision, _, _ = pseudo_observations(q_out, node, method)
        means = np.stack(np.broadcast_arrays(*[np.asarray(q.mean) for q in q_coefficients]), axis=-2)
        seconds = np.stack(np.broadcast_arrays(*[np.asarray(q.second_moment) for q in q_coefficients]), axis=-3)
        if has_intercept(node):
            weighted_mean = (np.einsum("...k,...ki->...i", weight, means[..., :-1])
                             - np.einsum("...k,...ki->...i", precision, seconds[..., :-1, -1]))
            quadratic = np.einsum("...k,...kij->...ij", precision, seconds[..., :-1, :-1])
        else:
            weighted_mean = np.einsum("...k,...ki->...i", weight, means)
            quadratic = np.einsum("...k,...kij->...ij", precision, seconds)
        return gaussian_message(weighted_mean, quadratic)

    input.__name__ = input.__qualname__ = f"input_{method.replace('-', '_')}"


for _method in APPROXIMATIONS:
    _register(_method)
