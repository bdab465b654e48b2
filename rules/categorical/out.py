"""Messages out of the Categorical node towards ``out`` (one-hot, K categories)."""
from fgraph.families import Categorical, Dirichlet, Distribution, PointMass
from fgraph.registry import rule
from fgraph.nodes.categorical import CategoricalNode


@rule(CategoricalNode, "out")
def sum_product(m_p: Dirichlet) -> Categorical:
    """∫ prod_k p_k^x_k Dir(p | alpha) dp = E[p_k] for x = e_k: Categorical(alpha / sum alpha), log-scale 0."""
    return Categorical(m_p.mean, check=False)


@rule(CategoricalNode, "out")
def from_point_mass(q_p: PointMass) -> Categorical:
    """With p fixed the message is the factor itself, Cat(out | p) (log-scale 0)."""
    return Categorical(q_p.value, check=False)


@rule(CategoricalNode, "out")
def mean_field(q_p: Distribution) -> Categorical:
    """exp E_q[log f] = prod_k exp(E[log p_k])^x_k, normalised over the K categories."""
    return Categorical.from_natural((q_p.mean_log,))
