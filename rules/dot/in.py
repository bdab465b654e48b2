"""Message out of the inner-product node towards ``in`` (out = xᵀ in, x known).

As a function of ``in`` the message ``∫ δ(out − xᵀ in) N(out | m, v) dout =
N(xᵀ in | m, v)`` is flat orthogonally to x: a Gaussian likelihood of rank
one, ``exp(κ) h(in) exp(ξᵀ in − ½ inᵀ W in)`` with

    W = x xᵀ / v,   ξ = x m / v,   κ = d/2 log 2π − ½ log(2πv) − m² / (2v)

(log h = −d/2 log 2π). For d = 1 it is the proper N(in | m/x, v/x²) / |x|.
"""
import numpy as np

from fgraph.families import GaussianLikelihood, MultivariateNormal, PointMass, UnivariateNormal
from fgraph.families.mvnormal import LOG_2PI
from fgraph.registry import rule
from fgraph.nodes.dot import DotProduct


@rule(DotProduct, "in")
def sum_product(m_out: UnivariateNormal, q_x: PointMass) -> MultivariateNormal:
    """``N(xᵀ in | m, v)`` as a function of ``in`` (a GaussianLikelihood unless d = 1)."""
    x = q_x.value
    mean, var = np.asarray(m_out.mean)[..., None], np.asarray(m_out.var)[..., None]
    precision = x[..., :, None] * x[..., None, :] / var[..., None]
    weighted_mean = x * mean / var
    dimension = x.shape[-1]
    coefficient = 0.5 * dimension * LOG_2PI - 0.5 * np.log(2.0 * np.pi * var[..., 0]) - mean[..., 0] ** 2 / (2.0 * var[..., 0])
    if dimension > 1:  # rank one: flat orthogonally to x
        return GaussianLikelihood(weighted_mean, precision, coefficient)
    return MultivariateNormal.from_coefficient((weighted_mean, -0.5 * precision), coefficient)
