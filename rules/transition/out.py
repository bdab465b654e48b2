"""Messages out of the discrete Transition node towards ``out``.

The factor is f(out, in, A) = prod_ij A_ij^(out_i in_j): for out = e_i and
in = e_j it equals A_ij. ``π`` below is the probability vector of the message
into ``in``.
"""
import numpy as np

from fgraph.families import Categorical, Distribution, MatrixDirichlet, PointMass
from fgraph.registry import rule
from fgraph.nodes.categorical import times_log
from fgraph.nodes.transition import TransitionNode


def _scaled_categorical(weights) -> Categorical:
    """The non-negative function ``weights`` (shape ``(..., K)``) as a normalised Categorical and its log-sum."""
    total = weights.sum(axis=-1)
    return Categorical(weights / total[..., None], log_scale=np.log(total), check=False)


@rule(TransitionNode, "out")
def sum_product(m_in: Categorical, q_matrix: PointMass) -> Categorical:
    """Σ_j A_ij π_j = (A π)_i; it sums to one over i (A is column-stochastic), so the log-scale is 0."""
    return Categorical(np.einsum("...ij,...j->...i", q_matrix.value, m_in.probabilities), check=False)


@rule(TransitionNode, "out")
def from_observed_input(q_in: PointMass, q_matrix: PointMass) -> Categorical:
    """With in = e_j fixed the message is column j of A, Cat(out | A e_j) (log-scale 0)."""
    return Categorical(np.einsum("...ij,...j->...i", q_matrix.value, q_in.value), check=False)


@rule(TransitionNode, "out")
def structured(m_in: Categorical, q_matrix: MatrixDirichlet) -> Categorical:
    """Σ_j Ã_ij π_j with Ã = exp E_q[log A] (structured VMP, cluster (out, in) and q(A)).

    The columns of Ã sum to less than one, so the message is not normalised:
    its log-scale is log Σ_i (Ã π)_i.
    """
    weights = np.einsum("...ij,...j->...i", np.exp(q_matrix.mean_log), m_in.probabilities)
    return _scaled_categorical(weights)


@rule(TransitionNode, "out")
def mean_field(q_in: Distribution, q_matrix: Distribution) -> Categorical:
    """exp E_q[log f] for out = e_i: exp(Σ_j E[in_j] E[log A_ij]), normalised over i."""
    log_weights = times_log(q_in.mean[..., None, :], q_matrix.mean_log).sum(axis=-1)
    return Categorical.from_natural((log_weights,))
