"""Beta node: average energy -E_q[log Beta(out | a, b)] and parameter validation."""
import numpy as np
import pytest
from scipy import integrate, stats

import fgraph as fg
from fgraph.families import Beta as BetaDistribution, PointMass
from fgraph.nodes import Beta
from fgraph.nodes.beta import BetaNode
from tests.rules.tables import energy


def test_energy_against_integration():
    q_out = BetaDistribution(3.0, 4.0)
    expected, _ = integrate.quad(lambda x: -stats.beta.pdf(x, 3.0, 4.0) * stats.beta.logpdf(x, 2.0, 5.0), 0.0, 1.0)
    result = energy(BetaNode, {"q_out": q_out, "q_a": PointMass(2.0), "q_b": PointMass(5.0)})
    np.testing.assert_allclose(result, expected, rtol=1e-9)


def test_energy_of_observed_values():
    # -log Beta(x | 2, 5) at x = 1/4, and at x = 0 with a = 1: -log(b (1 - 0)^(b-1)) = -log 5 (0 log 0 = 0)
    result = energy(BetaNode, {"q_out": PointMass([0.25, 0.0]), "q_a": PointMass([2.0, 1.0]), "q_b": PointMass(5.0)})
    np.testing.assert_allclose(result, [-stats.beta.logpdf(0.25, 2.0, 5.0), -np.log(5.0)], rtol=1e-12)


def test_rejects_non_positive_shapes():
    with fg.Model():
        with pytest.raises(fg.ModelError, match="'a'.*strictly positive"):
            Beta("p", a=0.0, b=1.0)
