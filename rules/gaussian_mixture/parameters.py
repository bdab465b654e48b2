"""Message out of the Gaussian mixture node towards ``parameters``: per component, the product over the plate.

As a function of (μ_k, Λ_k), Π_n exp E_q[z_nk log N(x_n | μ_k, Λ_k⁻¹)] is of the normal–Wishart form with
natural parameters (statistics Λ, Λμ, μᵀΛμ, log |Λ|)

    (−½ Σ_n w_nk E[x_n x_nᵀ],  Σ_n w_nk E[x_n],  −½ Σ_n w_nk,  ½ Σ_n w_nk)

(w_nk = E[z_nk]) and coefficient κ_k = (d/2)(1 − Σ_n w_nk) log 2π: exact for a known x and z (the factor
itself, Π_n N(x_n | μ, Λ⁻¹) = exp(κ) h exp(⟨η, T⟩), h = (2π)^{−d/2}), up to a constant otherwise. The sums
run over the whole plate, once per copy of a model with copies; the message has the parameters' batch
``copies + (K,) + (1,) * len(plate)``.
"""
import math

import numpy as np

from fgraph.families import Distribution, PointMass
from fgraph.families.normal_wishart import NormalWishartLikelihood
from fgraph.registry import rule
from nodes.gaussian_mixture import LOG_2PI, GaussianMixtureNode, switch_weights


def plate_sums(weights: np.ndarray, mean: np.ndarray, second: np.ndarray, node) -> tuple:
    """Σ_n w_nk, Σ_n w_nk x̄_n and Σ_n w_nk E[x_n x_nᵀ] over the plate, each ``copies + (K,) + event``.

    ``weights`` (``plate batch + (K,)``), ``mean`` (``plate batch + (d,)``) and ``second`` (``plate batch + (d, d)``;
    for data the point mass keeps x xᵀ once per run) broadcast together; copy axes are kept. Each sum is one
    matrix product over the plate: (K × n) @ (n × d) and (K × n) @ (n × d²).
    """
    copies = getattr(node, "copy_ndim", 0)
    batch = tuple(np.broadcast_shapes(node.interface_batch_shape("out"), weights.shape[:-1], mean.shape[:-1]))
    components, dimension = weights.shape[-1], mean.shape[-1]
    kept = batch[:copies]
    count = math.prod(batch[copies:])
    w = np.broadcast_to(weights, batch + (components,)).reshape(kept + (count, components))
    x = np.broadcast_to(mean, batch + (dimension,)).reshape(kept + (count, dimension))
    s = np.broadcast_to(second, batch + (dimension, dimension)).reshape(kept + (count, dimension * dimension))
    totals = w.sum(axis=-2)  # copies + (K,)
    wt = np.swapaxes(w, -1, -2)  # copies + (K, n)
    first = wt @ x  # copies + (K, d)
    outer = (wt @ s).reshape(kept + (components, dimension, dimension))
    return totals, first, outer


def statistics_message(weights, mean, second, node) -> NormalWishartLikelihood:
    """The message from the weights and the moments of x (module docstring), at the parameters' batch."""
    totals, first, outer = plate_sums(weights, mean, second, node)
    dimension = first.shape[-1]
    target = node.interface_batch_shape("parameters")

    def placed(array, event_ndim):
        return array.reshape(target + array.shape[array.ndim - event_ndim:] if event_ndim else target)

    return NormalWishartLikelihood(placed(-0.5 * outer, 2), placed(first, 1), placed(-0.5 * totals, 0),
                                   placed(0.5 * totals, 0),
                                   log_scale=placed(0.5 * dimension * (1.0 - totals) * LOG_2PI, 0))


@rule(GaussianMixtureNode, "parameters")
def from_observed_out(q_out: PointMass, q_switch: Distribution, node) -> NormalWishartLikelihood:
    """The weighted sums of the data: Σ_n w_nk x_n x_nᵀ, Σ_n w_nk x_n, Σ_n w_nk (exact for a known switch)."""
    weights = switch_weights(q_switch, node.components)
    return statistics_message(weights, np.asarray(q_out.value, dtype=float), q_out.second_moment, node)


@rule(GaussianMixtureNode, "parameters")
def mean_field(q_out: Distribution, q_switch: Distribution, node) -> NormalWishartLikelihood:
    """The weighted sums of E[x_n] and E[x_n x_nᵀ] under a latent q(x) (mean field, up to a constant)."""
    weights = switch_weights(q_switch, node.components)
    return statistics_message(weights, np.asarray(q_out.mean, dtype=float),
                              np.asarray(q_out.second_moment, dtype=float), node)
