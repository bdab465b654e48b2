"""Messages out of the exponential node towards ``rate`` (conjugate: the rate has a Gamma prior)."""
import numpy as np

from fgraph.families import Distribution, PointMass
from fgraph.families.gamma import Gamma
from fgraph.registry import rule
from fgraph.nodes.exponential import ExponentialNode


@rule(ExponentialNode, "rate")
def from_observed_out(q_out: PointMass) -> Gamma:
    """λ e^{−λ x} = Gamma(λ | 2, x) · Γ(2)/x², exact for a clamped ``out = x > 0``.

    As a function of λ it is a likelihood, not a density: it carries
    log_scale = log ∫ λ e^{−λ x} dλ = −2 log x. For x <= 0 the integral
    diverges and no Gamma represents the message; the log-scale is then NaN,
    which the engine reports as a NumericalError naming this node.
    """
    x = q_out.value
    positive = x > 0
    log_scale = np.where(positive, -2.0 * np.log(np.where(positive, x, 1.0)), np.nan)
    return Gamma(2.0, x, log_scale=log_scale, check=False)


@rule(ExponentialNode, "rate")
def mean_field(q_out: Distribution) -> Gamma:
    """exp E_q[log f] = λ exp(−λ E[out]) ∝ Gamma(λ | 2, E[out])."""
    return Gamma(2.0, q_out.mean, check=False)
