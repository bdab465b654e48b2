"""Messages of the logistic node under its Gaussian likelihood approximations (operators ``"laplace"``,
``"variational"``, ``"moment"``, ``"moment-original"``).

The rules take ``q_xi`` as the Pólya-Gamma rules do (the engine binds a rule by the interfaces it reads) but do not
use it. An observed label becomes the pseudo-observation ``N(ψ; m, v)`` of the logit ψ = βᵀx̃
(:func:`fgraph.nodes.logistic.pseudo_observations`), a factor Gaussian in ψ: its messages are the Pólya-Gamma node's
Gaussian messages with the weight of ψ κ → m/v and the weight of ψ²/2 E[ω] → 1/v.
"""
import numpy as np

from fgraph.families import Distribution, MultivariateNormal, PointMass
from fgraph.registry import rule
from fgraph.nodes.logistic import APPROXIMATIONS, LogisticNode, has_intercept, pseudo_observations
from fgraph.rules.logistic.gaussian import coefficients_message, gaussian_message


def _register(method: str) -> None:
    @rule(LogisticNode, "coefficients", operator=method)
    def coefficients(q_out: PointMass, q_input: Distribution, q_xi: Distribution, node) -> MultivariateNormal:
        """``exp((m/v) E[x̃]ᵀβ − ½ (1/v) βᵀ E[x̃x̃ᵀ] β)`` (over a plate of known inputs, from the sums X̃ᵀ(m/v) and
        X̃ᵀ diag(1/v) X̃)."""
        weight, precision, _, _ = pseudo_observations(q_out, node, method)
        return coefficients_message(weight, precision, q_input, has_intercept(node), node.batch_shape,
                                    node.copy_ndim)

    @rule(LogisticNode, "input", operator=method)
    def input(q_out: PointMass, q_coefficients: Distribution, q_xi: Distribution, node) -> MultivariateNormal:
        """``exp(((m/v) E[w] − (1/v) E[wβ₀])ᵀx − ½ (1/v) xᵀE[wwᵀ]x)``, β = [w; β₀] (as the Pólya-Gamma rule)."""
        weight, precision, _, _ = pseudo_observations(q_out, node, method)
        weight, precision = np.asarray(weight)[..., None], np.asarray(precision)[..., None]
        mean, second = np.asarray(q_coefficients.mean), np.asarray(q_coefficients.second_moment)
        if not has_intercept(node):
            return gaussian_message(weight * mean, precision[..., None] * second)
        return gaussian_message(weight * mean[..., :-1] - precision * second[..., :-1, -1],
                                precision[..., None] * second[..., :-1, :-1])

    for function, interface in ((coefficients, "coefficients"), (input, "input")):
        function.__name__ = function.__qualname__ = f"{interface}_{method.replace('-', '_')}"


for _method in APPROXIMATIONS:
    _register(_method)
