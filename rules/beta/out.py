"""Messages out of the Beta node towards ``out``."""
from fgraph.families import Beta, PointMass
from fgraph.registry import rule
from fgraph.nodes.beta import BetaNode


@rule(BetaNode, "out")
def from_shapes(q_a: PointMass, q_b: PointMass) -> Beta:
    """With both shapes fixed the message is the factor itself, Beta(out | a, b), a density in out (log-scale 0)."""
    return Beta(q_a.value, q_b.value, check=False)
