"""Matrix-normal–gamma distributions over a matrix ``A`` (``h × p``) and row precisions ``λ`` (``h``).

The rows ``a_i`` of ``A`` share one column covariance ``V`` (``p × p``) and
each has its own precision ``λ_i``:

    p(A, λ) = Π_i Gamma(λ_i | α_i, β_i) N(a_i | m_i, V / λ_i),

with ``M`` (rows ``m_i``) the mean, ``α_i`` the shapes and ``β_i`` the rates
(shape–rate form). This is the conjugate prior of a linear map with
independent noise per output, ``y = A x + ε``, ``ε ~ N(0, diag(λ)⁻¹)``
(Bayesian multivariate linear regression; the experts of a conditional mixture
network, Heins et al., Appendix B, where one shape is shared by the ``h``
rows — a special case here).

As an exponential family, with the statistics

    T(A, λ) = (Σ_i λ_i a_i a_iᵀ,  λ_i a_i,  λ_i,  log λ_i)            shapes (p, p), (h, p), (h,), (h,)

the natural parameters are

    η = (−½ V⁻¹,  M V⁻¹,  −β − ½ diag(M V⁻¹ Mᵀ),  α − 1 + p/2),

the base measure ``log h = −(h p / 2) log 2π`` and the log-partition

    A(η) = Σ_i [log Γ(α_i) − α_i log β_i] + (h / 2) log |V|.

The first statistic sums over rows because the rows share ``V``: products of
members (a prior times the messages of a plate of regressions, whose
``V⁻¹`` contributions ``Σ_n x_n x_nᵀ`` are the same for every output) stay in
the family. Expectations: ``E[λ_i] = α_i/β_i``, ``E[log λ_i] = ψ(α_i) − log β_i``,
``E[λ_i a_i] = E[λ_i] m_i``, ``E[λ_i a_i a_iᵀ] = V + E[λ_i] m_i m_iᵀ``.

A plate of observations sends a message that need not be normalisable (fewer
observations than columns leave ``V⁻¹`` singular, the residual sum of squares
may vanish); it is a :class:`MatrixNormalGammaLikelihood`, and a product that
is proper again comes back as a :class:`MatrixNormalGamma`.
"""
from __future__ import annotations

from functools import cached_property

import numpy as np

from fgraph.errors import ModelError
from fgraph.families.base import (
    ExponentialFamily,
    as_float_array,
    check_finite,
    check_positive,
    expectation,
)
from fgraph.families.linalg import (
    check_square,
    check_symmetric,
    cholesky,
    cholesky_factor,
    cholesky_inverse,
    cholesky_log_det,
)
from fgraph.families.special import digamma, gammaln

LOG_2PI = float(np.log(2.0 * np.pi))

__all__ = ["MatrixNormalGamma", "MatrixNormalGammaLikelihood"]


def _batch_of(array: np.ndarray, event_ndim: int) -> tuple:
    return array.shape[: array.ndim - event_ndim]


