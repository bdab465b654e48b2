"""Message out of the inner-product node towards ``in`` (out = xᵀ in, x known).

As a function of ``in`` the message ``∫ δ(out − xᵀ in) N(out | m, v) dout =
N(xᵀ in | m, v)`` is flat orthogonally to x: a Gaussian likelihood of rank
one, ``exp(κ) h(in) exp(ξᵀ in − ½ inᵀ W in)`` with

    W = x xᵀ / v,   ξ = x m / v,   κ = d/2 log 2π − ½ log(2πv) − m² / (2v)

(log h = −d/2 log 2π). For d = 1 it is the proper N(in | m/x, v/x²) / |x|.

Over a plate of N rows (d ≥ 2) the shared ``in`` reads only the sums ``Σ ξ_n = Xᵀ(m/v)`` and
``Σ W_n = Xᵀ diag(1/v) X``, two matrix products; the N d×d precisions are formed only if something
asks for an element (:class:`~fgraph.families.gaussian_plate.GaussianLikelihoodOnDemand`).
"""
import numpy as np

from fgraph.families import GaussianLikelihood, MultivariateNormal, PointMass, UnivariateNormal
from fgraph.families.gaussian_plate import GaussianLikelihoodOnDemand
from fgraph.families.mvnormal import LOG_2PI
from fgraph.registry import rule
from fgraph.nodes.dot import DotProduct


@rule(DotProduct, "in")
def sum_product(m_out: UnivariateNormal, q_x: PointMass, node) -> MultivariateNormal:
    """``N(xᵀ in | m, v)`` as a function of ``in`` (a GaussianLikelihood unless d = 1)."""
    x = q_x.value
    mean, var = np.asarray(m_out.mean), np.asarray(m_out.var)
    dimension = x.shape[-1]
    coefficient = 0.5 * dimension * LOG_2PI - 0.5 * np.log(2.0 * np.pi * var) - mean**2 / (2.0 * var)
    batch = np.broadcast_shapes(x.shape[:-1], mean.shape, var.shape)
    if dimension > 1 and len(batch) > node.copy_ndim:  # a plate of rank-one likelihoods: their sums first
        return _plate_of_likelihoods(x, mean, var, batch, node.copy_ndim, coefficient)
    mean, var = mean[..., None], var[..., None]
    precision = x[..., :, None] * x[..., None, :] / var[..., None]
    weighted_mean = x * mean / var
    if dimension > 1:  # rank one: flat orthogonally to x
        return GaussianLikelihood(weighted_mean, precision, coefficient)
    return MultivariateNormal.from_coefficient((weighted_mean, -0.5 * precision), coefficient)


def _plate_of_likelihoods(x, mean, var, batch: tuple, keep: int, coefficient) -> GaussianLikelihoodOnDemand:
    """The N rank-one likelihoods of a plate given by ``(Xᵀ(m/v), Xᵀ diag(1/v) X)``, summed over every batch
    axis after the ``keep`` copy axes; x of shape ``batch + (d,)`` up to broadcasting, m and v ``batch``."""
    dimension = x.shape[-1]
    rows = np.broadcast_to(x, batch + (dimension,)).reshape(batch[:keep] + (-1, dimension))
    precision = np.broadcast_to(1.0 / var, batch).reshape(batch[:keep] + (-1,))
    weighted = np.broadcast_to(mean / var, batch).reshape(batch[:keep] + (-1,))
    totals = (np.einsum("...nd,...n->...d", rows, weighted),
              np.matmul(np.swapaxes(rows * precision[..., None], -1, -2), rows))

    def elements():
        full = np.broadcast_to(x, batch + (dimension,))
        inverse = np.broadcast_to(1.0 / var, batch)[..., None]
        return full * np.broadcast_to(mean, batch)[..., None] * inverse, \
            full[..., :, None] * full[..., None, :] * inverse[..., None]

    return GaussianLikelihoodOnDemand(elements, batch, totals, keep, log_scale=np.broadcast_to(coefficient, batch))
