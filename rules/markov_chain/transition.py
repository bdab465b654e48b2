"""Message out of the Markov-chain node towards a random transition matrix (variational: log-scale 0).

exp E_q[log f] as a function of A, with q(z) the chain's joint marginal (the cluster ``(out, pairs)``), is
Π_t Π_ij A_ij^ξ_t[i, j] with ξ_t = E_q[z_t z_{t−1}ᵀ] the two-slice marginal of step t ≥ 2: a
MatrixDirichlet with concentrations 1 + Σ_t ξ_t, the expected transition counts of the chain plus one.
One message per chain (batch ``batch[:-1] + (1,)``, the interface's batch): the plate reduction of the
matrix's variable adds those of the chains when they share it, so that q(A) = MatrixDirichlet(α₀ + Σ_chains
Σ_t ξ_t), as for the ``Transition`` nodes of the unrolled chains.
"""
from fgraph.families import Contingency, Distribution, MatrixDirichlet
from fgraph.registry import rule
from fgraph.nodes.markov_chain import MarkovChainNode
from fgraph.rules.markov_chain.structured import refuse_sum_product


@rule(MarkovChainNode, "transition")
def structured(m_transition: Distribution, q_out_pairs: Contingency) -> MatrixDirichlet:
    """``1 + Σ_{t≥2} ξ_t`` per chain; element 1 of the pairs, ``diag q(z_1)``, is no transition and is left out."""
    counts = q_out_pairs.probabilities[..., 1:, :, :].sum(axis=-3, keepdims=True)
    return MatrixDirichlet(1.0 + counts, check=False)


@rule(MarkovChainNode, "transition", output=refuse_sum_product)
def sum_product(m_transition: Distribution, m_out: Distribution, m_pairs: Distribution) -> MatrixDirichlet:
    """Refused: see :data:`fgraph.rules.markov_chain.structured.SUM_PRODUCT_REFUSED`."""
    refuse_sum_product()
