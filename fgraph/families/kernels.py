"""Covariance functions (kernels) of Gaussian processes, with gradients in their log hyperparameters.

A kernel ``k(x, z; θ)`` gives the covariance of the function values at two inputs. Inputs are arrays of
shape ``(N, d)``; ``kernel(X, Z)`` is the ``(N, M)`` matrix ``k(x_n, z_m)`` and ``kernel.diagonal(X)`` the
``(N,)`` values ``k(x_n, x_n)``. Every hyperparameter is positive and is handled through its logarithm
``θ = log(value)``, so that an optimiser may move it freely: ``kernel.log_parameters`` is the ``(P,)`` vector
and ``kernel.with_log_parameters(θ)`` the same kernel at other values (kernels are immutable).

Stationary kernels depend on the scaled distance ``r² = Σ_j (x_j − z_j)² / ℓ_j²`` with one lengthscale
``ℓ`` for every input dimension or one ``ℓ_j`` per dimension (ARD, "automatic relevance determination"):

======================== ===============================================  ====================================
kernel                   ``k(r)``                                          ``∂k/∂ log ℓ_j`` (with ``s_j = Δ_j²/ℓ_j²``)
======================== ===============================================  ====================================
ExponentiatedQuadratic   ``σ² exp(−r²/2)``                                 ``k · s_j``
Matern32                 ``σ² (1 + √3 r) exp(−√3 r)``                      ``3 σ² exp(−√3 r) · s_j``
Matern52                 ``σ² (1 + √5 r + 5r²/3) exp(−√5 r)``              ``5/3 σ² (1 + √5 r) exp(−√5 r) · s_j``
======================== ===============================================  ====================================

and ``∂k/∂ log σ² = k`` for all three. ``Linear`` is ``σ² xᵀz`` and ``Constant`` is ``σ²`` (a bias);
``k₁ + k₂`` and ``k₁ * k₂`` build sums and products, whose hyperparameters are those of the parts in order.

The gradients are never formed as a ``(P, N, M)`` array: an objective needs only the contractions
``Σ_nm W_nm ∂k(x_n, z_m)/∂θ_p`` with one weight matrix ``W`` (for the log marginal likelihood
``W = ½(ααᵀ − (K + V)⁻¹)``), which :meth:`Kernel.contract_gradients` computes one parameter at a time
in ``O(N M d)`` memory ``O(N M)``; :meth:`Kernel.contract_diagonal_gradients` does the same for the diagonal, and
:meth:`Kernel.contract_input_gradients` gives ``Σ_m W_nm ∂k(x_n, z_m)/∂x_n`` (the gradient in the first inputs,
(N, d): inducing inputs are learnt with it). For a stationary kernel ``∂k/∂(r²) = −½ σ² h(r)`` with the same
``h`` as the lengthscale gradient (``∂k/∂ log ℓ_j = σ² h(r) s_j``), so ``∂k(x, z)/∂x_j = −σ² h(r) (x_j − z_j)/ℓ_j²``.
"""
from __future__ import annotations

import math

import numpy as np

from fgraph.errors import DataError, ModelError

__all__ = [
    "Kernel", "ExponentiatedQuadratic", "Matern32", "Matern52", "Linear", "Constant", "SumKernel",
    "ProductKernel", "check_inputs",
]


def check_inputs(X, name: str = "X", dimension: int | None = None) -> np.ndarray:
    """``X`` as a float array of shape ``(N, d)`` with N ≥ 1 and finite values, or a ``DataError`` naming it.

    A 1-D array is read as N points of one dimension. ``dimension``, when given, is the ``d`` required.
    """
    try:
        array = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        raise DataError(f"{name} must be an array of numbers of shape (N, d), got {type(X).__name__}") from None
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2:
        raise DataError(f"{name} must have shape (N, d), got shape {array.shape}")
    if array.shape[0] == 0:
        raise DataError(f"{name} has no points (N = 0); a Gaussian process needs at least one input")
    if not np.all(np.isfinite(array)):
        row = int(np.argwhere(~np.isfinite(array))[0, 0])
        raise DataError(f"{name} has a value that is not finite (NaN or infinite) in row {row}; "
                        "remove or impute it first")
    if dimension is not None and array.shape[1] != dimension:
        raise DataError(f"{name} has {array.shape[1]} input dimensions, the kernel expects {dimension}")
    return array


