"""Bernoulli node: average energy, DSL data checks, parameter validation."""
import numpy as np
import pytest
from scipy import integrate, stats

import fgraph as fg
from fgraph.families import Bernoulli as BernoulliDistribution, Beta, PointMass
from fgraph.nodes import Bernoulli
from fgraph.nodes.bernoulli import BernoulliNode
from tests.rules.tables import energy


def test_energy_against_integration():
    """-E[x] E[log p] - (1 - E[x]) E[log(1 - p)], with the expectations under Beta(2, 3) by quadrature."""
    mean_log = integrate.quad(lambda p: np.log(p) * stats.beta.pdf(p, 2.0, 3.0), 0.0, 1.0)[0]
    mean_log1m = integrate.quad(lambda p: np.log1p(-p) * stats.beta.pdf(p, 2.0, 3.0), 0.0, 1.0)[0]
    result = energy(BernoulliNode, {"q_out": BernoulliDistribution(0.3), "q_p": Beta(2.0, 3.0)})
    np.testing.assert_allclose(result, -(0.3 * mean_log + 0.7 * mean_log1m), rtol=1e-9)


def test_energy_with_point_masses():
    # p = 1/2: log 2 whatever x; p = 1 and x = 1: 0 (the impossible outcome x = 0 has weight 0)
    result = energy(BernoulliNode, {"q_out": PointMass([1.0, 1.0]), "q_p": PointMass([0.5, 1.0])})
    np.testing.assert_allclose(result, [np.log(2.0), 0.0], atol=1e-15)


def test_rejects_data_other_than_zero_or_one():
    with fg.Model():
        with pytest.raises(fg.DataError, match="'x'.*0 or 1"):
            Bernoulli("x", p=0.5, observed=[0, 1, 2])


def test_accepts_booleans():
    with fg.Model() as model:
        Bernoulli("x", p=0.5, observed=np.array([True, False]))
    np.testing.assert_array_equal(model.data["x"], [1.0, 0.0])


def test_rejects_probability_outside_the_unit_interval():
    with fg.Model():
        with pytest.raises(fg.ModelError, match="'p'.*\\[0, 1\\]"):
            Bernoulli("x", p=1.5, observed=[1])
