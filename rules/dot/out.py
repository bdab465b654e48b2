"""Message out of the inner-product node towards ``out`` (out = xᵀ in, x known)."""
import numpy as np

from fgraph.families import MultivariateNormal, PointMass, UnivariateNormal
from fgraph.families.linalg import matvec
from fgraph.families.normal import NormalMeanVariance
from fgraph.registry import rule
from fgraph.nodes.dot import DotProduct


@rule(DotProduct, "out")
def sum_product(m_in: MultivariateNormal, q_x: PointMass) -> UnivariateNormal:
    """∫ δ(out − xᵀ in) N(in | μ, Σ) din = N(out | xᵀμ, xᵀΣx): a push-forward, log-scale 0."""
    x = q_x.value
    return NormalMeanVariance(np.sum(x * m_in.mean, axis=-1), np.sum(x * matvec(m_in.cov, x), axis=-1), check=False)


@rule(DotProduct, "out")
def constant_in(q_in: PointMass, q_x: PointMass) -> PointMass:
    """A known ``in``: out is the number xᵀ in."""
    return PointMass(np.sum(q_x.value * q_in.value, axis=-1), 0)
