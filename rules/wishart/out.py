"""Messages out of the Wishart node towards ``out``."""
from fgraph.families import PointMass, Wishart
from fgraph.registry import rule
from fgraph.nodes.wishart import WishartNode


@rule(WishartNode, "out")
def from_df_and_scale(q_df: PointMass, q_scale: PointMass) -> Wishart:
    """Wishart(out | ν, S): the factor itself, a density in ``out`` (log-scale 0)."""
    return Wishart(q_df.value, q_scale.value, check=False)
