"""Table test of GaussianMixture towards ``switch``: log μ(k) = E[log N(x | μ_k, Λ_k⁻¹)], worked by hand."""
import numpy as np
import pytest
from scipy import stats

from fgraph.families import MvNormalMeanCovariance, PointMass
from fgraph.families.categorical import Categorical
from fgraph.families.normal_wishart import NormalWishart
from fgraph.nodes.gaussian_mixture import GaussianMixtureNode
from tests.rules.gaussian_mixture.cases import EULER, LOG_2PI, NODE, PARAMETERS
from tests.rules.tables import message


def softmax(logits):
    logits = np.asarray(logits, dtype=float)
    return np.exp(logits - np.logaddexp.reduce(logits, axis=-1, keepdims=True))


CASES = [
    # x = (1, 1) known.  E[(x − μ)ᵀΛ(x − μ)] = d/β + ν (x − m)ᵀW(x − m):
    # k = 1: 2/2 + 3 · (1 + 1) = 7;   k = 2: x − m = (0, 2): 2/1 + 4 · (2 · 4) = 34
    # log μ(k) = −log 2π + ½ E[log|Λ_k|] − ½ E[...]: (1 − γ − 3.5, 1.5 − γ − 17)
    pytest.param({"q_out": PointMass(np.array([1.0, 1.0]), 1), "q_parameters": PARAMETERS},
                 softmax([-LOG_2PI + 1.0 - EULER - 3.5, -LOG_2PI + 1.5 - EULER - 17.0]), id="observed-out"),
    # q(x) = N((1, 1), diag(1/2, 1)): + ν tr(W Σ_x): k = 1: 3 · 1.5 = 4.5 → 11.5; k = 2: 4 · (1/4 + 2) = 9 → 43
    pytest.param({"q_out": MvNormalMeanCovariance(np.array([1.0, 1.0]), np.diag([0.5, 1.0])),
                  "q_parameters": PARAMETERS},
                 softmax([1.0 - 5.75, 1.5 - 21.5]), id="latent-out"),
    # x = (0, 0): k = 1: 1 + 0 = 1; k = 2: x − m = (−1, 1): 2 + 4 · (1/2 + 2) = 12 → (1 − γ − 0.5, 1.5 − γ − 6)
    pytest.param({"q_out": PointMass(np.zeros(2), 1), "q_parameters": PARAMETERS},
                 softmax([0.5, -4.5]), id="observed-at-the-first-mean"),
]


@pytest.mark.parametrize("inputs, probabilities", CASES)
def test_switch(inputs, probabilities):
    result = message(GaussianMixtureNode, "switch", inputs, **NODE)
    assert isinstance(result, Categorical)
    np.testing.assert_allclose(result.probabilities, probabilities, rtol=1e-12, atol=1e-300)


def test_the_logits_are_the_expected_log_likelihoods_by_monte_carlo():
    """E_q(μ, Λ)[log N(x | μ, Λ⁻¹)] by sampling q and scipy's density; the message's logits differ from it by one
    constant over k (they are normalised)."""
    from fgraph.nodes.gaussian_mixture import expected_log_likelihoods

    rng = np.random.default_rng(3)
    x = np.array([0.3, -0.8])
    node = GaussianMixtureNode("node", **NODE)
    exact = expected_log_likelihoods(PointMass(x, 1), PARAMETERS, node)
    means, precisions = PARAMETERS.sample(rng, 100_000)  # (S, K, d), (S, K, d, d)
    for k in range(2):
        draws = np.array([stats.multivariate_normal.logpdf(x, means[s, k], np.linalg.inv(precisions[s, k]))
                          for s in range(0, 100_000, 10)])
        error = draws.std() / np.sqrt(draws.size)
        assert abs(draws.mean() - exact[k]) < 5 * error, (k, draws.mean(), exact[k], error)


def test_a_batch_equals_its_elements():
    """A plate of points and a batch of parameters (K, 1) against each point alone."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 2))
    batched = NormalWishart(PARAMETERS.location[:, None], PARAMETERS.precision_scale[:, None],
                            PARAMETERS.scale[:, None], PARAMETERS.df[:, None])
    plate = message(GaussianMixtureNode, "switch", {"q_out": PointMass(x, 1), "q_parameters": batched},
                    batch_shape=(2, 5), plate_shape=(5,))
    assert plate.batch_shape == (5,)
    for n in range(5):
        single = message(GaussianMixtureNode, "switch", {"q_out": PointMass(x[n], 1), "q_parameters": PARAMETERS},
                         **NODE)
        np.testing.assert_allclose(plate.probabilities[n], single.probabilities, rtol=1e-12)
