"""Messages out of the InverseGamma node towards ``out``."""
from fgraph.families import Distribution
from fgraph.families.inverse_gamma import InverseGamma
from fgraph.registry import rule
from fgraph.nodes.inverse_gamma import InverseGammaNode


@rule(InverseGammaNode, "out")
def from_shape_and_scale(q_shape: Distribution, q_scale: Distribution) -> InverseGamma:
    """exp E_q[log InverseGamma(out | α, β)] ∝ out^(-E[α]-1) exp(-E[β]/out) = InverseGamma(out | E[α], E[β]).

    With point-mass shape and scale this is the factor itself, the exact
    sum-product message (a density in ``out``: log-scale 0).
    """
    return InverseGamma(q_shape.mean, q_scale.mean, check=False)
