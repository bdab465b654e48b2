"""Messages out of the Gamma node towards ``rate`` (conjugate: the rate has a Gamma prior)."""
from fgraph.families import Distribution, PointMass
from fgraph.families.gamma import Gamma
from fgraph.registry import rule
from nodes.gamma import GammaNode


@rule(GammaNode, "rate")
def mean_field(q_out: Distribution, q_shape: PointMass) -> Gamma:
    """exp E_q[log Gamma(out | α, β)] ∝ β^α exp(-β E[out]) = Gamma(β | α + 1, E[out])."""
    return Gamma(q_shape.value + 1.0, q_out.mean, check=False)
