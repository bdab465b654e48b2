"""Message out of the multivariate Gauss–Markov chain towards a random transition (F, λ) (variational).

As a function of (F, λ), with q(x) the chain posterior (the joint marginal of the cluster ``(out, pairs)``, as
its two-slice marginals),

    exp E_q(x)[Σ_{t=2..T} log N(x_t | F x_{t−1} + c_t, diag(λ)⁻¹)] = exp(κ) h(F, λ) exp(⟨η, T(F, λ)⟩),

    η = (−½ Σ_t E[x_{t−1}x_{t−1}ᵀ],  Σ_t E[(x_t − c_t) x_{t−1}ᵀ],  −½ Σ_t diag E[(x_t − c_t)(x_t − c_t)ᵀ],  ½ (T − 1)),
    κ = (d/2)(d − (T − 1)) log 2π,

the matrix-normal–gamma form of the message of a plate of linear regressions to their parameters
(:func:`fgraph.rules.linear_experts.parameters.plate_statistics`, one expert, no intercept, weights 1), here with the
input x_{t−1} random: its second moments E[x_{t−1}x_{t−1}ᵀ] in place of known outer products, and the
lag-one moments E[x_t x_{t−1}ᵀ] = m_t m_{t−1}ᵀ + Cov(x_t, x_{t−1}) of the smoother in the cross term.
Times a MatrixNormalGamma prior it is the closed-form update of Beal's VB-LDS:
V⁻¹ = V₀⁻¹ + S_xx, M = (M₀V₀⁻¹ + S_yx) V, α = α₀ + (T − 1)/2, β_i = β₀_i + ½ (S_yy,ii + m₀_iᵀV₀⁻¹m₀_i − m_iᵀV⁻¹m_i).

Summed over the chains that share (F, λ) (batch ``()``), kept per chain for one (F, λ) each
(batch ``batch_shape + (1,)``).
"""
import numpy as np

from fgraph.families import Distribution, MultivariateNormal
from fgraph.families.matrix_normal_gamma import MatrixNormalGamma, MatrixNormalGammaLikelihood
from fgraph.families.normal import LOG_2PI
from fgraph.registry import rule
from fgraph.nodes.mv_gauss_markov_chain import (
    VariationalMvGaussMarkovChainNode,
    pair_statistics,
    transition_natural_parameters,
)
from fgraph.rules.mv_gauss_markov_chain.structured import refuse_sum_product


def regression_message(previous, cross, current, node) -> MatrixNormalGammaLikelihood:
    """The message from the per-step second moments of :func:`~fgraph.nodes.mv_gauss_markov_chain.pair_statistics`
    (``(..., T − 1)`` + event): summed over time, then over the chains sharing (F, λ)."""
    shared = not node.transition_batch

    def total(array, event: int):
        """Over the steps and, when (F, λ) is shared, the chains; per chain the steps' axis stays (length 1)."""
        if shared:
            return np.sum(array, axis=tuple(range(np.ndim(array) - event)))
        return np.sum(array, axis=-1 - event, keepdims=True)

    d = node.state_dim
    transitions = total(np.ones(np.shape(current)[:-1]), 0)  # T − 1, times the chains when shared
    eta = transition_natural_parameters(total(previous, 2), total(cross, 2), total(current, 1), transitions)
    return MatrixNormalGammaLikelihood(*eta, log_scale=0.5 * d * (d - transitions) * LOG_2PI)


@rule(VariationalMvGaussMarkovChainNode, "transition")
def structured(m_transition: Distribution, q_out_pairs: MultivariateNormal, node) -> MatrixNormalGammaLikelihood:
    """η of the module docstring from the chain posterior's two-slice marginals (element 1 is no transition)."""
    return regression_message(*pair_statistics(q_out_pairs, node), node)


@rule(VariationalMvGaussMarkovChainNode, "transition")
def sum_product(m_transition: Distribution, m_out: Distribution, m_pairs: Distribution,
                node) -> MatrixNormalGamma:
    """Refused (:func:`fgraph.rules.mv_gauss_markov_chain.structured.refuse_sum_product`)."""
    refuse_sum_product(node, "transition")