def _positive_number(value, name: str, kernel: str) -> float:
    array = _positive(value, name, kernel)
    if array.size != 1:
        raise ModelError(f"{kernel}: {name} must be one positive number, got {array.size} values")
    return float(array.reshape(()))


def _positive(value, name: str, kernel: str) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"{kernel}: {name} must be a positive number, got {value!r}") from None
    if array.ndim > 1 or array.size == 0:
        raise ModelError(f"{kernel}: {name} must be a positive number or a vector of them, got shape {array.shape}")
    if not np.all(np.isfinite(array)) or not np.all(array > 0.0):
        raise ModelError(f"{kernel}: {name} must be positive and finite, got {array.tolist()}; "
                         "hyperparameters are scales (a variance, a lengthscale)")
    return array


class Kernel:
    """A covariance function with positive hyperparameters handled in log space (module docstring)."""

    #: the names of the hyperparameters, in the order of :attr:`log_parameters`
    parameter_names: tuple = ()

    @property
    def input_dimension(self) -> int | None:
        """The ``d`` the kernel requires of its inputs (ARD lengthscales fix it), or ``None`` for any."""
        return None

    @property
    def log_parameters(self) -> np.ndarray:
        """``θ``, the logarithms of the hyperparameters, shape ``(P,)``."""
        raise NotImplementedError

    def with_log_parameters(self, theta) -> "Kernel":
        """The same kernel with hyperparameters ``exp(θ)``; ``θ`` of shape ``(P,)``."""
        raise NotImplementedError

    def __call__(self, X, Z=None) -> np.ndarray:
        """The covariance matrix ``k(x_n, z_m)``, shape ``(N, M)`` (``Z = X`` when omitted: ``(N, N)``)."""
        raise NotImplementedError

    def diagonal(self, X) -> np.ndarray:
        """``k(x_n, x_n)``, shape ``(N,)``."""
        raise NotImplementedError

    def contract_gradients(self, X, Z, weights) -> np.ndarray:
        """``Σ_nm W_nm ∂k(x_n, z_m)/∂θ_p`` for each hyperparameter p, shape ``(P,)``; ``W`` of shape ``(N, M)``.

        ``Z = None`` means ``Z = X``.
        """
        raise NotImplementedError

    def contract_diagonal_gradients(self, X, weights) -> np.ndarray:
        """``Σ_n w_n ∂k(x_n, x_n)/∂θ_p``, shape ``(P,)``; ``w`` of shape ``(N,)``."""
        raise NotImplementedError

    def contract_input_gradients(self, X, Z, weights) -> np.ndarray:
        """``Σ_m W_nm ∂k(x_n, z_m)/∂x_n``, shape ``(N, d)``, for ``W`` of shape ``(N, M)`` (``Z = None``: ``Z = X``
        held fixed — for ``Σ_nm W_nm k(x_n, x_m)`` with symmetric W the gradient in X is twice this)."""
        raise NotImplementedError

    def __add__(self, other: "Kernel") -> "SumKernel":
        if not isinstance(other, Kernel):
            return NotImplemented
        return SumKernel(self, other)

    def __mul__(self, other: "Kernel") -> "ProductKernel":
        if not isinstance(other, Kernel):
            return NotImplemented
        return ProductKernel(self, other)

    def __eq__(self, other) -> bool:
        return (type(self) is type(other) and self.parameter_names == other.parameter_names
                and np.array_equal(self.log_parameters, other.log_parameters))

    def __hash__(self):
        return hash((type(self).__name__, self.parameter_names, self.log_parameters.tobytes()))


