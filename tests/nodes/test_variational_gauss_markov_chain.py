"""The Gauss–Markov chain node with a random gain and precision: pair moments, energies, constructor checks.

* :func:`transition_statistics`: the lag-one moments of a Gaussian Markov chain q(x) from its marginals and the
  off-diagonal κ of its precision, against the dense inverse of the tridiagonal precision and against the
  RTS smoother's J_{t−1} Var[x_t];
* :func:`transition_energy` (the structured energy the free energy uses) against E_q[−log N(x_t | a x_{t−1}, 1/w)]
  with the dense covariance of q(x), and the registered average energy (independent marginals) against −log f
  for point masses and against quadrature over q(a) q(w).
"""
import numpy as np
import pytest
from scipy import integrate
from scipy.special import digamma
from scipy.stats import gamma as gamma_distribution
from scipy.stats import norm

import fgraph as fg
from fgraph.families import NormalMeanVariance, PointMass
from fgraph.families.gamma import Gamma
from fgraph.nodes.gauss_markov_chain import (
    VariationalGaussMarkovChainNode,
    parameter_moments,
    transition_energy,
    transition_statistics,
)
from tests.models.test_gauss_markov_chain_random_parameters import smoother
from tests.rules.tables import energy


def tridiagonal_joint(rng, steps, kappa, chains=()):
    """A Gaussian q(x) whose precision is tridiagonal with off-diagonal κ (diagonally dominant: definite)."""
    diagonal = 2.0 * np.abs(np.asarray(kappa))[..., None] + rng.uniform(0.5, 2.0, size=chains + (steps,))
    precision = np.zeros(chains + (steps, steps))
    index = np.arange(steps)
    precision[..., index, index] = diagonal
    precision[..., index[1:], index[:-1]] = precision[..., index[:-1], index[1:]] = np.asarray(kappa)[..., None]
    return rng.normal(size=chains + (steps,)), np.linalg.inv(precision)


@pytest.mark.parametrize("kappa", [-1.7, -0.2, 0.0, 0.9, 25.0])
def test_pair_moments_equal_the_dense_joint(kappa):
    rng = np.random.default_rng(1)
    means, cov = tridiagonal_joint(rng, 8, kappa)
    previous, cross, current = transition_statistics(NormalMeanVariance(means, np.diag(cov)), kappa, (8,))
    second = cov + np.outer(means, means)
    np.testing.assert_allclose(previous, [np.trace(second[:-1, :-1])], rtol=1e-13)
    np.testing.assert_allclose(cross, [np.sum(np.diag(second, k=1))], rtol=1e-12)
    np.testing.assert_allclose(current, [np.trace(second[1:, 1:])], rtol=1e-13)


def test_pair_moments_per_chain():
    rng = np.random.default_rng(2)
    kappa = np.array([[-0.5], [1.2]])
    means, cov = tridiagonal_joint(rng, 5, kappa[:, 0], chains=(2,))
    variances = np.diagonal(cov, axis1=-2, axis2=-1)
    _, cross, _ = transition_statistics(NormalMeanVariance(means, variances), kappa, (2, 5))
    assert cross.shape == (2, 1)
    for chain in range(2):
        second = cov[chain] + np.outer(means[chain], means[chain])
        np.testing.assert_allclose(cross[chain, 0], np.sum(np.diag(second, k=1)), rtol=1e-12)


def test_lag_one_covariance_equals_the_rts_gain_times_the_next_variance():
    """A smoothed chain with gain a and noise 1/w: κ = −w a; Cov(x_{t−1}, x_t) = J_{t−1} Var[x_t]."""
    rng = np.random.default_rng(3)
    steps, gain, precision = 40, 0.9, 3.0
    extra = np.full(steps, 0.4)
    extra[-1] = 0.0
    means, variances, cross = smoother(gain, 1.0 / precision, extra, rng.normal(size=steps), 0.5)
    _, total, _ = transition_statistics(NormalMeanVariance(means, variances), -precision * gain, (steps,))
    np.testing.assert_allclose(total, [np.sum(means[1:] * means[:-1] + cross)], rtol=1e-12)


