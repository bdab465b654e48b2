"""The multivariate Gauss–Markov chain with a random transition (F, λ): its average energy and its checks.

U_1 = −E[log N(x_1 | m₀, P₀)] and, per step t ≥ 2, U_t = −E_q[log N(x_t | F x_{t−1} + c_t, diag(λ)⁻¹)] under
the two-slice marginals q(x_{t−1}, x_t) and q(F, λ) = MNG(M, V, α, β), written out row by row:

    U_t = (d/2) log 2π − ½ Σ_i E[log λ_i] + ½ Σ_i (ℓ_i E[(y_i − m_iᵀx)²] + E[xᵀVx]),   y = x_t − c_t, x = x_{t−1},

and checked by Monte Carlo over (F, λ) for an observed path.
"""
import numpy as np
import pytest
from scipy.special import digamma
from scipy.stats import multivariate_normal

import fgraph as fg
from fgraph.families import MvNormalMeanCovariance
from fgraph.families.matrix_normal_gamma import MatrixNormalGamma
from fgraph.nodes.mv_gauss_markov_chain import VariationalMvGaussMarkovChainNode
from tests.rules.tables import energy

LOG_2PI = np.log(2 * np.pi)
M0, P0 = np.array([0.3, -0.2]), np.array([[2.0, 0.4], [0.4, 1.0]])
Q_FV = MatrixNormalGamma(np.array([[0.9, 0.2], [-0.1, 0.8]]), np.array([[0.4, 0.1], [0.1, 0.3]]),
                         np.array([3.0, 2.0]), np.array([1.5, 0.5]))
NODE = dict(initial_mean=M0, initial_cov=P0)


def written_out(pairs, q, offset=None):
    steps, d = pairs.mean.shape[0], 2
    c = np.zeros((steps, d)) if offset is None else offset
    M, V = q.matrix_mean, q.column_covariance
    ell, log_ell = q.shape / q.rate, digamma(q.shape) - np.log(q.rate)
    first_mean, first_second = pairs.mean[0, :d], pairs.cov[0, :d, :d] + np.outer(pairs.mean[0, :d],
                                                                                  pairs.mean[0, :d])
    centred = first_second - np.outer(first_mean, M0) - np.outer(M0, first_mean) + np.outer(M0, M0)
    energies = [0.5 * (d * LOG_2PI + np.linalg.slogdet(P0)[1] + np.trace(np.linalg.inv(P0) @ centred))]
    for t in range(1, steps):
        mean, cov = pairs.mean[t], pairs.cov[t]
        second = cov + np.outer(mean, mean)
        xx, yx, yy = second[:d, :d], second[d:, :d], second[d:, d:]
        y_mean, x_mean = mean[d:], mean[:d]
        yy = yy - np.outer(c[t], y_mean) - np.outer(y_mean, c[t]) + np.outer(c[t], c[t])
        yx = yx - np.outer(c[t], x_mean)
        rows = [ell[i] * (yy[i, i] - 2 * M[i] @ yx[i] + M[i] @ xx @ M[i]) + np.trace(V @ xx) for i in range(d)]
        energies.append(0.5 * d * LOG_2PI - 0.5 * np.sum(log_ell) + 0.5 * np.sum(rows))
    return np.array(energies)


def random_pairs(rng, steps):
    roots = rng.normal(size=(steps, 4, 4))
    return MvNormalMeanCovariance(rng.normal(size=(steps, 4)), roots @ np.swapaxes(roots, -1, -2) + 0.1 * np.eye(4))


@pytest.mark.parametrize("with_offset", [False, True])
def test_energy_written_out_row_by_row(with_offset):
    rng = np.random.default_rng(1)
    pairs = random_pairs(rng, 5)
    offset = np.vstack([np.zeros((1, 2)), rng.normal(size=(4, 2))]) if with_offset else None
    result = energy(VariationalMvGaussMarkovChainNode, {"q_out_pairs": pairs, "q_transition": Q_FV},
                    batch_shape=(5,), offset=offset, **NODE)
    np.testing.assert_allclose(result, written_out(pairs, Q_FV, offset), rtol=1e-12)


