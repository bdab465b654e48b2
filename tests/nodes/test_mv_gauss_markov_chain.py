"""Multivariate Gauss–Markov chain node: the average energy of the whole chain under independent q(x_t).

U_1 = ½ (d log 2π + log|P₀| + tr P₀⁻¹ E[(x_1 − m₀)(x_1 − m₀)ᵀ]),
U_t = ½ (d log 2π + log|Q| + tr Q⁻¹ E[(x_t − F x_{t−1} − c_t)(…)ᵀ]), E[x_t x_{t−1}ᵀ] = E[x_t] E[x_{t−1}]ᵀ.
An observed path gives minus its log density per step; normal q(x_t) give the expectation written out below
by Monte Carlo-free algebra on the moments (a different route: sums over the entries).
"""
import numpy as np
from scipy.stats import multivariate_normal

from fgraph.families import MvNormalMeanCovariance, PointMass
from fgraph.nodes.mv_gauss_markov_chain import MvGaussMarkovChainNode
from tests.rules.tables import energy

F = np.array([[0.9, 0.2], [-0.1, 0.8]])
Q = np.array([[0.5, 0.1], [0.1, 0.3]])
M0, P0 = np.array([0.3, -0.2]), np.array([[2.0, 0.4], [0.4, 1.0]])
CHAIN = dict(transition=F, noise=Q, initial_mean=M0, initial_cov=P0)


def test_an_observed_path_has_minus_its_log_density_per_step():
    path = np.random.default_rng(1).normal(size=(5, 2))
    offset = np.vstack([np.zeros((1, 2)), np.random.default_rng(2).normal(size=(4, 2))])
    result = energy(MvGaussMarkovChainNode, {"q_out": PointMass(path, 1)}, batch_shape=(5,), offset=offset, **CHAIN)
    expected = [-multivariate_normal(M0, P0).logpdf(path[0])] + [
        -multivariate_normal(F @ path[t - 1] + offset[t], Q).logpdf(path[t]) for t in range(1, 5)]
    np.testing.assert_allclose(result, expected, rtol=1e-12)


def test_independent_normal_marginals():
    rng = np.random.default_rng(3)
    means, roots = rng.normal(size=(4, 2)), rng.normal(size=(4, 2, 2))
    covs = roots @ np.swapaxes(roots, -1, -2) + 0.1 * np.eye(2)
    result = energy(MvGaussMarkovChainNode, {"q_out": MvNormalMeanCovariance(means, covs)}, batch_shape=(4,), **CHAIN)
    Q_inv, P0_inv = np.linalg.inv(Q), np.linalg.inv(P0)
    expected = [0.5 * (2 * np.log(2 * np.pi) + np.log(np.linalg.det(P0))
                       + np.sum(P0_inv * (covs[0] + np.outer(means[0] - M0, means[0] - M0))))]
    for t in range(1, 4):
        # E[(x_t − F x_{t−1})(…)ᵀ] with independent steps: Σ_t + F Σ_{t−1} Fᵀ + the outer product of the mean residual
        residual = means[t] - F @ means[t - 1]
        second = covs[t] + F @ covs[t - 1] @ F.T + np.outer(residual, residual)
        expected.append(0.5 * (2 * np.log(2 * np.pi) + np.log(np.linalg.det(Q)) + np.sum(Q_inv * second)))
    np.testing.assert_allclose(result, expected, rtol=1e-12)
