"""Message out of the logistic node towards ``coefficients`` β (dimension d + 1, the bias last)."""
from fgraph.families import Distribution, MultivariateNormal
from fgraph.registry import rule
from fgraph.nodes.logistic import LogisticNode, expected_omega, has_intercept, label_weight
from fgraph.rules.logistic.gaussian import coefficients_message


@rule(LogisticNode, "coefficients")
def mean_field(q_out: Distribution, q_input: Distribution, q_xi: Distribution, node) -> MultivariateNormal:
    """exp E_q[log f] = exp(κ E[x̃]ᵀβ − ½ E[ω] βᵀ E[x̃x̃ᵀ] β), κ = E[out] − ½, E[ω] = tanh(ξ/2)/(2ξ).

    Natural parameters ``(κ E[x̃], −½ E[ω] E[x̃x̃ᵀ])``. For a known input
    E[x̃x̃ᵀ] = x̃x̃ᵀ has rank one: a GaussianLikelihood; over a plate of known
    inputs the message is made from its sums over the plate, ``X̃ᵀκ`` and
    ``X̃ᵀ diag(E[ω]) X̃`` (two products with the data), which are all that the
    reduction onto a global β reads; its N rank-one elements are formed only
    if something asks for them. For a latent input E[x̃x̃ᵀ] is positive
    definite (its Schur complement is Cov[x]): a proper normal then.
    Without an intercept (``node.intercept`` false) x̃ = x.
    """
    return coefficients_message(label_weight(q_out), expected_omega(q_xi), q_input, has_intercept(node), node.batch_shape,
                                node.copy_ndim)
