"""Message out of the Gauss–Markov chain with a random process precision
(:class:`~fgraph.nodes.gauss_markov_chain.VariationalGaussMarkovChainNode`) towards ``precision``.

Under the structured mean field q(x_1..x_T) q(a) q(w), as a function of w,

    exp E_q[Σ_{t≥2} log N(x_t | a x_{t−1}, 1/w)] ∝ w^{(T−1)/2} exp(−½ w Σ_t E[(x_t − a x_{t−1})²]),

Gamma(w | 1 + (T − 1)/2, ½ Σ_t (E[x_t²] − 2 E[a] E[x_t x_{t−1}] + E[a²] E[x²_{t−1}])),

summed over the chains that share the precision (the message has its batch: ``()`` shared, ``batch_shape +
(1,)`` one per chain), with the pair moments of the joint q(x) (its marginals and the coupling of the moments
its message to ``out`` read, :func:`~fgraph.nodes.gauss_markov_chain.transition_statistics`).
"""
import numpy as np

from fgraph.families import Distribution, PointMass, UnivariateNormal
from fgraph.families.gamma import Gamma
from fgraph.registry import rule
from fgraph.nodes.gauss_markov_chain import (
    VariationalGaussMarkovChainNode,
    coupling,
    read_moments,
    sum_to,
    transition_statistics,
)


@rule(VariationalGaussMarkovChainNode, "precision")
def mean_field(m_precision: Distribution, q_out: UnivariateNormal, q_gain: Distribution, q_moments: PointMass,
               node) -> Gamma:
    """Gamma(1 + (T − 1)/2, ½ Σ_t E[(x_t − a x_{t−1})²]) per chain (t = 2..T)."""
    previous, cross, current = transition_statistics(q_out, coupling(read_moments(q_moments.value)),
                                                     node.batch_shape)
    squares = current - 2.0 * q_gain.mean * cross + q_gain.second_moment * previous
    shape = node.precision_batch
    transitions = sum_to(np.full(np.shape(squares), node.batch_shape[-1] - 1.0), shape)
    return Gamma(1.0 + 0.5 * transitions, sum_to(0.5 * squares, shape), check=False)
