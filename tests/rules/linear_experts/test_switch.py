"""Table test of LinearExperts towards ``switch``: ∝ ∫ f̃_k(y) m_out(y) dy, log-scale the log of their sum."""
import numpy as np
import pytest
from scipy import integrate

from fgraph.families import GaussianLikelihood, MvNormalMeanCovariance, PointMass
from fgraph.nodes.linear_experts import LinearExpertsNode
from tests.rules.linear_experts.cases import INPUT, NODE, OFFSET, PARAMETERS, PRECISION, PREDICTED, log_normal
from tests.rules.tables import message

VAR = 1.0 / PRECISION  # 1/2, 2

CASES = [
    # m_out = N(0, 1): ∫ N(y | μ_k, 1/ℓ_k) N(y | 0, 1) dy = N(μ_k | 0, 1/ℓ_k + 1)
    pytest.param({"m_out": MvNormalMeanCovariance(np.zeros(1), np.eye(1)), "q_parameters": PARAMETERS,
                  "q_input": INPUT}, OFFSET + log_normal(PREDICTED, 0.0, VAR + 1.0), id="normal-message"),
    # m_out = N(1, 1/2): N(μ_k | 1, 1/ℓ_k + 1/2)
    pytest.param({"m_out": MvNormalMeanCovariance(np.ones(1), 0.5 * np.eye(1)), "q_parameters": PARAMETERS,
                  "q_input": INPUT}, OFFSET + log_normal(PREDICTED, 1.0, VAR + 0.5), id="off-centre-message"),
    # m_out = exp(0) (2π)^{-1/2} exp(y − y²/2) = e^{1/2} N(y | 1, 1) (its κ is 0: the engine adds the scale)
    pytest.param({"m_out": GaussianLikelihood(np.ones(1), np.eye(1), 0.0), "q_parameters": PARAMETERS,
                  "q_input": INPUT}, OFFSET + 0.5 + log_normal(PREDICTED, 1.0, VAR + 1.0), id="likelihood-message"),
    # mean field, q(y) = N(1/2, 1/5): E log f̃_k(y) = c_k + log N(1/2 | μ_k, 1/ℓ_k) − ℓ_k/10
    pytest.param({"q_out": MvNormalMeanCovariance(np.array([0.5]), 0.2 * np.eye(1)), "q_parameters": PARAMETERS,
                  "q_input": INPUT}, OFFSET + log_normal(0.5, PREDICTED, VAR) - 0.1 * PRECISION, id="mean-field"),
    # known y = 1/2: log f̃_k(1/2) = c_k + log N(1/2 | μ_k, 1/ℓ_k)
    pytest.param({"q_out": PointMass(np.array([0.5]), 1), "q_parameters": PARAMETERS, "q_input": INPUT},
                 OFFSET + log_normal(0.5, PREDICTED, VAR), id="known-out"),
]


@pytest.mark.parametrize("inputs, log_values", CASES)
def test_switch(inputs, log_values):
    result = message(LinearExpertsNode, "switch", inputs, **NODE)
    np.testing.assert_allclose(result.probabilities, np.exp(log_values) / np.exp(log_values).sum(), rtol=1e-12)
    np.testing.assert_allclose(result.log_scale, np.log(np.exp(log_values).sum()), rtol=1e-12)


def test_switch_against_quadrature_with_a_likelihood_in_two_dimensions():
    """h = 2 and a rank-one likelihood message: ∫ f̃_k(y) m(y) dy by two-dimensional quadrature."""
    from fgraph.families.matrix_normal_gamma import MatrixNormalGamma
    parameters = MatrixNormalGamma(np.array([[[1.0, 0.5], [-0.5, 0.0]]]), np.array([[[0.5, 0.1], [0.1, 0.3]]]),
                                   np.array([[2.0, 3.0]]), np.array([[1.0, 2.0]]))
    direction = np.array([1.0, -2.0])
    m_out = GaussianLikelihood(np.array([0.4, -0.3]), np.outer(direction, direction) / 3.0 + 0.2 * np.eye(2), 0.0)
    result = message(LinearExpertsNode, "switch", {"m_out": m_out, "q_parameters": parameters,
                                                   "q_input": PointMass(np.array([0.8]), 1)},
                     batch_shape=(1,), plate_shape=())
    mean = np.array([1.0 * 0.8 + 0.5, -0.5 * 0.8])
    lam = np.array([2.0, 1.5])
    from scipy.special import digamma
    spread = np.array([0.8, 1.0]) @ np.array([[0.5, 0.1], [0.1, 0.3]]) @ np.array([0.8, 1.0])
    offset = 0.5 * np.sum(digamma([2.0, 3.0]) - np.log([1.0, 2.0]) - np.log(lam)) - spread

    def integrand(y2, y1):
        y = np.array([y1, y2])
        log_factor = offset + np.sum(log_normal(y, mean, 1.0 / lam))
        return np.exp(log_factor + m_out.log_value(y))

    value, _ = integrate.dblquad(integrand, -12, 12, -12, 12, epsabs=1e-12, epsrel=1e-11)
    np.testing.assert_allclose(result.log_scale, np.log(value), rtol=1e-8)
