"""Messages out of the discrete Transition node towards ``matrix`` (variational: log-scale 0).

exp E_q[log f] = prod_ij A_ij^E[out_i in_j], a MatrixDirichlet with
concentrations 1 + E[out inᵀ] (the expected transition counts plus one).
"""
from fgraph.families import Contingency, Distribution, MatrixDirichlet
from fgraph.registry import rule
from fgraph.nodes.transition import TransitionNode


@rule(TransitionNode, "matrix")
def structured(q_out_in: Contingency) -> MatrixDirichlet:
    """E[out inᵀ] is the joint probability table q(out = i, in = j) of the cluster (out, in)."""
    return MatrixDirichlet(1.0 + q_out_in.probabilities, check=False)


@rule(TransitionNode, "matrix")
def mean_field(q_out: Distribution, q_in: Distribution) -> MatrixDirichlet:
    """E[out inᵀ] = E[out] E[in]ᵀ under independent marginals."""
    return MatrixDirichlet(1.0 + q_out.mean[..., :, None] * q_in.mean[..., None, :], check=False)
