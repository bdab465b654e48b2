"""Message out of the Gauss–Markov chain with a random gain
(:class:`~fgraph.nodes.gauss_markov_chain.VariationalGaussMarkovChainNode`) towards ``gain``.

Under the structured mean field q(x_1..x_T) q(a) q(w), as a function of a,

    exp E_q[Σ_{t≥2} log N(x_t | a x_{t−1}, 1/w)] ∝ exp(−½ E[w] Σ_t E[(x_t − a x_{t−1})²]),

a normal of precision E[w] Σ_t E[x²_{t−1}] and weighted mean E[w] Σ_t E[x_t x_{t−1}],

summed over the chains that share the gain (the message has the batch of the gain: ``()`` shared by every
chain, ``batch_shape + (1,)`` one per chain). The pair moments E[x_t x_{t−1}] are those of the joint q(x), from its marginals and the
coupling κ = −E[w] E[a] of the moments its message to ``out`` read
(:func:`~fgraph.nodes.gauss_markov_chain.transition_statistics`).
"""
from fgraph.families import Distribution, PointMass, UnivariateNormal
from fgraph.families.normal import NormalWeightedMeanPrecision
from fgraph.registry import rule
from fgraph.nodes.gauss_markov_chain import (
    VariationalGaussMarkovChainNode,
    coupling,
    read_moments,
    sum_to,
    transition_statistics,
)


@rule(VariationalGaussMarkovChainNode, "gain")
def mean_field(m_gain: Distribution, q_out: UnivariateNormal, q_precision: Distribution, q_moments: PointMass,
               node) -> UnivariateNormal:
    """N(a) of precision E[w] Σ_t E[x²_{t−1}] and weighted mean E[w] Σ_t E[x_t x_{t−1}] (t = 2..T), per chain."""
    previous, cross, _ = transition_statistics(q_out, coupling(read_moments(q_moments.value)), node.batch_shape)
    precision = q_precision.mean
    shape = node.gain_batch
    return NormalWeightedMeanPrecision(sum_to(precision * cross, shape), sum_to(precision * previous, shape),
                                       check=False)