class _Stationary(Kernel):
    """``σ² g(r)`` with the scaled distance ``r`` (module docstring); subclasses give ``g`` and its gradient."""

    def __init__(self, variance=1.0, lengthscale=1.0):
        name = type(self).__name__
        self.variance = _positive_number(variance, "variance", name)
        self.lengthscale = _positive(lengthscale, "lengthscale", name)
        ard = self.lengthscale.ndim == 1
        self.parameter_names = ("variance",) + (
            tuple(f"lengthscale[{j}]" for j in range(self.lengthscale.size)) if ard else ("lengthscale",))

    @property
    def input_dimension(self):
        return self.lengthscale.size if self.lengthscale.ndim == 1 else None

    @property
    def log_parameters(self):
        return np.concatenate([[math.log(self.variance)], np.log(self.lengthscale).ravel()])

    def with_log_parameters(self, theta):
        theta = np.asarray(theta, dtype=float)
        if theta.shape != (len(self.parameter_names),):
            raise ModelError(f"{type(self).__name__}: expected {len(self.parameter_names)} log hyperparameters, "
                             f"got shape {theta.shape}")
        lengthscale = np.exp(theta[1:]) if self.lengthscale.ndim == 1 else float(np.exp(theta[1]))
        return type(self)(float(np.exp(theta[0])), lengthscale)

    def _inputs(self, X, Z):
        X = check_inputs(X, "X", self.input_dimension)
        Z = X if Z is None else check_inputs(Z, "Z", X.shape[1])
        return X / self.lengthscale, Z / self.lengthscale

    @staticmethod
    def _squared_distances(X, Z) -> np.ndarray:
        # ‖x‖² + ‖z‖² − 2xᵀz: one matrix product; clipped at 0 where rounding makes it slightly negative
        squared = np.sum(X**2, axis=1)[:, None] + np.sum(Z**2, axis=1)[None, :] - 2.0 * (X @ Z.T)
        return np.maximum(squared, 0.0)

    def _shape(self, squared: np.ndarray) -> np.ndarray:
        """``g(r)`` from ``r²`` (``g(0) = 1``)."""
        raise NotImplementedError

    def _lengthscale_factor(self, squared: np.ndarray) -> np.ndarray:
        """``h(r)`` with ``∂(σ² g)/∂ log ℓ_j = σ² h(r) s_j`` (module docstring)."""
        raise NotImplementedError

    def _shape_and_factor(self, squared: np.ndarray) -> tuple:
        """``(g(r), h(r))`` together: one exponential for both (the gradients need both at every pair)."""
        return self._shape(squared), self._lengthscale_factor(squared)

    def __call__(self, X, Z=None):
        X, Z = self._inputs(X, Z)
        return self.variance * self._shape(self._squared_distances(X, Z))

    def diagonal(self, X):
        X = check_inputs(X, "X", self.input_dimension)
        return np.full(X.shape[0], self.variance)

    def contract_gradients(self, X, Z, weights):
        scaled_x, scaled_z = self._inputs(X, Z)
        squared = self._squared_distances(scaled_x, scaled_z)
        weights = np.asarray(weights, dtype=float)
        shape, factor = self._shape_and_factor(squared)
        gradient = [self.variance * np.sum(weights * shape)]
        weighted = weights * self.variance * factor
        if self.lengthscale.ndim == 1:  # s_j summed against the weights, one dimension at a time
            for j in range(scaled_x.shape[1]):
                difference = scaled_x[:, j, None] - scaled_z[None, :, j]
                gradient.append(np.sum(weighted * difference**2))
        else:
            gradient.append(np.sum(weighted * squared))
        return np.array(gradient)

    def contract_diagonal_gradients(self, X, weights):
        X = check_inputs(X, "X", self.input_dimension)
        gradient = np.zeros(len(self.parameter_names))
        gradient[0] = self.variance * np.sum(weights)  # k(x, x) = σ² does not depend on ℓ
        return gradient

    def contract_input_gradients(self, X, Z, weights):
        scaled_x, scaled_z = self._inputs(X, Z)
        factor = self._lengthscale_factor(self._squared_distances(scaled_x, scaled_z))
        weighted = np.asarray(weights, dtype=float) * factor
        # −σ² Σ_m W_nm h_nm (x_nj − z_mj) / ℓ_j², in the scaled inputs x/ℓ: divided by ℓ_j once more
        difference = scaled_x * weighted.sum(axis=1)[:, None] - weighted @ scaled_z
        return -self.variance * difference / self.lengthscale

    def __repr__(self):
        lengthscale = self.lengthscale.tolist() if self.lengthscale.ndim else float(self.lengthscale)
        return f"{type(self).__name__}(variance={self.variance:.6g}, lengthscale={lengthscale})"


