"""Messages out of the multiplication node towards ``in`` (backwards through out = a in, or out = A in).

As a function of ``in`` the message ∫ δ(out - a in) m(out) dout = m(a in) is
a likelihood, not a density: it integrates to 1/|a| (1/|det A| for a square
invertible A), which the log-scale carries. Scalar (``Multiplication``) and
vector (``MvMultiplication``) nodes share these rules; the family of the
incoming message picks the version.
"""
import numpy as np

from fgraph.families import MultivariateNormal, PointMass, UnivariateNormal
from fgraph.families.linalg import cholesky, cholesky_log_det, cholesky_solve_vector, matvec
from fgraph.families.mvnormal import LOG_2PI, MvNormalWeightedMeanPrecision
from fgraph.families.normal import NormalMeanVariance
from fgraph.registry import rule
from nodes.multiplication import Multiplication


@rule(Multiplication, "in")
def backward(m_out: UnivariateNormal, node) -> UnivariateNormal:
    """m(a in) = N(a in | μ, v) = N(in | μ/a, v/a²) / |a|: log-scale -log|a|."""
    gain = node.gain
    return NormalMeanVariance(m_out.mean / gain, m_out.var / gain**2, log_scale=-np.log(np.abs(gain)), check=False)


@rule(Multiplication, "in")
def backward_multivariate(m_out: MultivariateNormal, node) -> MultivariateNormal:
    """m(A in) = N(A in | μ, V) as a function of ``in``, for A (m x n) of full column rank n.

    With W = V^-1, the exponent is -½ in^T P in + ξ^T in - ½ μ^T W μ, where
    P = A^T W A (SPD iff A has full column rank) and ξ = A^T W μ; the message is
    N(in | P^-1 ξ, P^-1) times its integral over ``in``,

        log-scale = (n - m)/2 log 2π - ½ log|V| - ½ log|P| - ½ r^T W r,

    with r = μ - A P^-1 ξ the generalised least-squares residual. For a square
    invertible A, r = 0 and |P| = |A|²/|V|: the log-scale is -log|det A|.
    """
    gain = node.gain
    rows, columns = gain.shape
    rank = np.linalg.matrix_rank(gain)
    if rank < columns:
        raise ValueError(
            f"node {node.name!r}: the {rows}x{columns} gain has rank {rank} < {columns} columns, so the message "
            "m(A in) to in is flat along the null space of A (A^T W A is singular): an improper Gaussian, "
            "which no normal family represents. Give in a gain of full column rank."
        )
    precision = gain.T @ m_out.precision @ gain
    precision = 0.5 * (precision + np.swapaxes(precision, -1, -2))
    weighted_mean = matvec(gain.T, m_out.weighted_mean)
    factor = cholesky(precision, "A^T W A")
    residual = m_out.mean - matvec(gain, cholesky_solve_vector(factor, weighted_mean))
    log_scale = (
        0.5 * (columns - rows) * LOG_2PI
        - 0.5 * m_out.log_det_cov()
        - 0.5 * cholesky_log_det(factor)
        - 0.5 * np.sum(residual * matvec(m_out.precision, residual), axis=-1)
    )
    return MvNormalWeightedMeanPrecision(weighted_mean, precision, log_scale=log_scale, check=False)


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
