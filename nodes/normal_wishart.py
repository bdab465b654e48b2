"""Normal–Wishart prior node: f(out, mean, precision_scale, scale, df) = N(μ | m, (β Λ)⁻¹) W(Λ | W, ν).

``out`` is a pair ``(μ, Λ)`` — a mean vector μ (``d``, the variable's event shape) and a precision
matrix Λ (``d × d``) — with the Gaussian–Wishart prior of the components of a Bayesian Gaussian
mixture (Bishop 2006, eq. 10.40): ``μ | Λ ~ N(m, (β Λ)⁻¹)``, ``Λ ~ W(W, ν)``. Its parameters are
constants: ``mean`` m (``batch + (d,)``), ``precision_scale`` β > 0 (``batch``), ``scale`` W
(``batch + (d, d)``, symmetric positive definite; ``E[Λ] = ν W``) and ``df`` ν > d − 1 (``batch``).
The variable's marginal is a :class:`fgraph.families.normal_wishart.NormalWishart`: one variable for
the pair keeps the dependence of μ on Λ (an ``MvNormal`` mean and a ``Wishart`` precision as two
variables would be mean field, q(μ) q(Λ), which is a different posterior). Its partner is the
parameters interface of :class:`~fgraph.nodes.gaussian_mixture.GaussianMixtureNode`.
"""
from __future__ import annotations

import numpy as np

from fgraph.errors import ModelError
from fgraph.families import Distribution, PointMass
from fgraph.families.normal_wishart import NormalWishart as NormalWishartFamily
from fgraph.model import PerCopy, Variable, random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy
from fgraph.support import POSITIVE, POSITIVE_DEFINITE

__all__ = ["NormalWishart", "NormalWishartNode"]


class NormalWishartNode(FactorNode):
    interfaces = ("out", "mean", "precision_scale", "scale", "df")
    event_ndims = {"out": 1, "mean": 1, "precision_scale": 0, "scale": 2, "df": 0}
    support = {"precision_scale": POSITIVE, "scale": POSITIVE_DEFINITE, "df": POSITIVE}
    default_factorization = "bp"

    @classmethod
    def out_event_shape(cls, parameters) -> tuple:
        """``out`` has the event shape ``(d,)`` of ``mean`` (the shape of μ)."""
        return tuple(np.shape(parameters["mean"])[-1:])


def NormalWishart(name, mean, precision_scale, scale, df, batch_shape=None):
    """Latent ``(μ, Λ)`` with ``Λ ~ Wishart(df, scale)`` (mean ``df · scale``) and
    ``μ | Λ ~ N(mean, (precision_scale Λ)⁻¹)``.

    Parameters
    ----------
    mean : array ``batch + (d,)``
    precision_scale : positive number or array ``batch`` (β)
    scale : array ``batch + (d, d)``, symmetric positive definite (W)
    df : number or array ``batch``, greater than d − 1 (ν)
    batch_shape : tuple, optional — e.g. ``(K, 1)``: one pair per component of a
        :func:`~fgraph.nodes.gaussian_mixture.GaussianMixture` over a plate (the unit axis is the plate's)

    A singular ``scale`` or ``df <= d − 1`` is a :class:`~fgraph.errors.ModelError` naming the parameter.
    """
    for interface, value in (("mean", mean), ("precision_scale", precision_scale), ("scale", scale), ("df", df)):
        if isinstance(value, Variable):
            raise ModelError(f"NormalWishart {name!r}: {interface} must be a constant, got variable {value.name!r}")
    def value_of(value):  # the array of a value, per copy or shared
        return np.asarray(value.value if isinstance(value, PerCopy) else value, dtype=float)

    mean_array, scale_array, df_array = value_of(mean), value_of(scale), value_of(df)
    if mean_array.ndim < 1:
        raise ModelError(f"NormalWishart {name!r}: mean must be a vector (shape (..., d)), got a scalar")
    dimension = mean_array.shape[-1]
    if scale_array.ndim < 2 or scale_array.shape[-2:] != (dimension, dimension):
        raise ModelError(f"NormalWishart {name!r}: scale has shape {scale_array.shape}; with d = {dimension} it must "
                         f"end in ({dimension}, {dimension})")
    if np.any(~np.isfinite(df_array)) or np.any(df_array <= dimension - 1):
        raise ModelError(f"NormalWishart {name!r}: df must be greater than d - 1 = {dimension - 1} for "
                         f"{dimension}x{dimension} precisions, got {df_array if df_array.ndim else float(df_array)!r}")
    parameters = {"mean": mean, "precision_scale": precision_scale, "scale": scale, "df": df}
    return random_variable(NormalWishartNode, name, parameters, None, batch_shape, event_shape=(dimension,))


@average_energy(NormalWishartNode)
def _normal_wishart_energy(q_out: Distribution, q_mean: PointMass, q_precision_scale: PointMass, q_scale: PointMass,
                           q_df: PointMass):
    """``−E_q[log NW(μ, Λ | m, β, W, ν)] = −(⟨η, E_q[T]⟩ − A(η) + log h)``, shape ``batch``.

    η are the prior's natural parameters, ``E_q[T]`` the expected statistics of q(μ, Λ)
    (``E[Λ]``, ``E[Λ μ]``, ``E[μᵀ Λ μ]``, ``E[log |Λ|]``).
    """
    def prior_terms():  # kept on the (constant) parameters
        prior = NormalWishartFamily(q_mean.value, q_precision_scale.value, q_scale.value, q_df.value, check=False)
        eta = prior.natural_parameters()
        return eta, prior.log_partition() - NormalWishartFamily.log_base_measure_of(eta)

    eta, normaliser = q_scale.derived_with("_normal_wishart_prior", (q_mean, q_precision_scale, q_df), prior_terms)
    return -(NormalWishartFamily.inner(eta, q_out.expected_statistics()) - normaliser)
