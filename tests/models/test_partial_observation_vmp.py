"""A state observed in part (a rank-deficient GaussianLikelihood message) under structured VMP: the free energy is
−log p(y) on this tree, and the expected log of such a message is that of the function itself."""
import numpy as np

import fgraph as fg
from fgraph.families import MvNormalMeanCovariance
from fgraph.families.mvnormal import GaussianLikelihood
from fgraph.nodes.mv_gauss_markov_chain import MvGaussMarkovChain
from fgraph.nodes.mv_linear import MvLinear

F = np.array([[1.0, 0.1], [0.0, 1.0]])


def test_a_chain_observed_in_its_first_component_has_the_exact_free_energy():
    T = 40
    y = np.random.default_rng(0).normal(size=(T, 1))
    with fg.Model() as model:
        x = MvGaussMarkovChain("x", F, 0.1 * np.eye(2), np.zeros(2), np.eye(2), T)
        MvLinear("y", x, [[1.0, 0.0]], [[0.5]], observed=y)
    vmp = fg.infer(model, algorithm="vmp", iterations=3)
    exact = fg.infer(model, algorithm="bp")
    np.testing.assert_allclose(vmp.free_energy, -exact.log_evidence, rtol=1e-12)
    np.testing.assert_allclose(vmp.marginal("x").mean, exact.marginal("x").mean, rtol=1e-10, atol=1e-12)


def test_the_expected_log_of_a_likelihood_message_is_that_of_its_function():
    rng = np.random.default_rng(1)
    a = np.array([1.0, -2.0])
    message = GaussianLikelihood(a * 0.7 / 0.5, np.outer(a, a) / 0.5, log_scale=1.3)  # rank one
    q = MvNormalMeanCovariance(np.array([0.2, -0.4]), np.array([[1.0, 0.3], [0.3, 0.5]]))
    samples = q.sample(rng, size=200000)
    function = message.log_value(samples) - message.log_scale  # the normalised() message: κ = 0
    np.testing.assert_allclose(-q.cross_entropy(message.normalised()), function.mean(), rtol=2e-3)
    closed = (-np.log(2 * np.pi) + message.weighted_mean @ q.mean
              - 0.5 * np.trace(message.precision @ (q.cov + np.outer(q.mean, q.mean))))
    np.testing.assert_allclose(-q.cross_entropy(message.normalised()), closed, rtol=1e-12)
