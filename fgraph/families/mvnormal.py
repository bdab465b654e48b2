"""Multivariate normal distributions in three parameterisations.

All three share one family (:class:`MultivariateNormal`), so they multiply
with each other and rules dispatch on the shared base class. Natural
parameters are ``eta = (xi, -W/2)`` with ``W`` the precision matrix and
``xi = W mean`` the weighted mean; sufficient statistics
``T(x) = (x, x x^T)``; base measure ``log h = -d/2 log(2 pi)``.

Matrices are handled through Cholesky factors, which are cached per
instance: every moment of a batch needs one, and they cost ``O(d^3)``.
"""
from __future__ import annotations

from functools import cached_property

import numpy as np

from fgraph.errors import ModelError
from fgraph.families.base import (
    ExponentialFamily,
    append_event_axes,
    as_float_array,
    broadcast_params,
    check_finite,
    expectation,
)
from fgraph.families.linalg import (
    check_square,
    check_symmetric,
    cholesky,
    cholesky_factor,
    cholesky_inverse,
    cholesky_log_det,
    cholesky_solve_vector,
    matvec,
    outer,
    triangular_solve_vector,
)

LOG_2PI = float(np.log(2.0 * np.pi))
# A Cholesky pivot below this fraction of the largest diagonal entry of a precision matrix marks a flat
# direction (rank deficiency up to rounding), so the product is kept as a GaussianLikelihood.
SINGULAR_PIVOT = 1e-12


def _check_vector_and_matrix(vector, vector_name, matrix, matrix_name):
    """Validate a mean-like vector and a symmetric positive-definite matrix of matching dimension.

    Returns the matrix's lower Cholesky factor, which validation has to compute anyway.
    """
    if vector.ndim < 1:
        raise ModelError(f"{vector_name} must have a last (event) axis of length d, got a scalar")
    check_finite(vector, vector_name)
    check_square(matrix, matrix_name)
    check_finite(matrix, matrix_name)
    if vector.shape[-1] != matrix.shape[-1]:
        raise ModelError(
            f"{vector_name} has dimension {vector.shape[-1]} but {matrix_name} is "
            f"{matrix.shape[-2]}x{matrix.shape[-1]}; they must match"
        )
    check_symmetric(matrix, matrix_name)
    return cholesky(matrix, matrix_name)


