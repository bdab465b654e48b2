"""The Gaussian messages of the logistic node, in the form their precision allows."""
import numpy as np

from fgraph.families import GaussianLikelihood, MultivariateNormal, MvNormalWeightedMeanPrecision
from fgraph.families.mvnormal import SINGULAR_PIVOT


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
        factor = np.linalg.cholesky(precision)
    except np.linalg.LinAlgError:
        return GaussianLikelihood(weighted_mean, precision, 0.0)
    pivots = np.diagonal(factor, axis1=-2, axis2=-1) ** 2
    largest = np.max(np.diagonal(precision, axis1=-2, axis2=-1), axis=-1, keepdims=True)
    if np.any(pivots <= SINGULAR_PIVOT * largest):
        return GaussianLikelihood(weighted_mean, precision, 0.0)
    message = MvNormalWeightedMeanPrecision(weighted_mean, precision, check=False)
    message._precision_cholesky = factor  # the moments need it; computed here anyway
    return message
