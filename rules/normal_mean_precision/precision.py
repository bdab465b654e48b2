"""Messages out of NormalMeanPrecision towards ``precision``."""
import numpy as np
from fgraph.families.special import gammaln

from fgraph.families import Distribution, PointMass
from fgraph.families.gamma import Gamma, GammaNatural, GammaNaturalOnDemand
from fgraph.families.mvnormal import MultivariateNormal
from fgraph.families.normal import LOG_2PI
from fgraph.registry import rule
from fgraph.nodes.normal import NormalMeanPrecision, expected_squared_difference, squared_difference_total
from fgraph.float_twins import GAMMA, float_rule
from fgraph.float_twins import expected_squared_difference as squared_difference_on_floats


@rule(NormalMeanPrecision, "precision")
def mean_field(q_out: Distribution, q_mean: Distribution) -> Gamma:
    """exp E_q[log N(out | mean, 1/τ)] = (2π)^(-1/2) τ^(1/2) exp(-τ S / 2) ∝ Gamma(τ | 3/2, S / 2).

    ``S = E[(out - mean)²]``. A variational message is defined up to a
    constant, so its log-scale is left at 0 (over a plate of N observations
    the constant would cost a logarithm per element and iteration). It is
    made from its natural parameters ``(1/2, -S/2)``, which are all that a
    plate's reduction reads: one N-element array, not a rate and its negative.
    Over a plate of N ``out`` around one global ``mean`` the reduction reads
    only their sums, ``(N/2, -Σ_i S_i / 2)``: the message is made from those
    (one difference and one ``dot`` over the plate,
    :func:`~fgraph.nodes.normal.squared_difference_total`), its elements only if
    something asks for them.
    One element (a plate collapsed to its sufficient statistics) is made as a
    plain gamma from floats: the same parameters, ``shape = ½ + 1`` and
    ``rate = S / 2`` exactly, without the conversions of a batched message.
    """
    out_mean = q_out.mean
    if isinstance(out_mean, np.ndarray) and out_mean.ndim and np.ndim(q_mean.mean) == 0:
        # a plate around a global mean: only Σ_i -S_i/2 is read (the reduction, the check), the elements on demand
        count = out_mean.size
        return GammaNaturalOnDemand(0.5, lambda: -0.5 * expected_squared_difference(q_out, q_mean), out_mean.shape,
                                    (0.5 * count, -0.5 * squared_difference_total(q_out, q_mean)))
    squared = expected_squared_difference(q_out, q_mean)
    if type(squared) is np.float64 or type(squared) is float:
        return Gamma.unbatched(1.5, 0.5 * float(squared), 0.0)
    return GammaNatural(0.5, -0.5 * squared)


@rule(NormalMeanPrecision, "precision")
def clamped(q_out: PointMass, q_mean: PointMass) -> Gamma:
    """Known ``out`` and ``mean``: the exact sum-product message, a likelihood in τ.

    As :func:`mean_field` with the log-scale of the integral of the function
    over τ (see :func:`_log_scale`), which the evidence needs.
    """
    squared = expected_squared_difference(q_out, q_mean)
    return Gamma(1.5, 0.5 * squared, log_scale=_log_scale(squared), check=False)


@rule(NormalMeanPrecision, "precision")
def structured(q_out_mean: MultivariateNormal) -> Gamma:
    """Gamma(τ | 3/2, E[(out - mean)²] / 2) under a joint Gaussian q(out, mean)."""
    m, s = q_out_mean.mean, q_out_mean.cov
    squared = s[..., 0, 0] - 2.0 * s[..., 0, 1] + s[..., 1, 1] + (m[..., 0] - m[..., 1]) ** 2
    return Gamma(1.5, 0.5 * squared, log_scale=_log_scale(squared), check=False)


def _log_scale(squared):
    """``log ∫ (2π)^(-1/2) τ^(1/2) exp(-τ S / 2) dτ = -½ log 2π + log Γ(3/2) - 3/2 log(S / 2)``."""
    return -0.5 * LOG_2PI + gammaln(1.5) - 1.5 * np.log(0.5 * squared)


@float_rule(mean_field, GAMMA, q_out=("mean", "var"), q_mean=("mean", "var"))
def _mean_field_on_floats(out_mean: float, out_var: float, mean_mean: float, mean_var: float) -> tuple:
    """:func:`mean_field` on one element, as ``(a, b, log-scale)`` (:mod:`fgraph.floats`)."""
    return 1.5, 0.5 * squared_difference_on_floats(out_mean, out_var, mean_mean, mean_var), 0.0
