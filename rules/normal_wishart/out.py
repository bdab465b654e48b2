"""Messages out of the normal–Wishart prior node towards ``out``."""
from fgraph.families import PointMass
from fgraph.families.normal_wishart import NormalWishart
from fgraph.registry import rule
from fgraph.nodes.normal_wishart import NormalWishartNode


@rule(NormalWishartNode, "out")
def from_parameters(q_mean: PointMass, q_precision_scale: PointMass, q_scale: PointMass,
                    q_df: PointMass) -> NormalWishart:
    """NW(μ, Λ | m, β, W, ν): the factor itself, a density in ``(μ, Λ)`` (log-scale 0)."""
    return NormalWishart(q_mean.value, q_precision_scale.value, q_scale.value, q_df.value, check=False)
