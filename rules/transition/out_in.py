"""Joint marginal of the structured cluster (out, in) of the discrete Transition node.

q(out = e_i, in = e_j) ∝ f̃_ij π_out,i π_in,j, with π the messages into the
node on ``out`` and ``in`` and f̃ = exp E_q[log A] (= A for a fixed matrix).
"""
import numpy as np

from fgraph.families import Categorical, Contingency, MatrixDirichlet, PointMass
from fgraph.registry import marginal_rule
from fgraph.nodes.transition import TransitionNode


def _joint(factor, m_out: Categorical, m_in: Categorical) -> Contingency:
    weights = factor * m_out.probabilities[..., :, None] * m_in.probabilities[..., None, :]
    return Contingency(weights / weights.sum(axis=(-2, -1), keepdims=True), check=False)


@marginal_rule(TransitionNode, ("out", "in"))
def with_fixed_matrix(m_out: Categorical, m_in: Categorical, q_matrix: PointMass) -> Contingency:
    """q(out, in) ∝ A_ij π_out,i π_in,j."""
    return _joint(q_matrix.value, m_out, m_in)


@marginal_rule(TransitionNode, ("out", "in"))
def structured(m_out: Categorical, m_in: Categorical, q_matrix: MatrixDirichlet) -> Contingency:
    """q(out, in) ∝ exp(E[log A_ij]) π_out,i π_in,j."""
    return _joint(np.exp(q_matrix.mean_log), m_out, m_in)
