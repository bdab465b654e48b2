"""Messages out of NormalMeanPrecision towards ``precision``."""
from fgraph.families import Distribution
from fgraph.families.gamma import Gamma
from fgraph.families.mvnormal import MultivariateNormal
from fgraph.registry import rule
from nodes.normal import NormalMeanPrecision, expected_squared_difference


@rule(NormalMeanPrecision, "precision")
def mean_field(q_out: Distribution, q_mean: Distribution) -> Gamma:
    """exp E_q[log N(out | mean, 1/τ)] ∝ Gamma(τ | 3/2, E[(out - mean)²] / 2)."""
    return Gamma(1.5, 0.5 * expected_squared_difference(q_out, q_mean), check=False)


@rule(NormalMeanPrecision, "precision")
def structured(q_out_mean: MultivariateNormal) -> Gamma:
    """Gamma(τ | 3/2, E[(out - mean)²] / 2) under a joint Gaussian q(out, mean)."""
    m, s = q_out_mean.mean, q_out_mean.cov
    squared = s[..., 0, 0] - 2.0 * s[..., 0, 1] + s[..., 1, 1] + (m[..., 0] - m[..., 1]) ** 2
    return Gamma(1.5, 0.5 * squared, check=False)
