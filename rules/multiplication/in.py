"""Messages out of the multiplication node towards ``in`` (backwards through out = a in, or out = A in).

As a function of ``in`` the message ∫ δ(out - a in) m(out) dout = m(a in) is
a likelihood, not a density: it integrates to 1/|a| (1/|det A| for a square
invertible A), which the log-scale carries. Scalar (``Multiplication``) and
vector (``MvMultiplication``) nodes share these rules; the family of the
incoming message picks the version.
"""
import numpy as np

from fgraph.families import GaussianLikelihood, MultivariateNormal, PointMass, UnivariateNormal
from fgraph.families.linalg import matvec
from fgraph.families.mvnormal import LOG_2PI
from fgraph.families.normal import NormalMeanVariance
from fgraph.registry import rule
from fgraph.nodes.multiplication import Multiplication


@rule(Multiplication, "in")
def backward(m_out: UnivariateNormal, node) -> UnivariateNormal:
    """m(a in) = N(a in | μ, v) = N(in | μ/a, v/a²) / |a|: log-scale -log|a|."""
    gain = node.gain
    return NormalMeanVariance(m_out.mean / gain, m_out.var / gain**2, log_scale=-np.log(np.abs(gain)), check=False)


@rule(Multiplication, "in")
def backward_multivariate(m_out: MultivariateNormal, node) -> MultivariateNormal:
    """m(A in) = N(A in | μ, V) as a function of ``in`` (A is m x n).

    With W = V^-1 the exponent is −½ inᵀ P in + ξᵀ in − ½ μᵀ W μ, where
    P = Aᵀ W A and ξ = Aᵀ W μ. In the normal family's form
    ``exp(κ) h(in) exp(ξᵀ in − ½ inᵀ P in)`` (log h = −n/2 log 2π) the
    coefficient is

        κ = (n − m)/2 log 2π − ½ log|V| − ½ μᵀ W μ.

    For A of full column rank, P is positive definite and the message is a
    scaled normal N(in | P^-1 ξ, P^-1) with log-scale κ + A(ξ, P) (−log|det A|
    for a square invertible A). Otherwise it is flat along the null space of
    A: a :class:`GaussianLikelihood`, which becomes proper once multiplied
    with the other messages at ``in``.
    """
    gain = node.gain
    rows, columns = gain.shape
    precision = gain.T @ m_out.precision @ gain
    precision = 0.5 * (precision + np.swapaxes(precision, -1, -2))
    weighted_mean = matvec(gain.T, m_out.weighted_mean)
    mean = m_out.mean
    coefficient = (
        0.5 * (columns - rows) * LOG_2PI - 0.5 * m_out.log_det_cov()
        - 0.5 * np.sum(mean * matvec(m_out.precision, mean), axis=-1)
    )
    if np.linalg.matrix_rank(gain) < columns:  # flat along the null space of A
        return GaussianLikelihood(weighted_mean, precision, coefficient)
    return MultivariateNormal.from_coefficient((weighted_mean, -0.5 * precision), coefficient)


@rule(Multiplication, "in")
def observed_out(q_out: PointMass, node) -> PointMass:
    """δ(y - a in) = δ(in - y/a) / |a| for an observed ``out = y`` (δ(in - A^-1 y) / |det A| for square A)."""
    gain = node.gain
    if gain.ndim == 0:
        return PointMass(q_out.value / gain, 0, log_scale=-np.log(np.abs(gain)))
    rows, columns = gain.shape
    if rows != columns or np.linalg.matrix_rank(gain) < columns:
        raise ValueError(
            f"node {node.name!r}: with out observed, in = A^-1 y needs a square invertible gain, "
            f"got a {rows}x{columns} gain of rank {np.linalg.matrix_rank(gain)}"
        )
    value = np.linalg.solve(gain, q_out.value[..., None])[..., 0]
    return PointMass(value, 1, log_scale=-np.linalg.slogdet(gain)[1])
