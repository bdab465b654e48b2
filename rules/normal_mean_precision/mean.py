"""Messages out of NormalMeanPrecision towards ``mean`` (symmetric in out and mean)."""
import numpy as np

from fgraph.families import Distribution, NormalMeanVariance as Normal, PointMass, UnivariateNormal
from fgraph.plates import EmpiricalMoments
from fgraph.registry import plate_rule, rule
from fgraph.nodes.normal import NormalMeanPrecision, mean_total
from fgraph.float_twins import NORMAL, float_rule


@rule(NormalMeanPrecision, "mean")
def sum_product(m_out: UnivariateNormal, q_precision: Distribution) -> UnivariateNormal:
    """∫ exp(E_q[log N(out | mean, 1/τ)]) m(out) dout (see ``out.sum_product``)."""
    precision = q_precision.mean
    log_scale = 0.5 * (q_precision.mean_log - np.log(precision))
    return Normal(m_out.mean, m_out.var + 1.0 / precision, log_scale=log_scale, check=False)


@rule(NormalMeanPrecision, "mean")
def mean_field(q_out: Distribution, q_precision: Distribution) -> UnivariateNormal:
    """exp E_q[log N(out | mean, 1/τ)] ∝ N(mean | E[out], 1/E[τ])."""
    mean, precision = q_out.mean, q_precision.mean
    if type(mean) is np.float64 and type(precision) is np.float64:  # one element (a collapsed plate): from floats
        return Normal.unbatched(float(mean), 1.0 / float(precision), 0.0)
    message = Normal(mean, 1.0 / precision, check=False)
    if type(precision) is np.float64 and isinstance(mean, np.ndarray) and mean.ndim:
        # N messages of one precision w: their natural parameters sum to (w Σ_i E[out_i], -N w / 2), where
        # Σ_i E[out_i] is kept on q_out (data: once per run), so the plate's reduction forms no w·y_i
        weight = 1.0 / (1.0 / float(precision))  # the precision of the message, as it computes it from its variance
        message.with_natural_parameter_totals((weight * mean_total(q_out), (-0.5 * weight) * mean.size))
    return message


@plate_rule(NormalMeanPrecision, "mean")
def observed_plate(q_out: EmpiricalMoments, q_precision: PointMass) -> UnivariateNormal:
    """Π_i N(y_i | mean, 1/τ) over N observations = N(mean | ȳ, 1/(N τ)), scaled.

    With ``s²`` the empirical variance of the y_i, the log-scale is
    ``-(N-1)/2 log(2π/τ) - ½ log N - N τ s² / 2``.
    """
    count, precision = q_out.count, q_precision.value
    log_scale = (-0.5 * (count - 1) * np.log(2.0 * np.pi / precision) - 0.5 * np.log(count)
                 - 0.5 * count * precision * q_out.var)
    return Normal(q_out.mean, 1.0 / (count * precision), log_scale=log_scale, check=False)


@float_rule(mean_field, NORMAL, q_out=("mean",), q_precision=("mean",))
def _mean_field_on_floats(out_mean: float, precision_mean: float) -> tuple:
    """:func:`mean_field` on one element, as ``(ξ, w, log-scale)`` (:mod:`fgraph.floats`)."""
    precision = 1.0 / (1.0 / precision_mean)  # the precision of the message, as made from its variance
    return out_mean * precision, precision, 0.0