class MultivariateNormal(ExponentialFamily):
    """Common base of the multivariate normal parameterisations.

    Values have event shape ``(d,)``. Subclasses store two of ``mean``,
    ``cov``, ``precision`` and ``weighted_mean`` and override the properties
    they store; the defaults here derive everything from ``precision`` and
    ``weighted_mean``, and :class:`MvNormalMeanCovariance` overrides the
    covariance-side ones.
    """

    event_ndim = 1
    natural_event_ndims = (1, 2)

    @classmethod
    def family(cls) -> type:
        return MultivariateNormal

    @property
    def dim(self) -> int:
        return self._event_shape[0]

    # ---- Cholesky factors (lower), shape batch_shape + (d, d) ----
    @cached_property
    def _precision_cholesky(self):
        return cholesky_factor(self.precision)

    @cached_property
    def _cov_cholesky(self):
        return cholesky_factor(self.cov)

    # ---- parameters (subclasses override the ones they store; derived ones are kept: Distribution.derived) ----

    @expectation
    def mean(self):
        # Σ h with the covariance kept: the moments need Σ anyway, and two matrix-vector products cost far
        # less than the two general solves a triangular system gets from numpy (an LU each).
        return self.derived("_derived_mean", lambda: matvec(self.cov, self.weighted_mean))

    @property
    def cov(self):
        return self.derived("_derived_cov", lambda: cholesky_inverse(self._precision_cholesky))

    @property
    def precision(self):
        return self.derived("_derived_precision", lambda: cholesky_inverse(self._cov_cholesky))

    @property
    def weighted_mean(self):
        return self.derived("_derived_weighted_mean", lambda: matvec(self.precision, self.mean))

    @property
    def var(self):
        """Marginal variances, the diagonal of ``cov``, shape ``batch_shape + (d,)``."""
        return np.diagonal(self.cov, axis1=-2, axis2=-1).copy()

    @property
    def mode(self):
        return self.mean

    @expectation
    def second_moment(self):
        """``E[x x^T] = cov + mean mean^T``, shape ``batch_shape + (d, d)``."""
        return self.derived("_derived_second_moment", lambda: self.cov + outer(self.mean, self.mean))

    def log_det_cov(self):
        """``log|cov|``, shape ``batch_shape``."""
        return -cholesky_log_det(self._precision_cholesky)

    def _mahalanobis(self, centred):
        """``c^T precision c`` for ``c`` of shape ``(..., d)``; with ``precision = L L^T`` it is ``|L^T c|^2``."""
        whitened = matvec(np.swapaxes(self._precision_cholesky, -1, -2), centred)
        return np.sum(whitened**2, axis=-1)

    def _colour(self, white):
        """Map standard normal draws ``z`` to draws with covariance ``cov``: ``L^{-T} z`` for ``precision = L L^T``."""
        return triangular_solve_vector(self._precision_cholesky, white, transpose=True)

    # ---- exponential family ----
    def natural_parameters(self):
        return (self.weighted_mean, -0.5 * self.precision)

    @classmethod
    def from_natural(cls, eta, log_scale=None):
        weighted_mean, minus_half_precision = eta
        return MvNormalWeightedMeanPrecision(weighted_mean, -2.0 * minus_half_precision, log_scale=log_scale, check=False)

    @classmethod
    def log_partition_of(cls, eta):
        """``xi^T W^{-1} xi / 2 - log|W| / 2`` with ``W = -2 eta_1``, via ``W = L L^T``: ``|L^{-1} xi|^2 / 2``."""
        weighted_mean, minus_half_precision = eta
        factor = cholesky_factor(-2.0 * minus_half_precision)
        whitened = triangular_solve_vector(factor, weighted_mean)
        return 0.5 * np.sum(whitened**2, axis=-1) - 0.5 * cholesky_log_det(factor)

    @classmethod
    def log_base_measure_of(cls, eta):
        return -0.5 * eta[0].shape[-1] * LOG_2PI

    @classmethod
    def from_coefficient(cls, eta, log_coefficient):
        """A proper normal when ``W = -2 eta_1`` is positive definite, else a :class:`GaussianLikelihood`."""
        weighted_mean, minus_half_precision = eta
        precision = -2.0 * minus_half_precision
        try:
            factor = cholesky_factor(precision)
        except np.linalg.LinAlgError:
            return GaussianLikelihood(weighted_mean, precision, log_coefficient)
        # a singular W may factor with pivots at rounding level: treat those as flat directions too
        pivots = np.diagonal(factor, axis1=-2, axis2=-1) ** 2
        largest = np.max(np.diagonal(precision, axis1=-2, axis2=-1), axis=-1, keepdims=True)
        if np.any(pivots <= SINGULAR_PIVOT * largest):
            return GaussianLikelihood(weighted_mean, precision, log_coefficient)
        whitened = triangular_solve_vector(factor, weighted_mean)
        log_partition = 0.5 * np.sum(whitened**2, axis=-1) - 0.5 * cholesky_log_det(factor)
        result = MvNormalWeightedMeanPrecision(weighted_mean, precision, log_coefficient + log_partition, check=False)
        result._precision_cholesky = factor  # the moments need it; computed here anyway
        return result

    def expected_statistics(self):
        return (self.mean, self.second_moment)

    # ---- densities ----
    def entropy(self):
        return 0.5 * (self.dim * (LOG_2PI + 1.0) + self.log_det_cov())

    def logpdf(self, x):
        """Log density at ``x`` of shape ``(..., d)``, broadcast against ``batch_shape``."""
        x = np.asarray(x, dtype=float)
        return -0.5 * (self.dim * LOG_2PI + self.log_det_cov() + self._mahalanobis(x - self.mean))

    def sample(self, rng, size=()):
        size = (size,) if np.isscalar(size) else tuple(size)
        white = rng.standard_normal(size + self.batch_shape + self.event_shape)
        return self.mean + self._colour(white)

    def __repr__(self):
        return f"{type(self).__name__}(dim={self.dim}, batch_shape={self.batch_shape})"


class MvNormalMeanCovariance(MultivariateNormal):
    """Distribution (a family of messages and marginals): Multivariate normal with ``mean`` (shape ``(..., d)``) and covariance ``cov`` (shape ``(..., d, d)``, SPD)."""

    def __init__(self, mean, cov, log_scale=None, check=True):
        mean = as_float_array(mean, "mean")
        cov = as_float_array(cov, "cov")
        if check:
            factor = _check_vector_and_matrix(mean, "mean", cov, "cov")
        self._batch_shape, (self._mean, self._cov) = broadcast_params((mean, cov), (1, 2))
        self._event_shape = mean.shape[-1:]
        self._set_log_scale(log_scale)
        if check:
            # Keep the factor validation computed; it overrides the cached property.
            self._cov_cholesky = np.broadcast_to(factor, self._cov.shape)

    @expectation
    def mean(self):
        return self._mean

    @property
    def cov(self):
        return self._cov

    @property
    def weighted_mean(self):
        return cholesky_solve_vector(self._cov_cholesky, self._mean)

    def log_det_cov(self):
        return cholesky_log_det(self._cov_cholesky)

    def _mahalanobis(self, centred):
        # With cov = L L^T the quadratic form is |L^{-1} c|^2: one triangular solve, no inverse.
        whitened = triangular_solve_vector(self._cov_cholesky, centred)
        return np.sum(whitened**2, axis=-1)

    def _colour(self, white):
        return matvec(self._cov_cholesky, white)


