"""Messages out of the exponential node towards ``out``."""
from fgraph.families import Distribution, PointMass
from fgraph.families.gamma import Gamma
from fgraph.registry import rule
from fgraph.nodes.exponential import ExponentialNode


@rule(ExponentialNode, "out")
def from_rate(q_rate: PointMass) -> Gamma:
    """λ e^{−λ out} = Gamma(out | 1, λ): the factor itself, a density in ``out`` (log-scale 0)."""
    return Gamma(1.0, q_rate.value, check=False)


@rule(ExponentialNode, "out")
def mean_field(q_rate: Distribution) -> Gamma:
    """exp E_q[log f] = exp(E[log λ] − E[λ] out) ∝ Gamma(out | 1, E[λ])."""
    return Gamma(1.0, q_rate.mean, check=False)
