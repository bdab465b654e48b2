"""Messages out of the discrete Transition node towards ``in``.

(The module is ``in_`` because ``in`` is a Python keyword; the interface is ``"in"``.)
The backward message is the function g(in = e_j) = Σ_i A_ij π_i of the
incoming ``out`` message π; it does not sum to one over j, so it is returned
as the Categorical g / Σ_j g_j with log-scale log Σ_j g_j.
"""
import numpy as np

from fgraph.families import Categorical, Distribution, MatrixDirichlet, PointMass
from fgraph.registry import rule
from fgraph.nodes.categorical import times_log
from fgraph.nodes.transition import TransitionNode


def _scaled_categorical(weights) -> Categorical:
    """The non-negative function ``weights`` (shape ``(..., K)``) as a normalised Categorical and its log-sum.

    An all-zero row (an observation impossible under every state) gives NaN
    probabilities, which the engine reports naming the node; no warning first.
    """
    total = weights.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return Categorical(weights / total[..., None], log_scale=np.log(total), check=False)


@rule(TransitionNode, "in")
def sum_product(m_out: Categorical, q_matrix: PointMass) -> Categorical:
    """g_j = Σ_i A_ij π_i = (Aᵀ π)_j, log-scale log Σ_j g_j."""
    return _scaled_categorical(np.einsum("...ij,...i->...j", q_matrix.value, m_out.probabilities))


@rule(TransitionNode, "in")
def from_observed_output(q_out: PointMass, q_matrix: PointMass) -> Categorical:
    """With out = e_i observed, g_j = A_ij (row i of A, the likelihood of every state j); log-scale log Σ_j A_ij."""
    return _scaled_categorical(np.einsum("...ij,...i->...j", q_matrix.value, q_out.value))


@rule(TransitionNode, "in")
def structured(m_out: Categorical, q_matrix: MatrixDirichlet) -> Categorical:
    """g_j = Σ_i Ã_ij π_i with Ã = exp E_q[log A] (structured VMP); log-scale log Σ_j g_j."""
    return _scaled_categorical(np.einsum("...ij,...i->...j", np.exp(q_matrix.mean_log), m_out.probabilities))


@rule(TransitionNode, "in")
def mean_field(q_out: Distribution, q_matrix: Distribution) -> Categorical:
    """exp E_q[log f] for in = e_j: exp(Σ_i E[out_i] E[log A_ij]), normalised over j."""
    log_weights = times_log(q_out.mean[..., :, None], q_matrix.mean_log).sum(axis=-2)
    return Categorical.from_natural((log_weights,))
