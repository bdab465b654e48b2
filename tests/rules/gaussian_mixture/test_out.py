"""Table test of GaussianMixture towards ``out``: precision Σ_k E[z_k] ν_k W_k, weighted mean Σ_k E[z_k] ν_k W_k m_k."""
import numpy as np
import pytest

from fgraph.families import Categorical, MultivariateNormal, PointMass
from fgraph.nodes.gaussian_mixture import GaussianMixtureNode, expected_log_likelihoods
from tests.rules.gaussian_mixture.cases import LOCATIONS, MEAN_PRECISION, NODE, PARAMETERS
from tests.rules.tables import message

CASES = [
    # q(z) = (1/4, 3/4): precision ¼ · 3I + ¾ · diag(2, 8) = diag(2.25, 6.75);
    # weighted mean ¼ · 3I · 0 + ¾ · diag(2, 8) (1, −1) = (1.5, −6)
    pytest.param(Categorical(np.array([0.25, 0.75])), np.diag([2.25, 6.75]), np.array([1.5, -6.0]), id="soft"),
    # a known switch on component 1: N(0, (3I)⁻¹)
    pytest.param(PointMass(np.array([1.0, 0.0]), 1), 3.0 * np.eye(2), np.zeros(2), id="known-switch"),
]


@pytest.mark.parametrize("q_switch, precision, weighted_mean", CASES)
def test_out(q_switch, precision, weighted_mean):
    result = message(GaussianMixtureNode, "out", {"q_switch": q_switch, "q_parameters": PARAMETERS}, **NODE)
    assert isinstance(result, MultivariateNormal)
    np.testing.assert_allclose(result.precision, precision, rtol=1e-12)
    np.testing.assert_allclose(result.weighted_mean, weighted_mean, rtol=1e-12, atol=1e-15)


def test_the_message_is_exp_of_the_expected_log_factor_up_to_a_constant():
    """log μ(x) − log μ(x') = Σ_k E[z_k] (E[log N(x | μ_k, Λ_k⁻¹)] − E[log N(x' | ...)]) at two points."""
    weights = np.array([0.4, 0.6])
    result = message(GaussianMixtureNode, "out", {"q_switch": Categorical(weights), "q_parameters": PARAMETERS},
                     **NODE)
    node = GaussianMixtureNode("node", **NODE)
    a, b = np.array([0.5, 2.0]), np.array([-1.0, 0.3])
    expected = weights @ (expected_log_likelihoods(PointMass(a, 1), PARAMETERS, node)
                          - expected_log_likelihoods(PointMass(b, 1), PARAMETERS, node))
    np.testing.assert_allclose(result.logpdf(a) - result.logpdf(b), expected, rtol=1e-12)
    assert np.allclose(MEAN_PRECISION[1] @ LOCATIONS[1], [2.0, -8.0])