class MatrixNormalGamma(ExponentialFamily):
    """``Π_i Gamma(λ_i | shape_i, rate_i) N(a_i | mean_i, column_covariance / λ_i)``, batched.

    Parameters
    ----------
    mean : array ``batch + (h, p)``                 M, the rows m_i
    column_covariance : array ``batch + (p, p)``    V, symmetric positive definite, shared by the rows
    shape : array ``batch + (h,)``                  α_i > 0 (a scalar or a batch of them broadcasts: write
                                                    ``shape[..., None]`` for one shape per batch element)
    rate : array ``batch + (h,)``                   β_i > 0

    The event shape is ``(h, p)`` (the shape of A; λ has one entry per row).
    """

    event_ndim = 2
    natural_event_ndims = (2, 2, 1, 1)

    def __init__(self, mean, column_covariance, shape, rate, log_scale=None, check=True):
        mean = as_float_array(mean, "mean")
        column_covariance = as_float_array(column_covariance, "column_covariance")
        shape = np.asarray(as_float_array(shape, "shape"), dtype=float)
        rate = np.asarray(as_float_array(rate, "rate"), dtype=float)
        if check:
            if np.ndim(mean) < 2:
                raise ModelError(f"mean must have shape (..., h, p) (the shape of A), got shape {np.shape(mean)}")
            check_square(column_covariance, "column_covariance")
            check_finite(mean, "mean")
            check_finite(column_covariance, "column_covariance")
            if column_covariance.shape[-1] != mean.shape[-1]:
                raise ModelError(
                    f"mean has p = {mean.shape[-1]} columns but column_covariance is "
                    f"{column_covariance.shape[-2]}x{column_covariance.shape[-1]}; they must match"
                )
            check_symmetric(column_covariance, "column_covariance")
            factor = cholesky(column_covariance, "column_covariance")
            check_positive(shape, "shape")
            check_positive(rate, "rate")
        rows, columns = mean.shape[-2:]
        try:
            batch = np.broadcast_shapes(_batch_of(mean, 2), _batch_of(column_covariance, 2),
                                        np.shape(shape)[:-1] if np.ndim(shape) else (),
                                        np.shape(rate)[:-1] if np.ndim(rate) else ())
            for name, value in (("shape", shape), ("rate", rate)):
                if np.ndim(value) and np.shape(value)[-1] not in (1, rows):
                    raise ValueError(f"{name} has shape {np.shape(value)}")
        except ValueError:
            raise ModelError(
                f"the shapes of mean {mean.shape}, column_covariance {column_covariance.shape}, shape "
                f"{np.shape(shape)} and rate {np.shape(rate)} do not fit: expected batch + (h, p), batch + (p, p), "
                f"batch + (h,) and batch + (h,) (shape and rate may also be scalars)"
            ) from None
        self._batch_shape = tuple(batch)
        self._event_shape = (rows, columns)
        self._mean = np.broadcast_to(mean, batch + (rows, columns))
        self._column_covariance = np.broadcast_to(column_covariance, batch + (columns, columns))
        self._shape = np.broadcast_to(shape, batch + (rows,))
        self._rate = np.broadcast_to(rate, batch + (rows,))
        self._set_log_scale(log_scale)
        if check:
            self._covariance_cholesky = np.broadcast_to(factor, self._column_covariance.shape)

    @classmethod
    def family(cls) -> type:
        return MatrixNormalGamma

    # ---- parameters ----
    @property
    def rows(self) -> int:
        """h, the number of rows of A (and of precisions λ)."""
        return self._event_shape[0]

    @property
    def columns(self) -> int:
        """p, the number of columns of A."""
        return self._event_shape[1]

    @property
    def matrix_mean(self):
        """M, ``batch + (h, p)``."""
        return self._mean

    @property
    def column_covariance(self):
        """V, ``batch + (p, p)``."""
        return self._column_covariance

    @property
    def shape(self):
        """α, ``batch + (h,)``."""
        return self._shape

    @property
    def rate(self):
        """β, ``batch + (h,)``."""
        return self._rate

    @cached_property
    def _covariance_cholesky(self):
        return cholesky_factor(self._column_covariance)

    @cached_property
    def column_precision(self):
        """V⁻¹, ``batch + (p, p)`` (minus twice the first natural parameter)."""
        return cholesky_inverse(self._covariance_cholesky)

    def log_det_column_covariance(self):
        """log |V|, ``batch``."""
        return self.derived("_log_det_column_covariance", lambda: cholesky_log_det(self._covariance_cholesky))

    # ---- moments ----
    @expectation
    def mean(self):
        """E[A] = M, ``batch + (h, p)``."""
        return self._mean

    @property
    def mode(self):
        """Not offered: a value is a pair (A, λ), which no point mass here holds (so no point-mass form constraint)."""
        raise ModelError("a matrix-normal-gamma has no mode as one array (its value is a pair (A, λ)); read "
                         "matrix_mean and mean_precision, and leave its variable without a point-mass constraint")

    @expectation
    def mean_precision(self):
        """E[λ_i] = α_i / β_i, ``batch + (h,)``."""
        return self._shape / self._rate

    @expectation
    def mean_log_precision(self):
        """E[log λ_i] = ψ(α_i) − log β_i, ``batch + (h,)``."""
        value = self.__dict__.get("_mean_log_precision")
        if value is None:
            value = self._mean_log_precision = digamma(self._shape) - np.log(self._rate)
        return value

    @expectation
    def mean_weighted_rows(self):
        """E[λ_i a_i] = E[λ_i] m_i, ``batch + (h, p)``."""
        return self.mean_precision[..., None] * self._mean

    @expectation
    def mean_weighted_row_outer(self):
        """E[λ_i a_i a_iᵀ] = V + E[λ_i] m_i m_iᵀ, ``batch + (h, p, p)``."""
        lam = self.mean_precision
        return (self._column_covariance[..., None, :, :]
                + lam[..., None, None] * self._mean[..., :, None] * self._mean[..., None, :])

    @expectation
    def mean_weighted_outer_sum(self):
        """E[Σ_i λ_i a_i a_iᵀ] = h V + Mᵀ diag(E[λ]) M, ``batch + (p, p)``."""
        lam = self.mean_precision
        return self.rows * self._column_covariance + np.swapaxes(self._mean, -1, -2) @ (lam[..., None] * self._mean)

    # ---- exponential family ----
    def natural_parameters(self):
        eta = self.__dict__.get("_natural_parameters")
        if eta is None:
            precision = self.column_precision
            weighted = self._mean @ precision  # M V⁻¹, rows V⁻¹ m_i
            quadratic = np.sum(weighted * self._mean, axis=-1)  # m_iᵀ V⁻¹ m_i
            eta = self._natural_parameters = (
                -0.5 * precision, weighted, -self._rate - 0.5 * quadratic, self._shape - 1.0 + 0.5 * self.columns,
            )
        return eta

    @staticmethod
    def _parameters_of(eta):
        """(V⁻¹, V, M, α, β, log |V|) from the natural parameters (``LinAlgError`` if V⁻¹ is not positive
        definite)."""
        minus_half_precision, weighted, linear, log_coefficient = eta
        precision = -2.0 * np.asarray(minus_half_precision)
        columns = precision.shape[-1]
        factor = cholesky_factor(precision)
        covariance = cholesky_inverse(factor)
        mean = np.asarray(weighted) @ covariance  # M = (M V⁻¹) V: V is wanted anyway, so no solves
        shape = np.asarray(log_coefficient) + 1.0 - 0.5 * columns
        rate = -np.asarray(linear) - 0.5 * np.sum(weighted * mean, axis=-1)
        return precision, covariance, mean, shape, rate, -cholesky_log_det(factor)

    def _keep_precision(self, precision, log_det_covariance) -> None:
        """Keep V⁻¹ and log |V|, computed with the parameters, so that neither is computed again from V."""
        self.column_precision = np.broadcast_to(precision, self.column_covariance.shape)
        self.__dict__["_log_det_column_covariance"] = np.broadcast_to(log_det_covariance,
                                                                      self.column_covariance.shape[:-2])

    @classmethod
    def from_natural(cls, eta, log_scale=None):
        precision, covariance, mean, shape, rate, log_det_covariance = cls._parameters_of(eta)
        result = MatrixNormalGamma(mean, covariance, shape, rate, log_scale=log_scale, check=False)
        result._keep_precision(precision, log_det_covariance)
        return result

    @classmethod
    def log_partition_of(cls, eta):
        minus_half_precision, weighted, linear, log_coefficient = eta
        precision = -2.0 * np.asarray(minus_half_precision)
        columns = precision.shape[-1]
        factor = cholesky_factor(precision)
        whitened = np.linalg.solve(factor, np.swapaxes(weighted, -1, -2))  # L⁻¹ V⁻¹ m_i as columns
        shape = np.asarray(log_coefficient) + 1.0 - 0.5 * columns
        rate = -np.asarray(linear) - 0.5 * np.sum(whitened * whitened, axis=-2)
        rows = shape.shape[-1]
        # log |V| = −log |V⁻¹|
        return np.sum(gammaln(shape) - shape * np.log(rate), axis=-1) - 0.5 * rows * cholesky_log_det(factor)

    @classmethod
    def log_base_measure_of(cls, eta):
        rows, columns = np.shape(eta[1])[-2:]
        return -0.5 * rows * columns * LOG_2PI

    @classmethod
    def from_coefficient(cls, eta, log_coefficient):
        """A proper member when ``−2η₁`` is positive definite and every shape and rate is positive, else a
        :class:`MatrixNormalGammaLikelihood`."""
        try:
            precision, covariance, mean, shape, rate, log_det_covariance = cls._parameters_of(eta)
        except np.linalg.LinAlgError:
            return MatrixNormalGammaLikelihood(*eta, log_scale=log_coefficient)
        if not (np.all(shape > 0.0) and np.all(rate > 0.0)):
            return MatrixNormalGammaLikelihood(*eta, log_scale=log_coefficient)
        result = MatrixNormalGamma(mean, covariance, shape, rate, check=False)
        result._keep_precision(precision, log_det_covariance)
        return result.with_log_scale(log_coefficient + result.log_partition())  # a copy: keeps both

    def log_partition(self):
        rows = self.rows
        return (np.sum(gammaln(self._shape) - self._shape * np.log(self._rate), axis=-1)
                + 0.5 * rows * self.log_det_column_covariance())

    def expected_statistics(self):
        return (self.mean_weighted_outer_sum, self.mean_weighted_rows, self.mean_precision, self.mean_log_precision)

    # ---- densities ----
    def entropy(self):
        """Σ_i [H(Gamma(α_i, β_i)) + p/2 (1 + log 2π) + ½ log|V| − p/2 E[log λ_i]], ``batch``."""
        shape, rate, columns = self._shape, self._rate, self.columns
        gamma_entropy = shape - np.log(rate) + gammaln(shape) + (1.0 - shape) * digamma(shape)
        rows_entropy = 0.5 * columns * (1.0 + LOG_2PI) + 0.5 * self.log_det_column_covariance()[..., None] \
            - 0.5 * columns * self.mean_log_precision
        return np.sum(gamma_entropy + rows_entropy, axis=-1)

    def kl_divergence(self, other: "MatrixNormalGamma"):
        """KL(self ‖ other) for another member (normalised), shape the broadcast batch."""
        return self.cross_entropy(other) - self.entropy()

    def logpdf(self, x):
        """Log density at ``x = (A, λ)``: ``A`` of shape ``(..., h, p)``, ``λ`` of shape ``(..., h)``."""
        matrix, precisions = x
        matrix = np.asarray(matrix, dtype=float)
        precisions = np.asarray(precisions, dtype=float)
        shape, rate, columns = self._shape, self._rate, self.columns
        with np.errstate(divide="ignore", invalid="ignore"):
            log_gamma = (shape - 1.0) * np.log(precisions) - rate * precisions + shape * np.log(rate) - gammaln(shape)
            centred = matrix - self._mean
            solved = np.swapaxes(np.linalg.solve(self._covariance_cholesky, np.swapaxes(centred, -1, -2)), -1, -2)
            log_normal = (-0.5 * columns * LOG_2PI - 0.5 * self.log_det_column_covariance()[..., None]
                          + 0.5 * columns * np.log(precisions) - 0.5 * precisions * np.sum(solved * solved, axis=-1))
        return np.where(np.all(precisions > 0.0, axis=-1), np.sum(log_gamma + log_normal, axis=-1), -np.inf)

    def sample(self, rng, size=()):
        """Draws ``(A, λ)``: ``λ`` of shape ``size + batch + (h,)``, ``A`` of shape ``size + batch + (h, p)``."""
        size = (size,) if np.isscalar(size) else tuple(size)
        shape = size + self._batch_shape
        precisions = rng.gamma(self._shape, 1.0 / self._rate, shape + (self.rows,))
        white = rng.standard_normal(shape + self._event_shape)
        coloured = white @ np.swapaxes(self._covariance_cholesky, -1, -2)  # rows ~ N(0, V)
        return self._mean + coloured / np.sqrt(precisions)[..., None], precisions

    # ---- batching ----
    def broadcast_to(self, batch_shape):
        batch_shape = tuple(batch_shape)
        rows, columns = self._event_shape
        return MatrixNormalGamma(
            np.broadcast_to(self._mean, batch_shape + (rows, columns)),
            np.broadcast_to(self._column_covariance, batch_shape + (columns, columns)),
            np.broadcast_to(self._shape, batch_shape + (rows,)), np.broadcast_to(self._rate, batch_shape + (rows,)),
            log_scale=np.broadcast_to(self.log_scale, batch_shape), check=False)

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        return MatrixNormalGamma(self._mean[index + (Ellipsis,)], self._column_covariance[index + (Ellipsis,)],
                                 self._shape[index + (Ellipsis,)], self._rate[index + (Ellipsis,)],
                                 log_scale=self.log_scale[index], check=False)

    def __repr__(self):
        return f"MatrixNormalGamma(h={self.rows}, p={self.columns}, batch_shape={self.batch_shape})"


