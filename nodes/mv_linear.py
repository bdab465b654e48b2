"""Multivariate linear-Gaussian factor: f(out, in) = N(out | M in + c, Σ).

``in`` is a vector of dimension n, ``out`` a vector of dimension m; the gain
matrix M (m × n), the offset c (m,) and the noise covariance Σ (m × m,
symmetric positive definite) are fixed numbers, node attributes rather than
interfaces (no message goes towards them). It is the observation and the
transition of a linear-Gaussian state-space model, ``y = C x + N(0, R)`` and
``x_t = F x_{t−1} + N(0, Q)``, and the multivariate counterpart of
:mod:`fgraph.nodes.gaussian_linear`.

M need not be square nor of full rank: an observation of part of the state
(m < n, e.g. C = [[1, 0]]) sends ``in`` a Gaussian likelihood flat along the
null space of M (:class:`~fgraph.families.mvnormal.GaussianLikelihood`), which
the prior or the other factors on ``in`` make proper; the rules accept such
improper messages from either side (``rules/mv_linear/``), so the evidence
stays exact on a tree.

The attributes may carry leading batch axes (one matrix per element of a
plate: M of shape ``batch + (m, n)``, c ``batch + (m,)``, Σ ``batch + (m, m)``);
they broadcast against the node's batch shape and may not enlarge it (the
constructor :func:`MvLinear` makes the variable's batch include theirs).
"""
from __future__ import annotations

from functools import cached_property

import numpy as np

from fgraph.errors import ModelError, ModelTypeError
from fgraph.families import Distribution
from fgraph.families.linalg import SYMMETRY_TOLERANCE, cholesky_factor, cholesky_inverse, cholesky_log_det, matvec, outer
from fgraph.families.mvnormal import LOG_2PI
from fgraph.model import Variable, numeric_array, random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy

__all__ = ["MvLinear", "MvLinearNode"]


def _attribute_batch_shapes(matrix: np.ndarray, cov: np.ndarray, offset: np.ndarray) -> tuple:
    return matrix.shape[:-2], cov.shape[:-2], offset.shape[:-1]


def check_attributes(name: str, matrix, cov, offset=None) -> tuple:
    """The attributes ``(M, Σ, c, batch)`` as float arrays, or ``ValueError``/``TypeError`` naming the node,
    the attribute and the fix. ``offset=None`` is c = 0; ``batch`` is the broadcast batch shape of the three.

    M: ``batch + (m, n)``, finite, m, n ≥ 1; Σ: ``batch + (m, m)``, finite, symmetric (to
    :data:`~fgraph.families.linalg.SYMMETRY_TOLERANCE`) and positive definite; c: ``batch + (m,)``, finite.
    """
    where = f"node {name!r}"
    matrix = numeric_array(matrix, f"{where}: matrix", TypeError)
    if matrix.ndim < 2 or 0 in matrix.shape[-2:]:
        raise ValueError(f"{where}: matrix must be a matrix M of shape (m, n) (out = M in + noise; a row vector "
                         f"is [[a, b]]), or a batch of them (..., m, n); got shape {matrix.shape}")
    m, n = matrix.shape[-2:]
    if not np.all(np.isfinite(matrix)):
        raise ValueError(f"{where}: matrix contains NaN or infinite values")
    cov = numeric_array(cov, f"{where}: cov", TypeError)
    if cov.ndim < 2 or cov.shape[-2:] != (m, m):
        raise ValueError(f"{where}: cov must be the {m}x{m} noise covariance of out (matrix is {m}x{n}, so out has "
                         f"dimension {m}), or a batch of them (..., {m}, {m}); got shape {cov.shape}")
    if not np.all(np.isfinite(cov)):
        raise ValueError(f"{where}: cov contains NaN or infinite values")
    asymmetry = np.max(np.abs(cov - np.swapaxes(cov, -1, -2)), initial=0.0)
    if asymmetry > SYMMETRY_TOLERANCE * np.max(np.abs(cov), initial=0.0):
        raise ValueError(f"{where}: cov must be symmetric, but |cov - cov^T| reaches {asymmetry:.3g}; "
                         "symmetrise it with (cov + cov^T) / 2")
    try:
        cholesky_factor(cov)
    except np.linalg.LinAlgError:
        smallest = float(np.min(np.linalg.eigvalsh(cov)))
        raise ValueError(f"{where}: cov must be positive definite (smallest eigenvalue {smallest:.3g}); a noise-free "
                         "or degenerate direction has no density: add a small variance to it") from None
    if offset is None:
        offset = np.zeros(m)
    else:
        offset = numeric_array(offset, f"{where}: offset", TypeError)
        if offset.ndim < 1 or offset.shape[-1] != m:
            raise ValueError(f"{where}: offset must be a vector c of length {m} (the dimension of out, the rows of "
                             f"matrix), or a batch of them (..., {m}); got shape {offset.shape}")
        if not np.all(np.isfinite(offset)):
            raise ValueError(f"{where}: offset contains NaN or infinite values")
    shapes = _attribute_batch_shapes(matrix, cov, offset)
    try:
        batch = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"{where}: the batch axes of matrix {shapes[0]}, cov {shapes[1]} and offset {shapes[2]} "
                         "do not broadcast; give one matrix per plate element or one for all") from None
    return matrix, cov, offset, batch


