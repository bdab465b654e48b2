"""Message out of the Gauss–Markov chain with a random gain or precision
(:class:`~fgraph.nodes.gauss_markov_chain.VariationalGaussMarkovChainNode`) towards ``moments``.

The point mass at (E[a], Var[a], E[w], E[log w]) of the current q(a), q(w) (constants on a clamped gain or
precision: a point mass has variance 0 and E[log w] = log w). The message to ``out`` reads q(a) and q(w)
through it, and the messages to ``gain`` and ``precision`` read the coupling κ = −E[w] E[a] of q(x) from it,
so it is the state of q(x) that the engine holds: the default schedule updates it right before ``out`` (its
variable is declared just before the chain's states).
"""
import numpy as np

from fgraph.families import Distribution, PointMass
from fgraph.registry import rule
from fgraph.nodes.gauss_markov_chain import VariationalGaussMarkovChainNode, parameter_moments


@rule(VariationalGaussMarkovChainNode, "moments")
def from_parameters(m_moments: Distribution, q_gain: Distribution, q_precision: Distribution, node) -> PointMass:
    """δ at (E[a], Var[a], E[w], E[log w]) of batch ``node.moments_batch`` (the gain's and precision's), event (4,)."""
    moments = np.broadcast_arrays(*parameter_moments(q_gain, q_precision), np.zeros(node.moments_batch))
    return PointMass(np.stack(moments[:-1], axis=-1), 1)
