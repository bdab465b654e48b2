"""Messages out of LinearExperts towards ``parameters``: per expert, the product over the plate (eq. 28).

As a function of (A_k, λ_k), exp E_q[z_nk log N(y_n | A_k x̃_n, Λ_k⁻¹)] summed over the plate is of the
matrix-normal–gamma form with natural parameters

    (−½ Σ_n w_nk x̃_n x̃_nᵀ,  Σ_n w_nk E[y_n | k] x̃_nᵀ,  −½ Σ_n w_nk E[y_ni² | k],  ½ Σ_n w_nk)

(w_nk = γ_nk, or E[z_nk] under mean field) and coefficient κ_k = (h/2)(D − Σ_n w_nk) log 2π: exact for
a known y and z (the factor itself, Π_n N(y_n | A x̃_n, Λ⁻¹) = exp(κ) h exp(⟨η, T⟩), h = (2π)^{−hD/2}),
up to a constant otherwise. The sums are formed expert by expert (never N × K × D × D numbers) over the
plate axes the parameters are shared along; the message has the parameters' batch ``(K,) + P``.
"""
import numpy as np

from fgraph.families import Distribution, PointMass
from fgraph.families.matrix_normal_gamma import MatrixNormalGammaLikelihood
from fgraph.families.linalg import weighted_outer_sums
from fgraph.families.mixture import Mixture
from fgraph.registry import rule
from fgraph.nodes.linear_experts import LOG_2PI, LinearExpertsNode, augmented_inputs, conditional_moments, switch_weights
from fgraph.nodes.logistic import augmented_row_outer


def plate_statistics(weights, means, squares, q_input, node) -> MatrixNormalGammaLikelihood:
    """The message from w (``plate + (K,)``), E[y | k] (``plate + (K, h)``) and E[y_i² | k] (``plate + (K, h)``).

    Sums run over the plate axes along which the parameters are shared (``node.parameters_plate`` 1 where
    the plate is longer); the other axes (e.g. restarts, the copies of a model) are kept, each with its own sums.
    """
    rows = augmented_inputs(q_input, node.intercept)
    axis = node.expert_axis
    copies = bool(getattr(node, "copy_ndim", 0))
    plate, target = node.interface_batch_shape("out"), node.interface_batch_shape("parameters")
    shared = target[:axis] + target[axis + 1:]
    if copies:  # the plate's batch has a unit axis where the parameters have the experts
        shared = shared[:axis] + (1,) + shared[axis:]
    experts, columns, h = weights.shape[-1], rows.shape[-1], means.shape[-1]
    summed = [axis for axis, (size, own) in enumerate(zip(plate, shared)) if own == 1 and size != 1]
    kept = [axis for axis in range(len(plate)) if axis not in summed]
    order = kept + summed
    kept_size = int(np.prod([plate[a] for a in kept], dtype=int))

    def grouped(array, event: tuple):
        """``array`` (``plate + event``) as ``(kept, summed) + event``: the copies, then what is summed."""
        array = np.broadcast_to(array, plate + event)
        array = np.transpose(array, order + list(range(len(plate), len(plate) + len(event))))
        return array.reshape((kept_size, -1) + event)

    outer_products = augmented_row_outer(q_input, node.intercept)
    rows, weights = grouped(rows, (columns,)), grouped(weights, (experts,))
    means, squares = grouped(means, (experts, h)), grouped(squares, (experts, h))
    if outer_products is not None and summed == [len(plate) - 1] and plate[-1] == outer_products.shape[0]:
        # the same rows for every copy, summed along the last axis: one matrix product for every expert and copy
        outer = weighted_outer_sums(outer_products, np.moveaxis(weights, -1, 0))  # (K, copies, D, D)
    else:
        transposed = np.swapaxes(rows, -1, -2)  # (copies, D, n)
        outer = np.stack([(transposed * weights[:, None, :, k]) @ rows for k in range(experts)])
    cross = np.stack([np.swapaxes(weights[:, :, k, None] * means[:, :, k], -1, -2) @ rows
                      for k in range(experts)])  # (K, copies, h, D)
    square = np.einsum("cnk,cnki->kci", weights, squares)  # (K, copies, h)
    count = np.moveaxis(weights.sum(axis=1), -1, 0)  # (K, copies)
    grouped_batch = (experts,) + (shared[:axis] + shared[axis + 1:] if copies else shared)

    def placed(array, event: tuple):
        """``(K, copies…) + event`` at the parameters' batch: the experts back in their place."""
        return np.moveaxis(array.reshape(grouped_batch + event), 0, axis)

    coefficient = 0.5 * h * (columns - count) * LOG_2PI
    return MatrixNormalGammaLikelihood(
        placed(-0.5 * outer, (columns, columns)), placed(cross, (h, columns)), placed(-0.5 * square, (h,)),
        placed(np.broadcast_to(0.5 * count[..., None], count.shape + (h,)), (h,)), log_scale=placed(coefficient, ()))


@rule(LinearExpertsNode, "parameters")
def structured(q_out_switch: Mixture, q_input: PointMass, node) -> MatrixNormalGammaLikelihood:
    """The γ-weighted sums under q(y, z) = Σ_k γ_k q(y | k): E[y | k] and E[y_i² | k] from the components."""
    return plate_statistics(*conditional_moments(q_out_switch), q_input, node)


@rule(LinearExpertsNode, "parameters")
def mean_field(q_out: Distribution, q_switch: Distribution, q_input: PointMass, node) -> MatrixNormalGammaLikelihood:
    """The sums with w = E[z], E[y | k] = E[y], E[y_i² | k] = E[y_i²] (independent q(y) q(z); a known y or z)."""
    weights = switch_weights(q_switch)
    mean = np.asarray(q_out.mean, dtype=float)[..., None, :]
    squares = np.diagonal(np.asarray(q_out.second_moment, dtype=float), axis1=-2, axis2=-1)[..., None, :]
    return plate_statistics(weights, mean, squares, q_input, node)
