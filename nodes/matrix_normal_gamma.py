"""Matrix-normal–gamma prior node: f(out, mean, column_covariance, shape, rate) = MNG(out | M, V, α, β).

``out`` is a pair ``(A, λ)``: a matrix ``A`` (``h × p``, event rank 2 — the
variable's event shape is that of A) and row precisions ``λ`` (``h``),

    p(A, λ) = Π_i Gamma(λ_i | α_i, β_i) N(a_i | m_i, V / λ_i),

the conjugate prior of the parameters of :class:`~fgraph.nodes.linear_experts.LinearExperts`
(the experts of a conditional mixture network, Heins et al., eq. 4 with
``M = 0``, ``V = v0 I``, ``α = a0``, ``β = b0``). Its parameters are constants:
``mean`` (``batch + (h, p)``), ``column_covariance`` (``batch + (p, p)``, SPD,
or a positive number ``v0`` for ``v0 I``), ``shape`` and ``rate`` (``batch + (h,)``,
positive, or one number for every row).
"""
from __future__ import annotations

import numpy as np

from fgraph.errors import ModelError
from fgraph.families import Distribution, PointMass
from fgraph.families.matrix_normal_gamma import MatrixNormalGamma as MatrixNormalGammaFamily
from fgraph.model import Variable, random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy
from fgraph.support import POSITIVE, POSITIVE_DEFINITE

__all__ = ["MatrixNormalGamma", "MatrixNormalGammaNode"]


class MatrixNormalGammaNode(FactorNode):
    interfaces = ("out", "mean", "column_covariance", "shape", "rate")
    event_ndims = {"out": 2, "mean": 2, "column_covariance": 2, "shape": 1, "rate": 1}
    support = {"column_covariance": POSITIVE_DEFINITE, "shape": POSITIVE, "rate": POSITIVE}
    default_factorization = "bp"

    @classmethod
    def out_event_shape(cls, parameters) -> tuple:
        """``out`` has the event shape ``(h, p)`` of ``mean``."""
        return tuple(np.shape(parameters["mean"])[-2:])


def MatrixNormalGamma(name, mean, column_covariance, shape, rate, batch_shape=None):
    """Latent ``(A, λ)`` with ``λ_i ~ Gamma(shape_i, rate_i)`` and rows ``a_i | λ_i ~ N(mean_i, V / λ_i)``.

    Parameters
    ----------
    mean : array ``batch + (h, p)``
    column_covariance : array ``batch + (p, p)`` (SPD) or a positive number v0 (V = v0 I)
    shape, rate : arrays ``batch + (h,)`` or numbers (one for every row), positive
    batch_shape : tuple, optional — e.g. ``(K, 1)``: one pair per expert of a
        :func:`~fgraph.nodes.linear_experts.LinearExperts` node over a plate (the unit axis is the plate's)

    The variable's event shape is ``(h, p)``; its marginal is a
    :class:`fgraph.families.matrix_normal_gamma.MatrixNormalGamma`.
    """
    for interface, value in (("mean", mean), ("column_covariance", column_covariance), ("shape", shape),
                             ("rate", rate)):
        if isinstance(value, Variable):
            raise ModelError(f"MatrixNormalGamma {name!r}: {interface} must be a constant, got variable {value.name!r}")
    mean = np.asarray(mean, dtype=float)
    if mean.ndim < 2:
        raise ModelError(f"MatrixNormalGamma {name!r}: mean must have shape (..., h, p), got shape {mean.shape}")
    rows, columns = mean.shape[-2:]
    column_covariance = np.asarray(column_covariance, dtype=float)
    if column_covariance.ndim == 0:
        if not column_covariance > 0.0:
            raise ModelError(
                f"MatrixNormalGamma {name!r}: column_covariance must be positive, got {column_covariance!r}")
        column_covariance = column_covariance * np.eye(columns)
    if column_covariance.shape[-2:] != (columns, columns):
        raise ModelError(
            f"MatrixNormalGamma {name!r}: column_covariance has shape {column_covariance.shape}; with p = {columns} "
            f"columns of mean it must end in ({columns}, {columns})"
        )
    shape = np.asarray(shape, dtype=float)
    rate = np.asarray(rate, dtype=float)
    shape = shape * np.ones(rows) if shape.ndim == 0 else shape
    rate = rate * np.ones(rows) if rate.ndim == 0 else rate
    for interface, value in (("shape", shape), ("rate", rate)):
        if value.shape[-1] != rows:
            raise ModelError(
                f"MatrixNormalGamma {name!r}: {interface} has shape {value.shape}; it must end in h = {rows} "
                "(one per row of mean) or be one number"
            )
    parameters = {"mean": mean, "column_covariance": column_covariance, "shape": shape, "rate": rate}
    return random_variable(MatrixNormalGammaNode, name, parameters, None, batch_shape, event_shape=(rows, columns))


@average_energy(MatrixNormalGammaNode)
def _matrix_normal_gamma_energy(q_out: Distribution, q_mean: PointMass, q_column_covariance: PointMass,
                                q_shape: PointMass, q_rate: PointMass):
    """``−E_q[log MNG(A, λ | M, V, α, β)] = −(⟨η, E_q[T]⟩ − A(η) + log h)``, shape ``batch``.

    η are the prior's natural parameters, ``E_q[T]`` the expected statistics of
    q(A, λ) (``Σ_i E[λ_i a_i a_iᵀ]``, ``E[λ_i a_i]``, ``E[λ_i]``, ``E[log λ_i]``).
    """
    def prior_terms():  # kept on the (constant) parameters: an inverse and a factorisation of V per element
        prior = MatrixNormalGammaFamily(q_mean.value, q_column_covariance.value, q_shape.value, q_rate.value,
                                        check=False)
        eta = prior.natural_parameters()
        return eta, prior.log_partition() - MatrixNormalGammaFamily.log_base_measure_of(eta)

    eta, normaliser = q_column_covariance.derived_with("_matrix_normal_gamma_prior", (q_mean, q_shape, q_rate),
                                                       prior_terms)
    return -(MatrixNormalGammaFamily.inner(eta, q_out.expected_statistics()) - normaliser)
