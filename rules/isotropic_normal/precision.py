"""Messages out of IsotropicNormal towards ``precision``: a Gamma in τ.

exp E_q[log N(out | mean, τ⁻¹ I_d)] = (2π)^(−d/2) τ^(d/2) exp(−τ S/2) ∝ Gamma(τ | d/2 + 1, S/2),
S = E[‖out − mean‖²].
"""
import numpy as np
from fgraph.families.special import gammaln

from fgraph.families import Distribution, PointMass
from fgraph.families.gamma import Gamma
from fgraph.families.mvnormal import LOG_2PI
from fgraph.registry import rule
from fgraph.nodes.isotropic_normal import IsotropicNormalNode, expected_squared_distance


@rule(IsotropicNormalNode, "precision")
def mean_field(q_out: Distribution, q_mean: Distribution) -> Gamma:
    """Gamma(τ | d/2 + 1, S/2) with S = E[‖out − mean‖²] under independent q(out) q(mean) (log-scale 0: a
    variational message is defined up to a constant)."""
    dimension = q_out.event_shape[-1]
    squared = expected_squared_distance(q_out, q_mean)
    return Gamma(np.full(np.shape(squared), 0.5 * dimension + 1.0), 0.5 * squared, check=False)


@rule(IsotropicNormalNode, "precision")
def clamped(q_out: PointMass, q_mean: PointMass) -> Gamma:
    """Known out and mean: the factor itself, Gamma(τ | d/2 + 1, S/2) with log-scale
    ``log ∫ (2π)^(−d/2) τ^(d/2) e^(−τS/2) dτ = −(d/2) log 2π + log Γ(d/2 + 1) − (d/2 + 1) log(S/2)``
    (S = ‖out − mean‖²; S = 0 has no integral: the log-scale is then +inf, which the engine reports)."""
    dimension = q_out.event_shape[-1]
    squared = expected_squared_distance(q_out, q_mean)
    shape = 0.5 * dimension + 1.0
    with np.errstate(divide="ignore"):
        log_scale = -0.5 * dimension * LOG_2PI + gammaln(shape) - shape * np.log(0.5 * squared)
    return Gamma(np.full(np.shape(squared), shape), 0.5 * squared, log_scale=log_scale, check=False)