class MvLinearNode(FactorNode):
    """``out`` (m,) ~ N(M ``in`` + c, Σ), ``in`` (n,); attributes ``matrix`` M, ``cov`` Σ, ``offset`` c.

    The rules read the derived quantities below (computed once per node, on first use): the Cholesky
    factor of Σ, log|Σ|, Σ⁻¹, Σ⁻¹M, MᵀΣ⁻¹M and the largest eigenvalues of Σ⁻¹ and of MᵀΣ⁻¹M.
    """

    interfaces = ("out", "in")
    event_ndims = {"out": 1, "in": 1}

    def __init__(self, name, batch_shape=(), power=1.0, matrix=None, cov=None, offset=None, **attributes):
        matrix, cov, offset, batch = check_attributes(name, matrix, cov, offset)
        batch_shape = tuple(batch_shape)
        if not _broadcasts(batch, batch_shape) or np.broadcast_shapes(batch, batch_shape) != batch_shape:
            raise ValueError(f"node {name!r}: matrix, cov and offset have batch axes {batch}, which do not fit the "
                             f"node's batch shape {batch_shape}; give batch_shape= (or data) with those axes")
        super().__init__(name, batch_shape, power, matrix=matrix, cov=cov, offset=offset, **attributes)

    @property
    def out_dim(self) -> int:
        return self.matrix.shape[-2]

    @property
    def in_dim(self) -> int:
        return self.matrix.shape[-1]

    def check_event_shapes(self, event_shapes: dict) -> None:
        m, n = self.out_dim, self.in_dim
        for interface, size in (("in", n), ("out", m)):
            if tuple(event_shapes[interface]) != (size,):
                raise ValueError(f"matrix is {m}x{n}, so {interface!r} must be a vector of length {size}, but the "
                                 f"variable there has event shape {tuple(event_shapes[interface])}")

    # ---- derived from Σ and M, computed once (the rules run every sweep) ----
    @cached_property
    def cov_factor(self) -> np.ndarray:
        """Lower Cholesky factor L of Σ = L Lᵀ, ``batch + (m, m)``."""
        return cholesky_factor(self.cov)

    @cached_property
    def cov_log_det(self) -> np.ndarray:
        """log|Σ|, shape ``batch``."""
        return cholesky_log_det(self.cov_factor)

    @cached_property
    def noise_precision(self) -> np.ndarray:
        """Σ⁻¹, ``batch + (m, m)``, exactly symmetric."""
        return cholesky_inverse(self.cov_factor)

    @cached_property
    def weighted_matrix(self) -> np.ndarray:
        """Σ⁻¹ M, ``batch + (m, n)``."""
        return self.noise_precision @ self.matrix

    @cached_property
    def information(self) -> np.ndarray:
        """MᵀΣ⁻¹M = (L⁻¹M)ᵀ(L⁻¹M), ``batch + (n, n)``, exactly symmetric."""
        whitened = np.linalg.solve(self.cov_factor, self.matrix)
        information = np.swapaxes(whitened, -1, -2) @ whitened
        return 0.5 * (information + np.swapaxes(information, -1, -2))

    @cached_property
    def largest_noise_precision(self) -> np.ndarray:
        """The largest eigenvalue of Σ⁻¹, shape ``batch``: the scale of a message's precision towards ``out``."""
        return 1.0 / np.linalg.eigvalsh(self.cov)[..., 0]

    @cached_property
    def largest_information(self) -> np.ndarray:
        """The largest eigenvalue of MᵀΣ⁻¹M, shape ``batch``: the scale of a message's precision towards ``in``."""
        return np.linalg.eigvalsh(self.information)[..., -1]


