"""Messages out of MvNormalMeanPrecision towards ``precision`` (conjugate: the precision has a Wishart prior)."""
import numpy as np

from fgraph.families import Distribution, Wishart
from fgraph.families.linalg import cholesky_inverse, cholesky_log_det
from fgraph.families.mvnormal import LOG_2PI
from fgraph.families.wishart import LOG_2, log_multivariate_gamma
from fgraph.registry import rule
from fgraph.nodes.mvnormal import MvNormalMeanPrecision, expected_outer_difference


@rule(MvNormalMeanPrecision, "precision")
def mean_field(q_out: Distribution, q_mean: Distribution) -> Wishart:
    """exp E_q[log N(out | mean, Λ^-1)] = (2π)^(-d/2) |Λ|^(1/2) exp(-tr(Λ S)/2) ∝ Wishart(Λ | d + 2, S^-1).

    ``S = E[(out - mean)(out - mean)^T]`` (shape ``batch + (d, d)``). The
    log-scale is the integral of that function over Λ,
    ``-d/2 log 2π + (d + 2) d/2 log 2 - (d + 2)/2 log|S| + log Γ_d((d + 2)/2)``,
    so that with clamped ``out`` and ``mean`` (point masses) the message is the
    exact sum-product message. ``S`` must be positive definite: with point
    masses on both ``out`` and ``mean`` it has rank one, which only a 1 x 1
    precision allows (the function of Λ is then not integrable for d > 1 and no
    Wishart represents it).
    """
    squared = expected_outer_difference(q_out, q_mean)
    dimension = squared.shape[-1]
    try:
        factor = np.linalg.cholesky(squared)
    except np.linalg.LinAlgError:
        raise ValueError(
            "MvNormalMeanPrecision -> precision: E[(out - mean)(out - mean)^T] is not positive definite "
            f"(rank-one when out and mean are both point masses in {dimension} > 1 dimensions); the message "
            "|Λ|^(1/2) exp(-tr(Λ S)/2) is then not a proper Wishart. Give out or mean a Gaussian marginal."
        ) from None
    df = dimension + 2.0
    log_scale = (
        -0.5 * dimension * LOG_2PI
        + 0.5 * df * dimension * LOG_2
        - 0.5 * df * cholesky_log_det(factor)
        + log_multivariate_gamma(0.5 * df, dimension)
    )
    batch = squared.shape[:-2]
    return Wishart(np.full(batch, df), cholesky_inverse(factor), log_scale=log_scale, check=False)