class MatrixNormalGammaLikelihood(MatrixNormalGamma):
    """A function ``exp(κ) h(A, λ) exp(⟨η, T(A, λ)⟩)`` of the family's form that need not be normalisable.

    The message of a plate of regressions (or of a few observations) to
    ``(A, λ)``; ``log_scale`` holds κ (its partition function is taken as 1),
    so products and reductions add natural parameters and coefficients as for
    any member. Moments and entropies are errors that ask for a prior.
    """

    def __init__(self, minus_half_precision, weighted, linear, log_coefficient_of_log, log_scale=None):
        eta = tuple(np.asarray(e, dtype=float) for e in
                    (minus_half_precision, weighted, linear, log_coefficient_of_log))
        rows, columns = eta[1].shape[-2:]
        self._batch_shape = tuple(np.broadcast_shapes(_batch_of(eta[0], 2), _batch_of(eta[1], 2),
                                                      _batch_of(eta[2], 1), _batch_of(eta[3], 1)))
        self._event_shape = (rows, columns)
        batch = self._batch_shape
        self._natural_parameters = (np.broadcast_to(eta[0], batch + (columns, columns)),
                                    np.broadcast_to(eta[1], batch + (rows, columns)),
                                    np.broadcast_to(eta[2], batch + (rows,)), np.broadcast_to(eta[3], batch + (rows,)))
        self._set_log_scale(log_scale)

    @classmethod
    def from_natural(cls, eta, log_scale=None):
        return cls(*eta, log_scale=log_scale)

    def natural_parameters(self):
        return self._natural_parameters

    def log_partition(self):
        return np.zeros(self._batch_shape)

    def power(self, exponent):
        exponent = np.asarray(exponent, dtype=float)
        powered = tuple((exponent.reshape(exponent.shape + (1,) * nd) if exponent.ndim else exponent) * e
                        for e, nd in zip(self._natural_parameters, self.natural_event_ndims))
        log_base = self.log_base_measure_of(self._natural_parameters)
        return MatrixNormalGammaLikelihood(*powered, log_scale=exponent * self.log_scale + (exponent - 1.0) * log_base)

    def broadcast_to(self, batch_shape):
        batch_shape = tuple(batch_shape)
        rows, columns = self._event_shape
        eta = self._natural_parameters
        return MatrixNormalGammaLikelihood(
            np.broadcast_to(eta[0], batch_shape + (columns, columns)),
            np.broadcast_to(eta[1], batch_shape + (rows, columns)),
            np.broadcast_to(eta[2], batch_shape + (rows,)), np.broadcast_to(eta[3], batch_shape + (rows,)),
            log_scale=np.broadcast_to(self.log_scale, batch_shape))

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        return MatrixNormalGammaLikelihood(*(e[index + (Ellipsis,)] for e in self._natural_parameters),
                                           log_scale=self.log_scale[index])

    def _improper(self, what: str):
        raise ModelError(
            f"a MatrixNormalGammaLikelihood has no {what}: it need not be normalisable; multiply it with a "
            "proper MatrixNormalGamma prior first"
        )

    for _name in ("mean", "mean_precision", "mean_log_precision", "mean_weighted_rows", "mean_weighted_row_outer",
                  "mean_weighted_outer_sum", "matrix_mean", "column_covariance", "shape", "rate"):
        locals()[_name] = property(lambda self, _what=_name: self._improper(_what))
    del _name

    def entropy(self):
        self._improper("entropy")

    def logpdf(self, x):
        self._improper("normalised density")

    def sample(self, rng, size=()):
        self._improper("samples")

    def __repr__(self):
        return f"MatrixNormalGammaLikelihood(h={self.rows}, p={self.columns}, batch_shape={self.batch_shape})"
