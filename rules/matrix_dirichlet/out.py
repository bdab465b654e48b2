"""Messages out of the MatrixDirichlet node towards ``out``."""
from fgraph.families import MatrixDirichlet, PointMass
from fgraph.registry import rule
from fgraph.nodes.matrix_dirichlet import MatrixDirichletNode


@rule(MatrixDirichletNode, "out")
def from_concentrations(q_alpha: PointMass) -> MatrixDirichlet:
    """With alpha fixed the message is the factor itself, a density over column-stochastic matrices (log-scale 0)."""
    return MatrixDirichlet(q_alpha.value, check=False)
