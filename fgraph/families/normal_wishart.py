"""Normal–Wishart (Gaussian–Wishart) distributions over a mean vector ``μ`` (``d``) and a precision ``Λ`` (``d × d``).

    p(μ, Λ) = N(μ | m, (β Λ)⁻¹) W(Λ | W, ν),

with ``m`` the location, ``β > 0`` the precision scale of the mean, ``W`` the Wishart scale matrix
(symmetric positive definite, ``E[Λ] = ν W``) and ``ν > d − 1`` the degrees of freedom (Bishop
2006, eq. 10.40 and B.68). It is the conjugate prior of the mean and precision of a multivariate
normal, ``x ~ N(μ, Λ⁻¹)``, and so of the components of a Gaussian mixture (Bishop §10.2); unlike a
product ``q(μ) q(Λ)`` it keeps the dependence of μ on Λ, which is what the variational posterior of
a Bayesian Gaussian mixture is (eqs. 10.59–10.63).

As an exponential family, with the statistics

    T(μ, Λ) = (Λ,  Λ μ,  μᵀ Λ μ,  log |Λ|)                          shapes (d, d), (d,), (), ()

the natural parameters are

    η = (−½ (W⁻¹ + β m mᵀ),  β m,  −½ β,  ½ (ν − d)),

the base measure ``log h = −(d/2) log 2π`` and the log-partition

    A(η) = −(d/2) log β + (ν d / 2) log 2 + (ν / 2) log |W| + log Γ_d(ν / 2).

Back from η: ``β = −2 η₃``, ``m = η₂ / β``, ``W⁻¹ = −2 η₁ − η₂ η₂ᵀ / β``, ``ν = 2 η₄ + d``.
Expectations: ``E[Λ] = ν W``, ``E[Λ μ] = ν W m``, ``E[μᵀ Λ μ] = d/β + ν mᵀ W m``,
``E[log |Λ|] = Σ_i ψ((ν + 1 − i)/2) + d log 2 + log |W|``. The marginal of μ is a multivariate
Student-t with ``ν − d + 1`` degrees of freedom, location m and scale matrix ``W⁻¹ / (β (ν − d + 1))``;
the predictive of a new ``x ~ N(μ, Λ⁻¹)`` is the Student-t with the same degrees of freedom and
scale ``(1 + β) W⁻¹ / (β (ν − d + 1))`` (Bishop eq. 10.81).

A plate of observations sends a message of this form that need not be normalisable (a component
that explains no point sends zeros, a single point leaves ``W⁻¹`` singular); it is a
:class:`NormalWishartLikelihood`, and a product that is proper again comes back as a
:class:`NormalWishart`.
"""
from __future__ import annotations

from functools import cached_property

import numpy as np

from fgraph.errors import ModelError
from fgraph.families.base import ExponentialFamily, as_float_array, check_finite, check_positive, expectation
from fgraph.families.linalg import (
    check_square,
    check_symmetric,
    cholesky,
    cholesky_factor,
    cholesky_inverse,
    cholesky_log_det,
)
from fgraph.families.wishart import LOG_2, Wishart, log_multivariate_gamma, multivariate_digamma

LOG_2PI = float(np.log(2.0 * np.pi))

__all__ = ["NormalWishart", "NormalWishartLikelihood"]


def _batch_of(array, event_ndim: int) -> tuple:
    return np.shape(array)[: np.ndim(array) - event_ndim]