def test_energy_of_an_observed_path_by_monte_carlo():
    """E over (F, λ) ~ q of −log N(x_t | F x_{t−1}, diag(λ)⁻¹), from 200 000 draws (4 standard errors)."""
    rng = np.random.default_rng(2)
    path = rng.normal(size=(4, 2))
    pairs = MvNormalMeanCovariance(np.concatenate([np.vstack([path[:1], path[:-1]]), path], axis=-1),
                                   np.zeros((4, 4, 4)), check=False)
    result = energy(VariationalMvGaussMarkovChainNode, {"q_out_pairs": pairs, "q_transition": Q_FV},
                    batch_shape=(4,), **NODE)
    assert result[0] == pytest.approx(-multivariate_normal(M0, P0).logpdf(path[0]), rel=1e-12)
    F, lam = Q_FV.sample(rng, 200_000)
    for t in range(1, 4):
        residual = path[t] - F @ path[t - 1]
        draws = np.sum(0.5 * LOG_2PI - 0.5 * np.log(lam) + 0.5 * lam * residual**2, axis=-1)
        assert abs(result[t] - draws.mean()) < 4 * draws.std() / np.sqrt(draws.size)


def test_chains_with_a_transition_each():
    rng = np.random.default_rng(3)
    pairs = [random_pairs(rng, 4) for _ in range(2)]
    second = MatrixNormalGamma(np.eye(2), 0.2 * np.eye(2), np.array([4.0, 1.5]), np.array([2.0, 1.0]))
    both = MatrixNormalGamma(*(np.stack([a, b])[:, None] for a, b in zip(
        (Q_FV.matrix_mean, Q_FV.column_covariance, Q_FV.shape, Q_FV.rate),
        (second.matrix_mean, second.column_covariance, second.shape, second.rate))))
    result = energy(VariationalMvGaussMarkovChainNode,
                    {"q_out_pairs": MvNormalMeanCovariance(np.stack([p.mean for p in pairs]),
                                                           np.stack([p.cov for p in pairs])),
                     "q_transition": both}, batch_shape=(2, 4), transition_batch=(2, 1), **NODE)
    np.testing.assert_allclose(result, [written_out(pairs[0], Q_FV), written_out(pairs[1], second)], rtol=1e-12)


@pytest.mark.parametrize("attributes, match", [
    (dict(batch_shape=(1,)), "T >= 2"),
    (dict(transition_batch=(3,)), r"batch \(\) \(shared by the chains\) or \(1,\)"),
    (dict(initial_cov=np.zeros((2, 2))), "initial_cov must be positive definite"),
    (dict(power=0.5), "cannot carry a power"),
])
def test_bad_attributes_name_the_node(attributes, match):
    attributes = dict(NODE, batch_shape=(5,)) | attributes
    with pytest.raises(ValueError, match=f"node 'x'.*{match}"):
        VariationalMvGaussMarkovChainNode("x", **attributes)


def test_interfaces_shapes_and_streaming():
    node = VariationalMvGaussMarkovChainNode("x", (3, 5), transition_batch=(3, 1), **NODE)
    assert node.mean_field_clusters() == [("out", "pairs"), ("transition",)]
    assert node.interface_batch_shape("transition") == (3, 1) and node.interface_batch_shape("pairs") == (3, 5)
    node.check_event_shapes({"out": (2,), "pairs": (4,), "transition": (2, 2)})
    with pytest.raises(ValueError, match=r"pairs must have event shape \(4,\)"):
        node.check_event_shapes({"pairs": (2,)})
    with pytest.raises(ValueError, match=r"transition must have event shape \(2, 2\)"):
        node.check_event_shapes({"transition": (3, 3)})
    with pytest.raises(fg.ModelError, match="node 'x'.*random transition cannot carry its state"):
        node.carried_state(None)
