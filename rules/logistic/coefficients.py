"""Message out of the logistic node towards ``coefficients`` β (dimension d + 1, the bias last)."""
import math

import numpy as np

from fgraph.families import Distribution, GaussianLikelihood, MultivariateNormal, PointMass
from fgraph.families.gaussian_plate import GaussianLikelihoodOnDemand
from fgraph.registry import rule
from nodes.logistic import LogisticNode, augmented_moments, augmented_rows, expected_omega, has_intercept, label_weight
from rules.logistic.gaussian import gaussian_message


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
    kappa = label_weight(q_out)
    omega = expected_omega(q_xi)
    intercept = has_intercept(node)
    if isinstance(q_input, PointMass):
        rows = augmented_rows(q_input, intercept)
        batch = np.broadcast_shapes(node.batch_shape, np.shape(kappa), np.shape(omega), rows.shape[:-1])
        if not batch:
            return GaussianLikelihood(kappa * rows, omega * rows[:, None] * rows[None, :], 0.0)
        dimension = rows.shape[-1]
        rows = np.broadcast_to(rows, batch + (dimension,))
        kappa, omega = np.broadcast_to(kappa, batch), np.broadcast_to(omega, batch)
        keep = node.copy_ndim  # the copies of a model with copies: sums per copy
        if not keep:
            flat_rows = rows.reshape(math.prod(batch), dimension)
            totals = (flat_rows.T @ kappa.ravel(), flat_rows.T @ (omega.reshape(-1, 1) * flat_rows))
        else:
            flat_rows = rows.reshape(batch[:keep] + (-1, dimension))
            flat_kappa, flat_omega = kappa.reshape(batch[:keep] + (-1,)), omega.reshape(batch[:keep] + (-1,))
            totals = (np.einsum("...nd,...n->...d", flat_rows, flat_kappa),
                      np.einsum("...nd,...ne->...de", flat_rows, flat_omega[..., None] * flat_rows))

        def elements():
            return kappa[..., None] * rows, omega[..., None, None] * rows[..., :, None] * rows[..., None, :]

        return GaussianLikelihoodOnDemand(elements, batch, totals, keep)
    mean, second = augmented_moments(q_input, intercept)
    return gaussian_message(np.asarray(kappa)[..., None] * mean, np.asarray(omega)[..., None, None] * second)
