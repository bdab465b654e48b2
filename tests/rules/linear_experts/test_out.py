"""Table test of LinearExperts towards ``out``: Σ_k π_k f̃_k(y), a mixture with log-scale log Σ_k π_k e^{c_k}."""
import numpy as np
import pytest
from scipy import integrate, stats

from fgraph.families import Categorical, PointMass
from fgraph.nodes.linear_experts import LinearExpertsNode
from tests.rules.linear_experts.cases import INPUT, NODE, OFFSET, PARAMETERS, PRECISION, PREDICTED
from tests.rules.tables import message

PRIOR = np.array([0.25, 0.75])

CASES = [
    # weights ∝ π_k e^{c_k}; components N(μ_k, 1/E[λ_k]) = N(1, 1/2), N(2, 2)
    pytest.param({"m_switch": Categorical(PRIOR), "q_parameters": PARAMETERS, "q_input": INPUT},
                 PRIOR * np.exp(OFFSET), id="latent-switch"),
    # a known switch selects expert 2: weight one, log-scale c_2
    pytest.param({"q_switch": PointMass(np.array([0.0, 1.0]), 1), "q_parameters": PARAMETERS, "q_input": INPUT},
                 np.array([0.0, np.exp(OFFSET[1])]), id="known-switch"),
]


@pytest.mark.parametrize("inputs, unnormalised", CASES)
def test_out(inputs, unnormalised):
    result = message(LinearExpertsNode, "out", inputs, **NODE)
    np.testing.assert_allclose(result.weights, unnormalised / unnormalised.sum(), rtol=1e-12)
    np.testing.assert_allclose(result.log_scale, np.log(unnormalised.sum()), rtol=1e-12)
    np.testing.assert_allclose([c.mean[0] for c in result.components], PREDICTED, rtol=1e-12)
    np.testing.assert_allclose([c.cov[0, 0] for c in result.components], 1.0 / PRECISION, rtol=1e-12)


def test_out_is_the_expected_factor_pointwise():
    """log_scale + log density at y equals log Σ_k π_k exp E_q[log N(y | A_k x̃, 1/λ_k)], the expectation by
    quadrature over λ with A's row integrated in closed form: E[(y − aᵀx̃)² | λ] = (y − mᵀx̃)² + x̃ᵀVx̃/λ."""
    result = message(LinearExpertsNode, "out", {"m_switch": Categorical(PRIOR), "q_parameters": PARAMETERS,
                                                "q_input": INPUT}, **NODE)
    shapes, rates, spreads = [2.0, 1.0], [1.0, 2.0], [2.0, 1.0]
    for y in (-0.7, 1.3):
        terms = []
        for k in range(2):
            def integrand(lam, k=k):
                density = stats.gamma.pdf(lam, shapes[k], scale=1.0 / rates[k])
                log_factor = 0.5 * np.log(lam / (2 * np.pi)) - 0.5 * lam * ((y - PREDICTED[k]) ** 2 + spreads[k] / lam)
                return density * log_factor
            expected_log, _ = integrate.quad(integrand, 0, np.inf, epsabs=1e-13, epsrel=1e-13)
            terms.append(np.log(PRIOR[k]) + expected_log)
        np.testing.assert_allclose(result.log_scale + result.logpdf(np.array([y])), np.logaddexp(*terms), rtol=1e-10)


def test_out_mean_field():
    """Π_k f̃_k(y)^{w_k}: precision Σ_k w_k E[λ_k] = 0.25 · 2 + 0.75 · 0.5 = 7/8, weighted mean
    Σ_k w_k E[λ_k] μ_k = 0.25 · 2 · 1 + 0.75 · 0.5 · 2 = 5/4, so the mean is 10/7 (log-scale 0: mean field)."""
    result = message(LinearExpertsNode, "out", {"q_switch": Categorical(PRIOR), "q_parameters": PARAMETERS,
                                                "q_input": INPUT}, **NODE)
    np.testing.assert_allclose(result.mean, [10.0 / 7.0], rtol=1e-12)
    np.testing.assert_allclose(result.cov, [[8.0 / 7.0]], rtol=1e-12)
