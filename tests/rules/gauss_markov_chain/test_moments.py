"""Table test of the random-parameter Gauss–Markov chain's message to ``moments``: δ at (E[a], Var[a], E[w], E[log w]).

E[log w] under Gamma(α, β) is ψ(α) − log β; a clamped gain or precision is a point mass (variance 0,
E[log w] = log w). The moments have the batch of the gain and the precision together.
"""
import numpy as np
import pytest
from scipy.special import digamma

from fgraph.families import NormalMeanVariance, PointMass, Uninformative
from fgraph.families.gamma import Gamma
from fgraph.nodes.gauss_markov_chain import VariationalGaussMarkovChainNode
from tests.rules.tables import assert_message, message, point_mass

CASES = [
    pytest.param(NormalMeanVariance(0.7, 0.2), Gamma(3.0, 2.0), {},
                 point_mass([0.7, 0.2, 1.5, digamma(3.0) - np.log(2.0)]), id="normal-gamma"),
    pytest.param(PointMass(0.9), Gamma(1.0, 4.0), {},
                 point_mass([0.9, 0.0, 0.25, digamma(1.0) - np.log(4.0)]), id="clamped-gain"),
    pytest.param(NormalMeanVariance(-0.3, 1.5), PointMass(4.0), {},
                 point_mass([-0.3, 1.5, 4.0, np.log(4.0)]), id="clamped-precision"),
    # one gain per chain of two, a shared precision: the moments are per chain, (2, 1) + (4,)
    pytest.param(NormalMeanVariance([[0.5], [0.8]], [[0.1], [0.2]]), Gamma(2.0, 1.0), {"gain_batch": (2, 1)},
                 point_mass([[[0.5, 0.1, 2.0, digamma(2.0)]], [[0.8, 0.2, 2.0, digamma(2.0)]]]), id="per-chain-gain"),
]


@pytest.mark.parametrize("q_gain, q_precision, batches, expected", CASES)
def test_moments(q_gain, q_precision, batches, expected):
    chains = batches.get("gain_batch", ())[:-1]
    result = message(VariationalGaussMarkovChainNode, "moments",
                     {"m_moments": Uninformative(), "q_gain": q_gain, "q_precision": q_precision},
                     batch_shape=chains + (3,), initial_var=1.0, **batches)
    assert_message(result, expected)
    assert result.event_shape == (4,)