class ExponentiatedQuadratic(_Stationary):
    """``σ² exp(−r²/2)``: the squared-exponential (RBF) kernel; smooth functions.

    ``variance`` σ² > 0; ``lengthscale`` ℓ > 0, a number or a vector of ``d`` (ARD).
    """

    def _shape(self, squared):
        return np.exp(-0.5 * squared)

    def _lengthscale_factor(self, squared):
        return np.exp(-0.5 * squared)

    def _shape_and_factor(self, squared):
        shape = np.exp(-0.5 * squared)
        return shape, shape


class Matern32(_Stationary):
    """``σ² (1 + √3 r) exp(−√3 r)``: once-differentiable functions."""

    def _shape(self, squared):
        scaled = math.sqrt(3.0) * np.sqrt(squared)
        return (1.0 + scaled) * np.exp(-scaled)

    def _lengthscale_factor(self, squared):
        return 3.0 * np.exp(-math.sqrt(3.0) * np.sqrt(squared))

    def _shape_and_factor(self, squared):
        scaled = math.sqrt(3.0) * np.sqrt(squared)
        decay = np.exp(-scaled)
        return (1.0 + scaled) * decay, 3.0 * decay


class Matern52(_Stationary):
    """``σ² (1 + √5 r + 5r²/3) exp(−√5 r)``: twice-differentiable functions."""

    def _shape(self, squared):
        scaled = math.sqrt(5.0) * np.sqrt(squared)
        return (1.0 + scaled + 5.0 / 3.0 * squared) * np.exp(-scaled)

    def _lengthscale_factor(self, squared):
        scaled = math.sqrt(5.0) * np.sqrt(squared)
        return 5.0 / 3.0 * (1.0 + scaled) * np.exp(-scaled)

    def _shape_and_factor(self, squared):
        scaled = math.sqrt(5.0) * np.sqrt(squared)
        decay = np.exp(-scaled)
        return (1.0 + scaled + 5.0 / 3.0 * squared) * decay, 5.0 / 3.0 * (1.0 + scaled) * decay


class _Scaled(Kernel):
    """A kernel whose one hyperparameter is a variance σ² (``Linear``, ``Constant``)."""

    parameter_names = ("variance",)

    def __init__(self, variance=1.0):
        self.variance = _positive_number(variance, "variance", type(self).__name__)

    @property
    def log_parameters(self):
        return np.array([math.log(self.variance)])

    def with_log_parameters(self, theta):
        theta = np.asarray(theta, dtype=float).reshape(-1)
        if theta.shape != (1,):
            raise ModelError(f"{type(self).__name__}: expected 1 log hyperparameter, got shape {theta.shape}")
        return type(self)(float(np.exp(theta[0])))

    def contract_gradients(self, X, Z, weights):  # ∂k/∂ log σ² = k
        return np.array([np.sum(np.asarray(weights, dtype=float) * self(X, Z))])

    def contract_diagonal_gradients(self, X, weights):
        return np.array([np.sum(np.asarray(weights, dtype=float) * self.diagonal(X))])

    def __repr__(self):
        return f"{type(self).__name__}(variance={self.variance:.6g})"


class Linear(_Scaled):
    """``σ² xᵀz``: Bayesian linear regression through the origin (add a :class:`Constant` for a bias)."""

    def __call__(self, X, Z=None):
        X = check_inputs(X, "X")
        Z = X if Z is None else check_inputs(Z, "Z", X.shape[1])
        return self.variance * (X @ Z.T)

    def diagonal(self, X):
        X = check_inputs(X, "X")
        return self.variance * np.sum(X**2, axis=1)

    def contract_input_gradients(self, X, Z, weights):
        X = check_inputs(X, "X")
        Z = X if Z is None else check_inputs(Z, "Z", X.shape[1])
        return self.variance * (np.asarray(weights, dtype=float) @ Z)


