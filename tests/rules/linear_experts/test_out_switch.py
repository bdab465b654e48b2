"""Table test of the joint marginal of (out, switch) of LinearExperts: q(y, z = k) = γ_k N(y | μ_k, Σ_k)."""
import numpy as np
import pytest

from fgraph.families import Categorical, GaussianLikelihood, MvNormalMeanCovariance
from fgraph.nodes.linear_experts import LinearExpertsNode
from tests.rules.linear_experts.cases import INPUT, OFFSET, PARAMETERS, PRECISION, PREDICTED, log_normal
from tests.rules.tables import message

PRIOR = np.array([0.25, 0.75])
VAR = 1.0 / PRECISION

CASES = [
    # m_out = N(0, 1): γ_k ∝ π_k e^{c_k} N(μ_k | 0, 1/ℓ_k + 1); q(y | k) has precision ℓ_k + 1 and mean
    # ℓ_k μ_k / (ℓ_k + 1): (2/3, 1/3) for expert 1, (2/3, 2/3) for expert 2
    pytest.param(MvNormalMeanCovariance(np.zeros(1), np.eye(1)),
                 PRIOR * np.exp(OFFSET + log_normal(PREDICTED, 0.0, VAR + 1.0)), [2.0 / 3.0, 2.0 / 3.0],
                 [1.0 / 3.0, 2.0 / 3.0], id="normal-message"),
    # m_out ∝ N(y | 1, 1): precision ℓ_k + 1, mean (ℓ_k μ_k + 1)/(ℓ_k + 1): (1, 1/3) and (4/3, 2/3)
    pytest.param(GaussianLikelihood(np.ones(1), np.eye(1), 0.7),
                 PRIOR * np.exp(OFFSET + log_normal(PREDICTED, 1.0, VAR + 1.0)), [1.0, 4.0 / 3.0],
                 [1.0 / 3.0, 2.0 / 3.0], id="likelihood-message"),
]


@pytest.mark.parametrize("m_out, unnormalised, means, variances", CASES)
def test_out_switch(m_out, unnormalised, means, variances):
    inputs = {"m_out": m_out, "m_switch": Categorical(PRIOR), "q_parameters": PARAMETERS, "q_input": INPUT}
    node = LinearExpertsNode("node", (2,), plate_shape=())
    from fgraph import registry
    bound = registry.resolve(registry.MARGINAL, LinearExpertsNode, ("out", "switch"),
                             {k: type(v) for k, v in inputs.items()}, "table test")
    result = bound(inputs, node)
    np.testing.assert_allclose(result.weights, unnormalised / unnormalised.sum(), rtol=1e-12)
    np.testing.assert_allclose([c.mean[0] for c in result.components], means, rtol=1e-12)
    np.testing.assert_allclose([c.cov[0, 0] for c in result.components], variances, rtol=1e-12)
    # its weights are the product of the switch's prior and the message towards the switch
    towards_switch = message(LinearExpertsNode, "switch", {"m_out": m_out, "q_parameters": PARAMETERS,
                                                           "q_input": INPUT}, batch_shape=(2,), plate_shape=())
    product = PRIOR * towards_switch.probabilities
    np.testing.assert_allclose(result.weights, product / product.sum(), rtol=1e-12)


