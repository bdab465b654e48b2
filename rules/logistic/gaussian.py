"""The Gaussian messages of the logistic nodes, in the form their precision allows."""
import math

import numpy as np

from fgraph.families import (
    Distribution,
    GaussianLikelihood,
    MultivariateNormal,
    MvNormalWeightedMeanPrecision,
    PointMass,
)
from fgraph.families.base import compressed
from fgraph.families.gaussian_plate import GaussianLikelihoodOnDemand
from fgraph.families.linalg import cholesky_factor, weighted_outer_sums
from fgraph.families.mvnormal import SINGULAR_PIVOT
from fgraph.nodes.logistic import augmented_moments, augmented_row_outer, augmented_rows


def gaussian_message(weighted_mean: np.ndarray, precision: np.ndarray) -> MultivariateNormal:
    """``exp(ξᵀx − ½ xᵀWx)`` (up to a constant: a mean-field message), batched; proper if every W is definite.

    A W that fails its Cholesky factorisation, or factors with a pivot at
    rounding level (as :meth:`MultivariateNormal.from_coefficient` judges),
    has flat directions: the batch is then a :class:`GaussianLikelihood`
    throughout (coefficient 0), which products and reductions treat alike.
    """
    batch = np.broadcast_shapes(weighted_mean.shape[:-1], precision.shape[:-2])
    weighted_mean = np.broadcast_to(weighted_mean, batch + weighted_mean.shape[-1:])
    precision = np.broadcast_to(precision, batch + precision.shape[-2:])
    try:
        factor = cholesky_factor(precision)
    except np.linalg.LinAlgError:
        return GaussianLikelihood(weighted_mean, precision, 0.0)
    pivots = np.diagonal(factor, axis1=-2, axis2=-1) ** 2
    largest = np.max(np.diagonal(precision, axis1=-2, axis2=-1), axis=-1, keepdims=True)
    if np.any(pivots <= SINGULAR_PIVOT * largest):
        return GaussianLikelihood(weighted_mean, precision, 0.0)
    message = MvNormalWeightedMeanPrecision(weighted_mean, precision, check=False)
    message._precision_cholesky = factor  # the moments need it; computed here anyway
    return message


def known_input_totals(kappa, omega, q_input: PointMass, intercept: bool, copy_ndim: int = 0) -> tuple | None:
    """The plate sums ``X̃ᵀκ_j`` and ``X̃ᵀ diag(ω_j) X̃`` of several logits at once (a stick-breaking node's
    sticks, the last axis J of ``kappa`` and ``omega``, ``copies + plate + (J,)``), shapes
    ``copies + (J, D)`` and ``copies + (J, D, D)``: two matrix products for every stick and copy; ``None``
    where the rows differ between copies or their outer products exceed the budget
    (:func:`fgraph.families.linalg.row_outer_products`)."""
    outer = augmented_row_outer(q_input, intercept)
    if outer is None:
        return None
    rows = compressed(augmented_rows(q_input, intercept))
    data = rows.reshape(-1, rows.shape[-1])
    kappa, omega = np.asarray(kappa), np.asarray(omega)
    batch = np.broadcast_shapes(kappa.shape[:-1], omega.shape[:-1], rows.shape[:-1])
    if batch[copy_ndim:] and math.prod(batch[copy_ndim:]) != data.shape[0]:
        return None
    sticks = kappa.shape[-1]
    flat = batch[:copy_ndim] + (-1, sticks)
    kappa = np.swapaxes(np.broadcast_to(kappa, batch + (sticks,)).reshape(flat), -1, -2)  # copies + (J, N)
    omega = np.swapaxes(np.broadcast_to(omega, batch + (sticks,)).reshape(flat), -1, -2)
    return kappa @ data, weighted_outer_sums(outer, omega)


def coefficients_message(kappa, omega, q_input: Distribution, intercept: bool, node_batch: tuple,
                         copy_ndim: int = 0, totals: tuple | None = None) -> MultivariateNormal:
    """``exp(κ E[x̃]ᵀβ − ½ ω βᵀ E[x̃x̃ᵀ] β)`` per element: the message of a PG-augmented logit ψ = βᵀx̃ to β.

    ``kappa`` (the weight of ψ) and ``omega`` (the weight of ψ²/2, E[ω] times
    the count b) broadcast to the node's batch. For a known input E[x̃x̃ᵀ] =
    x̃x̃ᵀ has rank one: a GaussianLikelihood; over a plate of known inputs the
    message is made from its sums over the plate, ``X̃ᵀκ`` and ``X̃ᵀ diag(ω) X̃``
    (two products with the data), which are all that the reduction onto a
    global β reads; its N rank-one elements are formed only if something asks
    for them. For a latent input E[x̃x̃ᵀ] is positive definite (its Schur
    complement is Cov[x]): a proper normal where ω > 0. Without an intercept x̃ = x.
    In a model with copies (``copy_ndim`` leading axes, never a plate) the
    sums are taken per copy. ``totals``, if given, are those sums already
    computed (:func:`known_input_totals`).
    """
    if isinstance(q_input, PointMass):
        rows = augmented_rows(q_input, intercept)
        batch = np.broadcast_shapes(node_batch, np.shape(kappa), np.shape(omega), rows.shape[:-1])
        if not batch:
            return GaussianLikelihood(kappa * rows, omega * rows[:, None] * rows[None, :], 0.0)
        dimension = rows.shape[-1]
        rows = np.broadcast_to(rows, batch + (dimension,))
        shared_by_copies = all(length == 1 for length in compressed(rows).shape[:copy_ndim])  # the same data
        kappa, omega = np.broadcast_to(kappa, batch), np.broadcast_to(omega, batch)
        keep = copy_ndim
        if totals is not None:
            pass
        elif not keep:
            flat_rows = rows.reshape(math.prod(batch), dimension)
            totals = (flat_rows.T @ kappa.ravel(), flat_rows.T @ (omega.reshape(-1, 1) * flat_rows))
        elif shared_by_copies:  # the same data for every copy: X̃ᵀκ_r, X̃ᵀ diag(ω_r) X̃ as matrix products
            data = rows[(0,) * keep].reshape(-1, dimension)
            flat_kappa, flat_omega = kappa.reshape(batch[:keep] + (-1,)), omega.reshape(batch[:keep] + (-1,))
            outer = augmented_row_outer(q_input, intercept)
            squares = (weighted_outer_sums(outer, flat_omega) if outer is not None and outer.shape[0] == data.shape[0]
                       else np.matmul(data.T * flat_omega[..., None, :], data))
            totals = (flat_kappa @ data, squares)
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
