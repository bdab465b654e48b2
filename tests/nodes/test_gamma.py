"""The gamma node's average energy U = -E[log Gamma(out | a, β)], with a known and with a random shape."""
import numpy as np
from scipy import stats

from fgraph.families import GammaShapeLikelihood, PointMass
from fgraph.families.gamma import Gamma
from fgraph.nodes.gamma import GammaNode
from tests.rules.tables import energy

SAMPLE_COUNT = 400_000
STANDARD_ERRORS = 5.0


def test_energy_with_clamped_interfaces_is_minus_log_density():
    x = np.array([0.5, 2.0])
    result = energy(GammaNode, {"q_out": PointMass(x), "q_shape": PointMass(2.5), "q_rate": PointMass(3.0)})
    np.testing.assert_allclose(result, -stats.gamma(a=2.5, scale=1.0 / 3.0).logpdf(x), rtol=1e-12)


def test_energy_with_a_random_shape_against_monte_carlo():
    """E[log Γ(a)] (not log Γ(E[a])) for a random shape: independent draws of (out, a, β), mean of -log f within 5 SE."""
    q_out, q_shape, q_rate = Gamma(3.0, 2.0), Gamma(4.0, 2.0), Gamma(5.0, 2.5)
    rng = np.random.default_rng(1)
    out = stats.gamma(a=3.0, scale=0.5).rvs(SAMPLE_COUNT, random_state=rng)
    shape = stats.gamma(a=4.0, scale=0.5).rvs(SAMPLE_COUNT, random_state=rng)
    rate = stats.gamma(a=5.0, scale=0.4).rvs(SAMPLE_COUNT, random_state=rng)
    minus_log_f = -stats.gamma(a=shape, scale=1.0 / rate).logpdf(out)
    result = energy(GammaNode, {"q_out": q_out, "q_shape": q_shape, "q_rate": q_rate})
    assert abs(result - minus_log_f.mean()) < STANDARD_ERRORS * minus_log_f.std() / np.sqrt(SAMPLE_COUNT)


def test_energy_with_a_shape_marginal_of_its_own_family():
    q_shape = GammaShapeLikelihood(2.0, -4.5, 10.0)
    result = energy(GammaNode, {"q_out": PointMass(1.5), "q_shape": q_shape, "q_rate": PointMass(2.0)})
    expected = -(q_shape.mean * np.log(2.0) - q_shape.mean_log_gamma + (q_shape.mean - 1.0) * np.log(1.5) - 2.0 * 1.5)
    np.testing.assert_allclose(result, expected, rtol=1e-13)
