"""Messages out of the Dirichlet node towards ``out``."""
from fgraph.families import Dirichlet, PointMass
from fgraph.registry import rule
from fgraph.nodes.dirichlet import DirichletNode


@rule(DirichletNode, "out")
def from_concentrations(q_alpha: PointMass) -> Dirichlet:
    """With alpha fixed the message is the factor itself, Dir(out | alpha), a density (log-scale 0)."""
    return Dirichlet(q_alpha.value, check=False)
