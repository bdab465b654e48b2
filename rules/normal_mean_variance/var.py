"""Messages out of NormalMeanVariance towards ``var``: an inverse-gamma likelihood of the variance.

As a function of ``v``, ``exp E_q[log N(out | mean, v)] = (2π)^(-1/2) v^(-1/2) exp(-S / (2v))`` with
``S = E[(out - mean)²]``: the form ``exp(κ) v^(-α-1) exp(-β/v)`` of the InverseGamma family with
``α = -1/2``, ``β = S/2``, ``κ = -½ log 2π``. No proper inverse gamma has ``α < 0`` (the function
is not integrable in v), so the message is an
:class:`~fgraph.families.inverse_gamma.InverseGammaLikelihood`; with an InverseGamma(α₀, β₀) prior
the marginal is InverseGamma(α₀ + ½, β₀ + S/2) (ReactiveMP writes the same message as the improper
``GammaInverse(-1/2, S/2)``).
"""

from fgraph.families import Distribution, PointMass
from fgraph.families.inverse_gamma import InverseGamma, InverseGammaLikelihood
from fgraph.families.mvnormal import MultivariateNormal
from fgraph.families.normal import LOG_2PI
from fgraph.plates import EmpiricalMoments
from fgraph.registry import plate_rule, rule
from fgraph.nodes.normal import NormalMeanVariance, expected_squared_difference


@rule(NormalMeanVariance, "var")
def mean_field(q_out: Distribution, q_mean: Distribution) -> InverseGamma:
    """exp E_q[log N(out | mean, v)] = exp(-½ log 2π) v^(-1/2) exp(-(S/2) / v), ``S = E[(out - mean)²]``.

    Kept with its coefficient ``κ = -½ log 2π``, the message is exactly
    ``exp E_q log f``; for a clamped ``out`` and ``mean`` that is the factor
    itself, the exact sum-product message (evidence included).
    """
    squared = expected_squared_difference(q_out, q_mean)
    return InverseGammaLikelihood(-0.5, 0.5 * squared, log_scale=-0.5 * LOG_2PI)


@rule(NormalMeanVariance, "var")
def structured(q_out_mean: MultivariateNormal) -> InverseGamma:
    """v^(-1/2) exp(-(S/2) / v) up to a constant under a joint Gaussian q(out, mean).

    ``S = E[(out - mean)²] = Σ_oo - 2 Σ_om + Σ_mm + (μ_o - μ_m)²``.
    """
    m, s = q_out_mean.mean, q_out_mean.cov
    squared = s[..., 0, 0] - 2.0 * s[..., 0, 1] + s[..., 1, 1] + (m[..., 0] - m[..., 1]) ** 2
    return InverseGammaLikelihood(-0.5, 0.5 * squared, log_scale=-0.5 * LOG_2PI)


@plate_rule(NormalMeanVariance, "var")
def observed_plate(q_out: EmpiricalMoments, q_mean: PointMass) -> InverseGamma:
    """Π_i N(y_i | m, v) over N observations = (2π)^(-N/2) v^(-N/2) exp(-(S/2) / v), ``S = Σ_i (y_i - m)²``.

    ``S = N (s² + (ȳ - m)²)`` with ``s²`` the empirical variance: an inverse
    gamma in v with ``α = N/2 - 1``, ``β = S/2`` and coefficient ``-N/2 log 2π``
    (proper from N = 3 on, a likelihood below).
    """
    count = q_out.count
    squared = count * (q_out.var + (q_out.mean - q_mean.value) ** 2)
    return InverseGamma.from_coefficient((-0.5 * count, -0.5 * squared), -0.5 * count * LOG_2PI)