class Constant(_Scaled):
    """``σ²`` for every pair of inputs: an unknown constant offset of the function."""

    def __call__(self, X, Z=None):
        X = check_inputs(X, "X")
        Z = X if Z is None else check_inputs(Z, "Z", X.shape[1])
        return np.full((X.shape[0], Z.shape[0]), self.variance)

    def diagonal(self, X):
        return np.full(check_inputs(X, "X").shape[0], self.variance)

    def contract_input_gradients(self, X, Z, weights):
        return np.zeros(check_inputs(X, "X").shape)


class _Composite(Kernel):
    def __init__(self, left: Kernel, right: Kernel):
        if not isinstance(left, Kernel) or not isinstance(right, Kernel):
            raise ModelError(f"{type(self).__name__}: both parts must be kernels, "
                             f"got {type(left).__name__} and {type(right).__name__}")
        dimensions = {d for d in (left.input_dimension, right.input_dimension) if d is not None}
        if len(dimensions) > 1:
            raise ModelError(f"{type(self).__name__}: the parts expect different input dimensions {sorted(dimensions)}")
        self.left, self.right = left, right
        self.parameter_names = (tuple(f"0.{name}" for name in left.parameter_names)
                                + tuple(f"1.{name}" for name in right.parameter_names))

    @property
    def input_dimension(self):
        return self.left.input_dimension if self.left.input_dimension is not None else self.right.input_dimension

    @property
    def log_parameters(self):
        return np.concatenate([self.left.log_parameters, self.right.log_parameters])

    def with_log_parameters(self, theta):
        theta = np.asarray(theta, dtype=float)
        if theta.shape != (len(self.parameter_names),):
            raise ModelError(f"{type(self).__name__}: expected {len(self.parameter_names)} log hyperparameters, "
                             f"got shape {theta.shape}")
        split = len(self.left.parameter_names)
        return type(self)(self.left.with_log_parameters(theta[:split]), self.right.with_log_parameters(theta[split:]))

    def __repr__(self):
        operator = "+" if isinstance(self, SumKernel) else "*"
        return f"({self.left!r} {operator} {self.right!r})"


class SumKernel(_Composite):
    """``k₁ + k₂``: the sum of two independent processes."""

    def __call__(self, X, Z=None):
        return self.left(X, Z) + self.right(X, Z)

    def diagonal(self, X):
        return self.left.diagonal(X) + self.right.diagonal(X)

    def contract_gradients(self, X, Z, weights):
        return np.concatenate([self.left.contract_gradients(X, Z, weights),
                               self.right.contract_gradients(X, Z, weights)])

    def contract_diagonal_gradients(self, X, weights):
        return np.concatenate([self.left.contract_diagonal_gradients(X, weights),
                               self.right.contract_diagonal_gradients(X, weights)])

    def contract_input_gradients(self, X, Z, weights):
        return self.left.contract_input_gradients(X, Z, weights) + self.right.contract_input_gradients(X, Z, weights)


class ProductKernel(_Composite):
    """``k₁ k₂``: e.g. a periodic pattern whose amplitude varies; ``∂(k₁k₂) = ∂k₁ · k₂ + k₁ · ∂k₂``."""

    def __call__(self, X, Z=None):
        return self.left(X, Z) * self.right(X, Z)

    def diagonal(self, X):
        return self.left.diagonal(X) * self.right.diagonal(X)

    def contract_gradients(self, X, Z, weights):
        weights = np.asarray(weights, dtype=float)
        return np.concatenate([self.left.contract_gradients(X, Z, weights * self.right(X, Z)),
                               self.right.contract_gradients(X, Z, weights * self.left(X, Z))])

    def contract_diagonal_gradients(self, X, weights):
        weights = np.asarray(weights, dtype=float)
        return np.concatenate([self.left.contract_diagonal_gradients(X, weights * self.right.diagonal(X)),
                               self.right.contract_diagonal_gradients(X, weights * self.left.diagonal(X))])

    def contract_input_gradients(self, X, Z, weights):
        weights = np.asarray(weights, dtype=float)
        return (self.left.contract_input_gradients(X, Z, weights * self.right(X, Z))
                + self.right.contract_input_gradients(X, Z, weights * self.left(X, Z)))