class NormalWishart(ExponentialFamily):
    """``N(μ | mean, (precision_scale Λ)⁻¹) W(Λ | scale, df)``, batched.

    Parameters
    ----------
    mean : array ``batch + (d,)``              m
    precision_scale : array ``batch``          β > 0
    scale : array ``batch + (d, d)``           W, symmetric positive definite (``E[Λ] = df · W``)
    df : array ``batch``                       ν > d − 1

    The event shape is ``(d,)``, the shape of μ (Λ is ``d × d``). A value is a pair ``(μ, Λ)``.
    """

    event_ndim = 1
    natural_event_ndims = (2, 1, 0, 0)

    def __init__(self, mean, precision_scale, scale, df, log_scale=None, check=True):
        mean = as_float_array(mean, "mean")
        precision_scale = as_float_array(precision_scale, "precision_scale")
        scale = as_float_array(scale, "scale")
        df = as_float_array(df, "df")
        if check:
            if np.ndim(mean) < 1:
                raise ModelError(f"mean must be a vector (shape (..., d)), got shape {np.shape(mean)}")
            check_square(scale, "scale")
            check_finite(mean, "mean")
            check_finite(scale, "scale")
            if scale.shape[-1] != mean.shape[-1]:
                raise ModelError(f"mean has dimension d = {mean.shape[-1]} but scale is "
                                 f"{scale.shape[-2]}x{scale.shape[-1]}; they must match")
            check_positive(precision_scale, "precision_scale")
            check_finite(df, "df")
            dimension = mean.shape[-1]
            if np.any(df <= dimension - 1):
                raise ModelError(f"df must be greater than d - 1 = {dimension - 1} for {dimension}x{dimension} "
                                 f"matrices, got minimum {np.min(df)!r}")
            check_symmetric(scale, "scale")
            factor = cholesky(scale, "scale")
        dimension = mean.shape[-1]
        try:
            batch = tuple(np.broadcast_shapes(_batch_of(mean, 1), np.shape(precision_scale), _batch_of(scale, 2),
                                              np.shape(df)))
        except ValueError:
            raise ModelError(
                f"the shapes of mean {np.shape(mean)}, precision_scale {np.shape(precision_scale)}, scale "
                f"{np.shape(scale)} and df {np.shape(df)} do not fit: expected batch + (d,), batch, batch + (d, d) "
                "and batch") from None
        self._batch_shape = batch
        self._event_shape = (dimension,)
        self._mean = np.broadcast_to(mean, batch + (dimension,))
        self._precision_scale = np.broadcast_to(precision_scale, batch) if batch else np.float64(precision_scale)
        self._scale = np.broadcast_to(scale, batch + (dimension, dimension))
        self._df = np.broadcast_to(df, batch) if batch else np.float64(df)
        self._set_log_scale(log_scale)
        if check:
            self._scale_cholesky = np.broadcast_to(factor, self._scale.shape)

    @classmethod
    def family(cls) -> type:
        return NormalWishart

    # ---- parameters ----
    @property
    def dim(self) -> int:
        """d, the dimension of μ."""
        return self._event_shape[0]

    @property
    def location(self):
        """m, ``batch + (d,)``."""
        return self._mean

    @property
    def precision_scale(self):
        """β, ``batch``."""
        return self._precision_scale

    @property
    def scale(self):
        """W, ``batch + (d, d)``."""
        return self._scale

    @property
    def df(self):
        """ν, ``batch``."""
        return self._df

    @cached_property
    def _scale_cholesky(self):
        return cholesky_factor(self._scale)

    @cached_property
    def inverse_scale(self):
        """W⁻¹, ``batch + (d, d)``."""
        return cholesky_inverse(self._scale_cholesky)

    def log_det_scale(self):
        """log |W|, ``batch``."""
        return self.derived("_log_det_scale", lambda: cholesky_log_det(self._scale_cholesky))

    # ---- moments ----
    @expectation
    def mean(self):
        """E[μ] = m, ``batch + (d,)``."""
        return self._mean

    @property
    def mode(self):
        """Not offered: a value is a pair (μ, Λ), which no point mass here holds."""
        raise ModelError("a normal-Wishart has no mode as one array (its value is a pair (μ, Λ)); read location, "
                         "mean_precision and scale, and leave its variable without a point-mass constraint")

    @expectation
    def mean_precision(self):
        """E[Λ] = ν W, ``batch + (d, d)``."""
        return np.asarray(self._df)[..., None, None] * self._scale

    @expectation
    def mean_precision_times_mean(self):
        """E[Λ μ] = ν W m, ``batch + (d,)``."""
        return self.derived("_mean_precision_times_mean",
                            lambda: np.asarray(self._df)[..., None] * (self._scale @ self._mean[..., None])[..., 0])

    @expectation
    def mean_quadratic(self):
        """E[μᵀ Λ μ] = d/β + ν mᵀ W m, ``batch``."""
        return self.dim / self._precision_scale + np.sum(self._mean * self.mean_precision_times_mean, axis=-1)

    @expectation
    def mean_logdet(self):
        """E[log |Λ|] = Σ_i ψ((ν + 1 − i)/2) + d log 2 + log |W|, ``batch``."""
        return self.derived("_mean_logdet", lambda: multivariate_digamma(0.5 * np.asarray(self._df), self.dim)
                            + self.dim * LOG_2 + self.log_det_scale())

    def expected_quadratic_forms(self, points) -> np.ndarray:
        """E[(x − μ)ᵀ Λ (x − μ)] = d/β + ν (x − m)ᵀ W (x − m) at known points ``x`` (``... + (d,)``, broadcasting
        against the batch), shape the broadcast batch; computed from x − m, not from the raw moments, so that
        data far from the origin loses no digits."""
        difference = np.asarray(points, dtype=float) - self._mean
        whitened = (difference[..., None, :] @ self._scale_cholesky)[..., 0, :]  # Lᵀ(x − m), W = L Lᵀ
        return self.dim / self._precision_scale + np.asarray(self._df) * np.sum(whitened * whitened, axis=-1)

    # ---- marginals ----
    def mean_marginal(self) -> tuple:
        """The Student-t marginal of μ: ``(degrees of freedom ν − d + 1, location m, scale matrix
        W⁻¹ / (β (ν − d + 1)))``."""
        dof = np.asarray(self._df) - self.dim + 1.0
        return dof, self._mean, self.inverse_scale / (np.asarray(self._precision_scale) * dof)[..., None, None]

    def predictive(self) -> tuple:
        """The Student-t of a new ``x ~ N(μ, Λ⁻¹)``: ``(degrees of freedom ν − d + 1, location m, scale matrix
        (1 + β) W⁻¹ / (β (ν − d + 1)))`` (Bishop eq. 10.81)."""
        dof = np.asarray(self._df) - self.dim + 1.0
        beta = np.asarray(self._precision_scale)
        return dof, self._mean, self.inverse_scale * ((1.0 + beta) / (beta * dof))[..., None, None]

    # ---- exponential family ----
    def natural_parameters(self):
        eta = self.__dict__.get("_natural_parameters")
        if eta is None:
            beta = np.asarray(self._precision_scale)
            mean = self._mean
            eta = self._natural_parameters = (
                -0.5 * (self.inverse_scale + beta[..., None, None] * mean[..., :, None] * mean[..., None, :]),
                beta[..., None] * mean, -0.5 * beta, 0.5 * (np.asarray(self._df) - self.dim),
            )
        return eta

    @staticmethod
    def _parameters_of(eta):
        """(m, β, W⁻¹, W, ν, factor of W⁻¹) from the natural parameters (``LinAlgError`` if W⁻¹ is not positive
        definite)."""
        minus_half_matrix, weighted, minus_half_beta, half_excess = (np.asarray(e, dtype=float) for e in eta)
        dimension = weighted.shape[-1]
        beta = -2.0 * minus_half_beta
        mean = weighted / beta[..., None]
        inverse_scale = -2.0 * minus_half_matrix - weighted[..., :, None] * mean[..., None, :]
        inverse_scale = 0.5 * (inverse_scale + np.swapaxes(inverse_scale, -1, -2))
        factor = cholesky_factor(inverse_scale)
        scale = cholesky_inverse(factor)
        df = 2.0 * half_excess + dimension
        return mean, beta, inverse_scale, scale, df, factor

    def _keep_inverse(self, inverse_scale, factor) -> None:
        """Keep W⁻¹ and log |W| computed with the parameters."""
        self.inverse_scale = np.broadcast_to(inverse_scale, self._scale.shape)
        self.__dict__["_log_det_scale"] = np.broadcast_to(-cholesky_log_det(factor), self._batch_shape)

    @classmethod
    def from_natural(cls, eta, log_scale=None):
        mean, beta, inverse_scale, scale, df, factor = cls._parameters_of(eta)
        result = NormalWishart(mean, beta, scale, df, log_scale=log_scale, check=False)
        result._keep_inverse(inverse_scale, factor)
        return result

    @classmethod
    def log_partition_of(cls, eta):
        minus_half_matrix, weighted, minus_half_beta, half_excess = (np.asarray(e, dtype=float) for e in eta)
        dimension = weighted.shape[-1]
        beta = -2.0 * minus_half_beta
        outer = weighted[..., :, None] * weighted[..., None, :]
        inverse_scale = -2.0 * minus_half_matrix - outer / beta[..., None, None]
        df = 2.0 * half_excess + dimension
        log_det_scale = -cholesky_log_det(cholesky_factor(inverse_scale))
        return (-0.5 * dimension * np.log(beta) + 0.5 * df * dimension * LOG_2 + 0.5 * df * log_det_scale
                + log_multivariate_gamma(0.5 * df, dimension))

    @classmethod
    def log_base_measure_of(cls, eta):
        return -0.5 * np.shape(eta[1])[-1] * LOG_2PI

    @classmethod
    def from_coefficient(cls, eta, log_coefficient):
        """A proper member when β > 0, W⁻¹ is positive definite and ν > d − 1, else a
        :class:`NormalWishartLikelihood`."""
        dimension = np.shape(eta[1])[-1]
        beta = -2.0 * np.asarray(eta[2])
        df = 2.0 * np.asarray(eta[3]) + dimension
        if not (np.all(beta > 0.0) and np.all(df > dimension - 1)):
            return NormalWishartLikelihood(*eta, log_scale=log_coefficient)
        try:
            mean, beta, inverse_scale, scale, df, factor = cls._parameters_of(eta)
        except np.linalg.LinAlgError:
            return NormalWishartLikelihood(*eta, log_scale=log_coefficient)
        result = NormalWishart(mean, beta, scale, df, check=False)
        result._keep_inverse(inverse_scale, factor)
        return result.with_log_scale(log_coefficient + result.log_partition())

    def log_partition(self):
        return self.derived("_log_partition", lambda: (
            -0.5 * self.dim * np.log(self._precision_scale) + 0.5 * np.asarray(self._df) * self.dim * LOG_2
            + 0.5 * np.asarray(self._df) * self.log_det_scale()
            + log_multivariate_gamma(0.5 * np.asarray(self._df), self.dim)))

    def expected_statistics(self):
        return (self.mean_precision, self.mean_precision_times_mean, self.mean_quadratic, self.mean_logdet)

    # ---- densities ----
    def entropy(self):
        """H[q(μ, Λ)] = A(η) − ⟨η, E[T]⟩ − log h, ``batch`` (Bishop eq. B.77 plus the normal's part)."""
        return (self.log_partition() - self.inner(self.natural_parameters(), self.expected_statistics())
                - self.log_base_measure_of(self.natural_parameters()))

    def kl_divergence(self, other: "NormalWishart"):
        """KL(self ‖ other) for another (normalised) member."""
        return self.cross_entropy(other) - self.entropy()

    def logpdf(self, x):
        """Log density at ``x = (μ, Λ)``: μ of shape ``(..., d)``, Λ of shape ``(..., d, d)``."""
        mean_vector, precision = (np.asarray(v, dtype=float) for v in x)
        dimension = self.dim
        eigenvalues = np.linalg.eigvalsh(precision)
        positive = np.all(eigenvalues > 0.0, axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_det = np.sum(np.log(eigenvalues), axis=-1)
            difference = mean_vector - self._mean
            quadratic = np.einsum("...i,...ij,...j->...", difference, precision, difference)
            trace = np.einsum("...ij,...ji->...", self.inverse_scale, precision)
            df = np.asarray(self._df)
            beta = np.asarray(self._precision_scale)
            log_normal = 0.5 * dimension * (np.log(beta) - LOG_2PI) + 0.5 * log_det - 0.5 * beta * quadratic
            log_wishart = (0.5 * (df - dimension - 1.0) * log_det - 0.5 * trace - 0.5 * df * dimension * LOG_2
                           - 0.5 * df * self.log_det_scale() - log_multivariate_gamma(0.5 * df, dimension))
        return np.where(positive, log_normal + log_wishart, -np.inf)

    def sample(self, rng, size=()):
        """Draws ``(μ, Λ)``: Λ from the Wishart (Bartlett), then μ ~ N(m, (β Λ)⁻¹); shapes ``size + batch + (d,)``
        and ``size + batch + (d, d)``."""
        size = (size,) if np.isscalar(size) else tuple(size)
        precision = Wishart(self._df, self._scale, check=False).sample(rng, size)
        covariance_factor = np.linalg.cholesky(np.linalg.inv(np.asarray(self._precision_scale)[..., None, None]
                                                             * precision))
        white = rng.standard_normal(precision.shape[:-1])
        return self._mean + (covariance_factor @ white[..., None])[..., 0], precision

    # ---- batching ----
    def broadcast_to(self, batch_shape):
        batch_shape = tuple(batch_shape)
        d = self.dim
        return NormalWishart(np.broadcast_to(self._mean, batch_shape + (d,)),
                             np.broadcast_to(self._precision_scale, batch_shape),
                             np.broadcast_to(self._scale, batch_shape + (d, d)), np.broadcast_to(self._df, batch_shape),
                             log_scale=np.broadcast_to(self.log_scale, batch_shape), check=False)

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        return NormalWishart(self._mean[index + (Ellipsis,)], np.asarray(self._precision_scale)[index],
                             self._scale[index + (Ellipsis,)], np.asarray(self._df)[index],
                             log_scale=self.log_scale[index], check=False)

    def __repr__(self):
        return f"NormalWishart(d={self.dim}, batch_shape={self.batch_shape})"


class NormalWishartLikelihood(NormalWishart):
    """A function ``exp(κ) h(μ, Λ) exp(⟨η, T(μ, Λ)⟩)`` of the family's form that need not be normalisable.

    The message of a plate of observations to the parameters of a Gaussian (a component with no point
    sends η = 0, a single point a rank-one η₁); ``log_scale`` holds κ (its partition function is
    taken as 1), so products and reductions add natural parameters and coefficients as for any
    member. Moments and entropies are errors that ask for a prior.
    """

    def __init__(self, minus_half_matrix, weighted, minus_half_beta, half_excess, log_scale=None):
        eta = tuple(np.asarray(e, dtype=float) for e in (minus_half_matrix, weighted, minus_half_beta, half_excess))
        dimension = eta[1].shape[-1]
        self._batch_shape = tuple(np.broadcast_shapes(_batch_of(eta[0], 2), _batch_of(eta[1], 1), np.shape(eta[2]),
                                                      np.shape(eta[3])))
        self._event_shape = (dimension,)
        batch = self._batch_shape
        self._natural_parameters = (np.broadcast_to(eta[0], batch + (dimension, dimension)),
                                    np.broadcast_to(eta[1], batch + (dimension,)), np.broadcast_to(eta[2], batch),
                                    np.broadcast_to(eta[3], batch))
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
        return NormalWishartLikelihood(*powered, log_scale=exponent * self.log_scale + (exponent - 1.0) * log_base)

    def broadcast_to(self, batch_shape):
        batch_shape = tuple(batch_shape)
        d = self.dim
        eta = self._natural_parameters
        return NormalWishartLikelihood(np.broadcast_to(eta[0], batch_shape + (d, d)),
                                       np.broadcast_to(eta[1], batch_shape + (d,)),
                                       np.broadcast_to(eta[2], batch_shape),
                                       np.broadcast_to(eta[3], batch_shape),
                                       log_scale=np.broadcast_to(self.log_scale, batch_shape))

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        eta = self._natural_parameters
        return NormalWishartLikelihood(eta[0][index + (Ellipsis,)], eta[1][index + (Ellipsis,)], eta[2][index],
                                       eta[3][index], log_scale=self.log_scale[index])

    def _improper(self, what: str):
        raise ModelError(f"a NormalWishartLikelihood has no {what}: it need not be normalisable; multiply it with a "
                         "proper NormalWishart prior first")

    for _name in ("mean", "mean_precision", "mean_precision_times_mean", "mean_quadratic", "mean_logdet", "location",
                  "precision_scale", "scale", "df", "inverse_scale"):
        locals()[_name] = property(lambda self, _what=_name: self._improper(_what))
    del _name

    def entropy(self):
        self._improper("entropy")

    def logpdf(self, x):
        self._improper("normalised density")

    def sample(self, rng, size=()):
        self._improper("samples")

    def __repr__(self):
        return f"NormalWishartLikelihood(d={self.dim}, batch_shape={self.batch_shape})"
