"""Messages out of the InverseGamma node towards ``scale`` (conjugate: a Gamma in β)."""
import numpy as np

from fgraph.families import Distribution, PointMass
from fgraph.families.gamma import Gamma
from fgraph.registry import rule
from fgraph.nodes.inverse_gamma import InverseGammaNode


@rule(InverseGammaNode, "scale")
def mean_field(q_out: Distribution, q_shape: PointMass) -> Gamma:
    """exp E_q[log InverseGamma(out | α, β)] ∝ β^α exp(-β E[1/out]) = Gamma(β | α + 1, E[1/out]).

    The log-scale is the integral over β of β^α exp(-β E[1/out]) exp(-(α + 1) E[log out]) / Γ(α),
    ``log α - (α + 1) (log E[1/out] + E[log out])``: for a clamped ``out = x`` it is ``log α``
    and the message is the exact sum-product message.
    """
    shape, mean_inverse = q_shape.value, q_out.mean_inverse
    log_scale = np.log(shape) - (shape + 1.0) * (np.log(mean_inverse) + q_out.mean_log)
    return Gamma(shape + 1.0, mean_inverse, log_scale=log_scale, check=False)


@rule(InverseGammaNode, "scale")
def mean_field_random_shape(q_out: Distribution, q_shape: Distribution) -> Gamma:
    """exp E_q[log InverseGamma(out | α, β)] ∝ β^E[α] exp(-β E[1/out]) = Gamma(β | E[α] + 1, E[1/out]).

    A variational message (random shape), defined up to a constant: log-scale 0.
    """
    return Gamma(q_shape.mean + 1.0, q_out.mean_inverse, check=False)