class MvNormalMeanPrecision(MultivariateNormal):
    """Distribution (a family of messages and marginals): Multivariate normal with ``mean`` (shape ``(..., d)``) and ``precision`` (shape ``(..., d, d)``, SPD)."""

    def __init__(self, mean, precision, log_scale=None, check=True):
        mean = as_float_array(mean, "mean")
        precision = as_float_array(precision, "precision")
        if check:
            factor = _check_vector_and_matrix(mean, "mean", precision, "precision")
        self._batch_shape, (self._mean, self._precision) = broadcast_params((mean, precision), (1, 2))
        self._event_shape = mean.shape[-1:]
        self._set_log_scale(log_scale)
        if check:
            # Keep the factor validation computed; it overrides the cached property.
            self._precision_cholesky = np.broadcast_to(factor, self._precision.shape)

    @expectation
    def mean(self):
        return self._mean

    @property
    def precision(self):
        return self._precision


class MvNormalWeightedMeanPrecision(MultivariateNormal):
    """Multivariate normal in natural form: ``weighted_mean = precision @ mean`` and ``precision`` (SPD)."""

    def __init__(self, weighted_mean, precision, log_scale=None, check=True):
        weighted_mean = as_float_array(weighted_mean, "weighted_mean")
        precision = as_float_array(precision, "precision")
        if check:
            factor = _check_vector_and_matrix(weighted_mean, "weighted_mean", precision, "precision")
        self._batch_shape, (self._weighted_mean, self._precision) = broadcast_params(
            (weighted_mean, precision), (1, 2)
        )
        self._event_shape = weighted_mean.shape[-1:]
        self._set_log_scale(log_scale)
        if check:
            # Keep the factor validation computed; it overrides the cached property.
            self._precision_cholesky = np.broadcast_to(factor, self._precision.shape)

    @property
    def weighted_mean(self):
        return self._weighted_mean

    @property
    def precision(self):
        return self._precision


class GaussianLikelihood(MvNormalWeightedMeanPrecision):
    """A Gaussian function of ``x`` that need not be normalisable: a likelihood message.

        f(x) = exp(κ) h(x) exp(ξᵀx − ½ xᵀ W x),      log h = −d/2 log 2π,

    with ``W`` symmetric positive *semi*-definite. An observation of a linear
    function of ``x`` (``y = aᵀx + noise``) sends such a message: it is flat
    along every direction orthogonal to ``a`` (``W = a aᵀ / v`` has rank one),
    so it has no mean, covariance or integral. It multiplies like any member
    of the multivariate normal family (natural parameters and coefficients
    add; see :meth:`ExponentialFamily.log_coefficient`), and a product that
    is proper comes back as a proper :class:`MultivariateNormal`. A rule
    written for proper normals that asks it for a moment gets a clear error.

    ``log_scale`` holds κ (the partition function is taken as 1), so scales
    added by the engine multiply the function, as for any message.

    Parameters
    ----------
    weighted_mean : array, shape ``batch + (d,)``        ξ
    precision : array, shape ``batch + (d, d)``          W, symmetric PSD
    log_scale : array, shape ``batch``                    κ
    """

    def __init__(self, weighted_mean, precision, log_scale=None):
        super().__init__(weighted_mean, precision, log_scale, check=False)

    @classmethod
    def from_natural(cls, eta, log_scale=None):
        weighted_mean, minus_half_precision = eta
        return cls(weighted_mean, -2.0 * minus_half_precision, log_scale)

    def log_partition(self):
        return np.zeros(self._batch_shape)

    @classmethod
    def log_partition_of(cls, eta):
        """Zero (of the batch shape): the function is not normalised, its ``log_scale`` holds κ itself."""
        weighted_mean = np.asarray(eta[0])
        return np.zeros(weighted_mean.shape[:-1])

    def log_value(self, x):
        """``log f(x)`` for ``x`` of shape ``(..., d)``, broadcast against the batch."""
        x = np.asarray(x, dtype=float)
        quadratic = np.sum(x * matvec(self._precision, x), axis=-1)
        return self.log_scale - 0.5 * self.dim * LOG_2PI + np.sum(self._weighted_mean * x, axis=-1) - 0.5 * quadratic

    def power(self, exponent):
        """``f(x) ** ω``: natural parameters times ω, coefficient ``ω κ + (ω - 1) log h``."""
        exponent = np.asarray(exponent, dtype=float)
        powered = tuple(append_event_axes(exponent, e, nd) * e for e, nd in zip(self.natural_parameters(), self.natural_event_ndims))
        return GaussianLikelihood.from_natural(powered, exponent * self.log_scale - (exponent - 1.0) * 0.5 * self.dim * LOG_2PI)

    def _improper(self, what: str):
        raise ModelError(
            f"a GaussianLikelihood (precision of rank < {self.dim}) has no {what}: it is flat along some "
            "directions; multiply it with a proper prior on the variable first"
        )

    @property
    def mean(self):
        self._improper("mean")

    @property
    def cov(self):
        self._improper("covariance")

    @property
    def mode(self):
        self._improper("mode")

    @property
    def second_moment(self):
        self._improper("moments")

    def log_det_cov(self):
        self._improper("covariance")

    def entropy(self):
        self._improper("entropy")

    def logpdf(self, x):
        self._improper("normalised density (use log_value)")

    def sample(self, rng, size=()):
        self._improper("samples")

    def __repr__(self):
        return f"GaussianLikelihood(dim={self.dim}, batch_shape={self.batch_shape})"

