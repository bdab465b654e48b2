"""Message out of the switching regression node towards ``coefficients``: per component, the product over the plate.

As a function of β_k, Π_n exp E_q[z_nk log N(y_n | X_n β_k, λ⁻¹ I_J)] is Gaussian with

    precision  λ Σ_n w_nk X_nᵀX_n,      weighted mean  λ Σ_n w_nk X_nᵀy_n,
    coefficient κ_k = Σ_n w_nk ((J/2) log(λ/2π) − (λ/2) y_nᵀy_n) + (p/2) log 2π

(w_nk = E[z_nk]; with the base measure (2π)^(−p/2) of the family the function is exp(κ_k) h(β) exp(ξᵀβ − ½ βᵀWβ)):
the factor itself for a known switch, up to a constant otherwise. It need not be normalisable (a component with
little weight, p > Σ_n J_n w_nk), so it is a GaussianLikelihood; the prior makes it proper. The sums run over the
whole plate, once per copy of a model with copies, as matrix products (K × n) @ (n × p²); the message has the
coefficients' batch ``copies + (K,) + (1,) * len(plate)``.
"""
import math

import numpy as np

from fgraph.families import Distribution, GaussianLikelihood, PointMass
from fgraph.registry import rule
from fgraph.nodes.switching_regression import (
    LOG_2PI,
    SwitchingRegressionNode,
    by_copy,
    design_gram,
    response_count,
    response_statistics,
    switch_weights,
)


@rule(SwitchingRegressionNode, "coefficients")
def from_observed_out(q_out: PointMass, q_switch: Distribution, q_input: PointMass, node) -> GaussianLikelihood:
    """The w-weighted sums of X_nᵀX_n, X_nᵀy_n and y_nᵀy_n (module docstring)."""
    weights = np.swapaxes(switch_weights(q_switch, node), -1, -2)  # (C|1, K, n)
    cross, square = response_statistics(q_out, q_input, node)
    gram = design_gram(q_input, node)
    p = gram.shape[-1]
    gram = by_copy(gram.reshape(gram.shape[:-2] + (p * p,)), 1, node)  # (C|1, n, p²)
    cross, square = by_copy(cross, 1, node), by_copy(square, 0, node)
    precision_sum = weights @ gram  # (C, K, p²)
    weighted_sum = weights @ cross  # (C, K, p)
    square_sum = (weights @ square[..., None])[..., 0]  # (C, K)
    count = weights.sum(axis=-1)  # (C, K)
    lam, responses = node.noise_precision, response_count(q_out, node)
    target = node.interface_batch_shape("coefficients")
    copies = math.prod(target[:getattr(node, "copy_ndim", 0)])

    def placed(array, event: tuple):
        array = np.broadcast_to(array, (copies,) + array.shape[1:])
        return array.reshape(target + event)

    coefficient = (count * 0.5 * responses * (np.log(lam) - LOG_2PI) - 0.5 * lam * square_sum + 0.5 * p * LOG_2PI)
    return GaussianLikelihood(placed(lam * weighted_sum, (p,)), placed(lam * precision_sum, (p, p)),
                              log_scale=placed(coefficient, ()))
