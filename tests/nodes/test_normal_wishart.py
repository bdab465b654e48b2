"""NormalWishart prior node: the average energy against Monte Carlo (and its closed form as a cross-entropy)."""
import numpy as np

from fgraph.families import PointMass
from fgraph.families.normal_wishart import NormalWishart as NormalWishartFamily
from fgraph.nodes.normal_wishart import NormalWishartNode
from tests.rules.tables import energy

PRIOR = dict(mean=np.array([1.0, -0.5]), beta=0.8, scale=np.array([[1.2, 0.3], [0.3, 0.6]]), df=3.5)


def test_energy_is_the_cross_entropy_against_monte_carlo():
    q = NormalWishartFamily(np.array([0.2, 0.1]), 3.0, np.array([[0.5, -0.1], [-0.1, 0.9]]), 6.0)
    inputs = {"q_out": q, "q_mean": PointMass(PRIOR["mean"], 1), "q_precision_scale": PointMass(PRIOR["beta"]),
              "q_scale": PointMass(PRIOR["scale"], 2), "q_df": PointMass(PRIOR["df"])}
    value = energy(NormalWishartNode, inputs)
    prior = NormalWishartFamily(PRIOR["mean"], PRIOR["beta"], PRIOR["scale"], PRIOR["df"])
    np.testing.assert_allclose(value, q.cross_entropy(prior), rtol=1e-12)
    draws = q.sample(np.random.default_rng(0), 200_000)
    log_prior = prior.logpdf(draws)
    assert abs(value + log_prior.mean()) < 5 * log_prior.std() / np.sqrt(log_prior.size)
