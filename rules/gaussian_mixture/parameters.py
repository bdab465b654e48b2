"""Message out of the Gaussian mixture node towards ``parameters``: per component, the product over the plate.

As a function of (μ_k, Λ_k), Π_n exp E_q[z_nk log N(x_n | μ_k, Λ_k⁻¹)] is of the normal–Wishart form with
natural parameters (statistics Λ, Λμ, μᵀΛμ, log |Λ|)

    (−½ Σ_n w_nk E[x_n x_nᵀ],  Σ_n w_nk E[x_n],  −½ Σ_n w_nk,  ½ Σ_n w_nk)

(w_nk = E[z_nk]) and coefficient κ_k = (d/2)(1 − Σ_n w_nk) log 2π: exact for a known x and z (the factor
itself, Π_n N(x_n | μ, Λ⁻¹) = exp(κ) h exp(⟨η, T⟩), h = (2π)^{−d/2}), up to a constant otherwise. The sums
run over the whole plate, once per copy of a model with copies; the message has the parameters' batch
``copies + (K,) + (1,) * len(plate)``.
"""
from fgraph.families import Distribution, PointMass
from fgraph.families.normal_wishart import NormalWishartLikelihood
from fgraph.registry import rule
from fgraph.nodes.gaussian_mixture import LOG_2PI, GaussianMixtureNode, unpacked, weighted_feature_sums


def statistics_message(q_out: Distribution, q_switch: Distribution, node) -> NormalWishartLikelihood:
    """The message from the plate sums of E[z] and the moments of x (module docstring), at the parameters' batch."""
    sums = weighted_feature_sums(q_out, q_switch, node)
    dimension = q_out.event_shape[-1]
    triangle = dimension * (dimension + 1) // 2  # columns: E[x xᵀ] packed, E[x], 1
    totals, first = sums[..., -1], sums[..., triangle:-1]
    outer = unpacked(sums[..., :triangle], dimension)
    target = node.interface_batch_shape("parameters")

    def placed(array, event_ndim):
        return array.reshape(target + array.shape[array.ndim - event_ndim:] if event_ndim else target)

    return NormalWishartLikelihood(placed(-0.5 * outer, 2), placed(first, 1), placed(-0.5 * totals, 0),
                                   placed(0.5 * totals, 0),
                                   log_scale=placed(0.5 * dimension * (1.0 - totals) * LOG_2PI, 0))


@rule(GaussianMixtureNode, "parameters")
def from_observed_out(q_out: PointMass, q_switch: Distribution, node) -> NormalWishartLikelihood:
    """The weighted sums of the data: Σ_n w_nk x_n x_nᵀ, Σ_n w_nk x_n, Σ_n w_nk (exact for a known switch)."""
    return statistics_message(q_out, q_switch, node)


@rule(GaussianMixtureNode, "parameters")
def mean_field(q_out: Distribution, q_switch: Distribution, node) -> NormalWishartLikelihood:
    """The weighted sums of E[x_n] and E[x_n x_nᵀ] under a latent q(x) (mean field, up to a constant)."""
    return statistics_message(q_out, q_switch, node)
