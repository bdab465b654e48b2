"""Messages out of the multiplication node towards ``out`` (out = a in, or out = A in).

The push-forward of a normal density through a linear map is normal and
integrates to one, so these messages have log-scale 0. Scalar
(``Multiplication``) and vector (``MvMultiplication``) nodes share these rules;
the family of the incoming message picks the version.
"""
import numpy as np

from fgraph.families import MultivariateNormal, PointMass, UnivariateNormal
from fgraph.families.linalg import matvec
from fgraph.families.mvnormal import MvNormalMeanCovariance
from fgraph.families.normal import NormalMeanVariance
from fgraph.registry import rule
from fgraph.nodes.multiplication import Multiplication


@rule(Multiplication, "out")
def forward(m_in: UnivariateNormal, node) -> UnivariateNormal:
    """∫ δ(out - a in) m(in) din = N(out | a μ, a² v)."""
    gain = node.gain
    return NormalMeanVariance(gain * m_in.mean, gain**2 * m_in.var, check=False)


@rule(Multiplication, "out")
def forward_multivariate(m_in: MultivariateNormal, node) -> MultivariateNormal:
    """∫ δ(out - A in) m(in) din = N(out | A μ, A Σ A^T); needs A (m x n) of full row rank m."""
    gain = node.gain
    rows = gain.shape[0]
    if np.linalg.matrix_rank(gain) < rows:
        raise ValueError(
            f"node {node.name!r}: the {gain.shape[0]}x{gain.shape[1]} gain has rank {np.linalg.matrix_rank(gain)} "
            f"< {rows} rows, so out = A in is confined to a subspace and the message to out is a degenerate "
            "Gaussian (A Σ A^T is singular), which no normal family represents"
        )
    covariance = gain @ m_in.cov @ gain.T
    covariance = 0.5 * (covariance + np.swapaxes(covariance, -1, -2))
    return MvNormalMeanCovariance(matvec(gain, m_in.mean), covariance, check=False)


@rule(Multiplication, "out")
def constant_in(q_in: PointMass, node) -> PointMass:
    """δ(out - a c) (or δ(out - A c)) for a clamped ``in = c``."""
    gain = node.gain
    value = gain * q_in.value if gain.ndim == 0 else matvec(gain, q_in.value)
    return PointMass(value, q_in.event_ndim)