def _broadcasts(small: tuple, large: tuple) -> bool:
    try:
        np.broadcast_shapes(small, large)
    except ValueError:
        return False
    return True


def _event_shape_of(value) -> tuple | None:
    """The event shape of what is connected to ``in``: a variable's, or the last axis of an array (None if a scalar)."""
    if isinstance(value, Variable):
        return value.event_shape
    shape = np.shape(value)
    return shape[-1:] if shape else None


def MvLinear(name, input, matrix, cov, offset=None, observed=None, batch_shape=None, power=1.0):
    """The m-vector ``name ~ N(matrix @ input + offset, cov)``.

    ``input`` is a vector variable of dimension n (or a known vector, or an array ``batch + (n,)``);
    ``matrix`` M an (m, n) array, ``cov`` Σ an (m, m) symmetric positive-definite noise covariance,
    ``offset`` c an (m,) vector (default 0); each may have leading batch axes (one per plate element).
    ``observed`` binds data of shape ``batch + (m,)``; ``power`` in (0, 1] tempers the factor.
    E.g. ``MvLinear("y", x, [[1.0, 0.0]], [[0.5]], observed=y)`` observes the first component of x.
    """
    try:
        matrix, cov, offset, attribute_batch = check_attributes(name, matrix, cov, offset)
    except TypeError as error:
        raise ModelTypeError(str(error)) from None
    except ValueError as error:
        raise ModelError(str(error)) from None
    m, n = matrix.shape[-2:]
    event = _event_shape_of(input)
    if event != (n,):
        what = f"variable {input.name!r}" if isinstance(input, Variable) else "the value given"
        raise ModelError(f"node {name!r}: matrix is {m}x{n}, so input must be a vector of length {n}, but {what} has "
                         f"event shape {event if event is not None else '() (a scalar)'}; give a matrix with one "
                         "column per component of input")
    if attribute_batch:
        batch_shape = attribute_batch if batch_shape is None else np.broadcast_shapes(attribute_batch,
                                                                                         tuple(batch_shape))
    return random_variable(MvLinearNode, name, {"in": input}, observed, batch_shape, power, event_shape=(m,),
                           matrix=matrix, cov=cov, offset=offset)


@average_energy(MvLinearNode)
def _mv_linear_energy(q_out: Distribution, q_in: Distribution, node):
    """``−E_q[log N(out | M in + c, Σ)]`` under independent q(out) q(in):

        ½ (m log 2π + log|Σ| + tr(Σ⁻¹ Cov[out]) + tr(MᵀΣ⁻¹M Cov[in]) + rᵀΣ⁻¹r),   r = E[out] − M E[in] − c,

    i.e. ½ tr(Σ⁻¹ E[(out − M in − c)(…)ᵀ]) split into the spread of each marginal and the residual of
    the means (no cross term: the marginals are independent). Point masses have zero spread.
    """
    mean_out, mean_in = q_out.mean, q_in.mean
    spread_out = q_out.second_moment - outer(mean_out, mean_out)
    spread_in = q_in.second_moment - outer(mean_in, mean_in)
    residual = mean_out - matvec(node.matrix, mean_in) - node.offset
    quadratic = (np.einsum("...ij,...ji->...", node.noise_precision, spread_out)
                 + np.einsum("...ij,...ji->...", node.information, spread_in)
                 + np.einsum("...i,...i->...", residual, matvec(node.noise_precision, residual)))
    return 0.5 * (node.out_dim * LOG_2PI + node.cov_log_det + quadratic)