def test_structured_energy_equals_the_expectation_under_the_dense_joint():
    rng = np.random.default_rng(4)
    means, cov = tridiagonal_joint(rng, 6, -0.8)
    q_gain, q_precision = NormalMeanVariance(0.6, 0.2), Gamma(3.0, 1.5)
    moments = parameter_moments(q_gain, q_precision)
    result = transition_energy(transition_statistics(NormalMeanVariance(means, np.diag(cov)), -0.8, (6,)), moments, 6)
    second = cov + np.outer(means, means)
    squares = sum(second[t, t] - 2 * 0.6 * second[t, t - 1] + (0.36 + 0.2) * second[t - 1, t - 1] for t in range(1, 6))
    e_log_w = digamma(3.0) - np.log(1.5)
    np.testing.assert_allclose(result, [0.5 * 5 * (np.log(2 * np.pi) - e_log_w) + 0.5 * 2.0 * squares], rtol=1e-13)


CHAIN = {"initial_mean": 0.2, "initial_var": 1.5}


def test_an_observed_path_with_known_parameters_has_minus_its_log_density_per_step():
    path = np.array([0.4, -0.3, 1.1, 0.8])
    result = energy(VariationalGaussMarkovChainNode, {"q_out": PointMass(path), "q_gain": PointMass(0.9),
                                                      "q_precision": PointMass(2.0),
                                                      "q_moments": PointMass([0.0, 0.0, 1.0, 0.0], 1)},
                    batch_shape=(4,), **CHAIN)
    expected = -np.concatenate([[norm.logpdf(path[0], 0.2, np.sqrt(1.5))],
                                norm.logpdf(path[1:], 0.9 * path[:-1], np.sqrt(0.5))])
    np.testing.assert_allclose(result, expected, rtol=1e-12)


def test_the_energy_of_a_step_against_quadrature_over_the_gain_and_the_precision():
    path = np.array([0.7, -0.4])
    result = energy(VariationalGaussMarkovChainNode, {"q_out": PointMass(path), "q_gain": NormalMeanVariance(0.5, 0.3),
                                                      "q_precision": Gamma(2.5, 1.2),
                                                      "q_moments": PointMass([0.0, 0.0, 1.0, 0.0], 1)},
                    batch_shape=(2,), **CHAIN)
    # −log N(x_2 | a x_1, 1/w) = ½ log 2π − ½ log w + ½ w (x_2 − a x_1)²: a and w independent, one quadrature each
    q_w = gamma_distribution(2.5, scale=1 / 1.2)
    mean_log_w = integrate.quad(lambda w: np.log(w) * q_w.pdf(w), 0.0, np.inf, epsabs=1e-13)[0]
    mean_w = integrate.quad(lambda w: w * q_w.pdf(w), 0.0, np.inf, epsabs=1e-13)[0]
    squares = integrate.quad(lambda a: (path[1] - a * path[0]) ** 2 * norm.pdf(a, 0.5, np.sqrt(0.3)), -np.inf, np.inf,
                             epsabs=1e-13)[0]
    expected = 0.5 * np.log(2 * np.pi) - 0.5 * mean_log_w + 0.5 * mean_w * squares
    np.testing.assert_allclose(result[1], expected, rtol=1e-9)


@pytest.mark.parametrize("batch, attributes, match", [
    ((1,), {}, "T >= 2"),
    ((4,), {"initial_var": 0.0}, "initial_var must be strictly positive"),
    ((3, 4), {"gain_batch": (3,)}, "the gain must have batch"),
])
def test_the_constructor_rejects(batch, attributes, match):
    with pytest.raises(ValueError, match=f"node 'x': .*{match}"):
        VariationalGaussMarkovChainNode("x", batch, **{"initial_var": 1.0, **attributes})


def test_streaming_is_refused():
    node = VariationalGaussMarkovChainNode("x", (4,), initial_var=1.0)
    with pytest.raises(fg.ModelError, match="cannot carry its state"):
        node.carried_state(NormalMeanVariance(np.zeros(4), np.ones(4)))
