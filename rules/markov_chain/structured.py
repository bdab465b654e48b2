"""The Markov-chain node with a random transition matrix: structured VMP, q(z_1..z_T) q(A).

The variational Bayesian HMM (Beal 2003, ch. 3). With q(A) given, the
optimal q(z) is the chain posterior under the sub-stochastic matrix
Ã = exp E_q[log A] (``Ã_ij = exp(ψ(α_ij) − ψ(Σ_i' α_i'j))`` for a
MatrixDirichlet q(A)):

    q(z) = π(z_1) Π_t Ã[z_t, z_{t−1}] Π_t m_t(z_t) / Z,

with m_t the messages the rest of the graph sends to z_t. Everything this
module returns comes from one scaled forward–backward pass with Ã in place
of A (:func:`chain_pass`), the recursion of :mod:`fgraph.rules.markov_chain.out`
for a matrix whose columns need not sum to one, per chain or shared:

* the message to ``out``, α_t β_t with its log-scale (the incoming scales
  included, as the node couples its batch); the columns of Ã sum to less than
  one, so the log-scale is not that of a probability model — it is log Z of
  the joint above, which is what the node's free-energy term reads;
* the message to ``pairs`` and the joint marginal of the cluster
  ``(out, pairs)``: the two-slice marginals

      ξ_t[i, j] = q(z_t = i, z_{t−1} = j) ∝ m_t(i) β_t(i) Ã_ij f_{t−1}(j),

  with f_{t−1} the filtered vector (α_{t−1} times m_{t−1}), one table per step
  (element 0, which has no predecessor, is ``diag q(z_1)``), as a
  :class:`Contingency` of batch ``(..., T)``. The message carries log Z at
  every step, like the message to ``out``.

A sum-product (``"bp"``) cluster holding the matrix has no closed form (the
exact message to A is a mixture over every path); its rules refuse it when
the model is compiled, pointing to ``algorithm="vmp"``.
"""
import numpy as np

from fgraph.errors import ModelError
from fgraph.families import Categorical, Contingency, Distribution
from fgraph.families.pointmass import Uninformative
from fgraph.registry import marginal_rule, rule
from fgraph.nodes.markov_chain import MarkovChainNode
from fgraph.rules.markov_chain.out import _normalised, chain_pass

SUM_PRODUCT_REFUSED = (
    "a MarkovChain whose transition matrix is a variable has no sum-product (algorithm='bp') rules: the exact "
    "message to the matrix is a mixture over every path of the chain, which no family here represents. Use "
    "algorithm='vmp' (structured mean field q(z) q(A), the variational Bayesian HMM), with init={'<matrix>': "
    "its prior}; or give the chain a fixed matrix"
)


def refuse_sum_product(families=None):
    """Raise the error of a sum-product cluster over the chain and its random matrix (at compilation, when
    the compiler asks a refusing rule for its output family, and if such a rule is ever called)."""
    raise ModelError(SUM_PRODUCT_REFUSED)


def two_slice_marginals(passed: dict) -> np.ndarray:
    """The tables of :func:`chain_pass`'s chains, shape ``batch + (K, K)``: ``diag q(z_1)`` at the first step,
    ξ_t[i, j] ∝ p_t(i) β_t(i) M_ij f_{t−1}(j) at every later one (0-based t ≥ 1).

    A step whose every pair is impossible (zero evidence) gives a zero table.
    """
    likelihood, backward, filtered, matrix = (passed[key] for key in ("likelihood", "backward", "filtered", "matrix"))
    with np.errstate(divide="ignore", invalid="ignore"):
        first, _ = _normalised(filtered[..., 0] * backward[..., 0], 0.0)  # q(z_1) ∝ p_0 π β_0
        later = (likelihood[:, None, ..., 1:] * backward[:, None, ..., 1:]) * matrix * filtered[None, :, ..., :-1]
        later, _ = _normalised(later, 0.0, axis=(0, 1))
    pairs = np.zeros(first.shape[:1] + first.shape + (likelihood.shape[-1],))  # (K, K, ..., T)
    pairs[np.arange(first.shape[0]), np.arange(first.shape[0]), ..., 0] = first
    pairs[..., 1:] = later
    return np.moveaxis(pairs, (0, 1), (-2, -1))


def _expected_transition(q_transition: Distribution):
    """Ã = exp E_q[log A]: the matrix of a point mass, the sub-stochastic geometric mean of a MatrixDirichlet."""
    return np.exp(q_transition.mean_log)


@rule(MarkovChainNode, "out")
def structured(m_out: Categorical, m_pairs: Uninformative, q_transition: Distribution, node) -> Categorical:
    """α_t β_t of the chain with Ã = exp E_q[log A] (structured VMP; the matrix itself when it is known).

    Log-scale: log Σ_z α_t β_t plus the log-normalisers of both, as for a fixed matrix; with Ã it is the
    log-normaliser of the joint q(z) of the module docstring, not an evidence.
    """
    passed = chain_pass(node.initial, _expected_transition(q_transition), m_out.probabilities, m_out.log_scale,
                        node.batch_shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        probabilities, log_scale = _normalised(passed["forward"] * passed["backward"],
                                               passed["forward_log"] + passed["backward_log"])
    return Categorical(np.moveaxis(probabilities, 0, -1), log_scale=log_scale, check=False)


@rule(MarkovChainNode, "pairs")
def two_slices(m_pairs: Uninformative, m_out: Categorical, q_transition: Distribution, node) -> Contingency:
    """The two-slice marginals ξ_t (:func:`two_slice_marginals`), each with the log Z of its chain."""
    passed = chain_pass(node.initial, _expected_transition(q_transition), m_out.probabilities, m_out.log_scale,
                        node.batch_shape)
    log_scale = np.broadcast_to(passed["log_evidence"][..., None], node.batch_shape)
    return Contingency(two_slice_marginals(passed), log_scale=log_scale, check=False)


@marginal_rule(MarkovChainNode, ("out", "pairs"))
def chain_posterior(m_out: Categorical, m_pairs: Uninformative, q_transition: Distribution, node) -> Contingency:
    """q(z) ∝ π Π Ã Π m_t, as its two-slice marginals ξ_t (what the matrix's update and the energy read)."""
    passed = chain_pass(node.initial, _expected_transition(q_transition), m_out.probabilities, m_out.log_scale,
                        node.batch_shape)
    return Contingency(two_slice_marginals(passed), check=False)


@rule(MarkovChainNode, "out", output=refuse_sum_product)
def sum_product(m_out: Distribution, m_pairs: Distribution, m_transition: Distribution) -> Categorical:
    """Refused: see :data:`SUM_PRODUCT_REFUSED`."""
    refuse_sum_product()


@rule(MarkovChainNode, "pairs", output=refuse_sum_product)
def sum_product_pairs(m_pairs: Distribution, m_out: Distribution, m_transition: Distribution) -> Contingency:
    """Refused: see :data:`SUM_PRODUCT_REFUSED`."""
    refuse_sum_product()
