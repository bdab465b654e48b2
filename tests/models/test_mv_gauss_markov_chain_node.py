"""The multivariate Gauss–Markov compound node in graphs: closed-form evidence, a Kalman/RTS loop, the scalar chain."""
import numpy as np
import pytest
from scipy.stats import multivariate_normal

import fgraph as fg
from fgraph.nodes import MvNormal, Normal
from fgraph.nodes.gauss_markov_chain import GaussMarkovChain
from fgraph.nodes.mv_gauss_markov_chain import MvGaussMarkovChain
from tests.rules.mv_gauss_markov_chain.test_out import F, M0, P0, Q, chain_prior

R = np.array([[0.6, -0.2], [-0.2, 0.4]])


def compound(y, **options):
    with fg.Model() as model:
        x = MvGaussMarkovChain("x", F, Q, M0, P0, y.shape[-2], batch_shape=y.shape[:-2], **options)
        MvNormal("y", mean=x, cov=R, observed=y)
    return model


def kalman_rts(y, offset=None):
    """Kalman filter and RTS smoother as a loop over time (one sequence): log p(y), smoothed means and covariances."""
    steps, d = y.shape
    c = np.zeros((steps, d)) if offset is None else offset
    mean, cov, log_evidence = M0.copy(), P0.copy(), 0.0
    filtered, filtered_cov, predicted, predicted_cov = [], [], [], []
    for t in range(steps):
        if t > 0:
            mean, cov = F @ mean + c[t], F @ cov @ F.T + Q
        predicted.append(mean), predicted_cov.append(cov)
        innovation_cov = cov + R
        log_evidence += multivariate_normal(mean, innovation_cov).logpdf(y[t])
        gain = cov @ np.linalg.inv(innovation_cov)
        mean, cov = mean + gain @ (y[t] - mean), cov - gain @ cov
        filtered.append(mean), filtered_cov.append(cov)
    smoothed, smoothed_cov = [filtered[-1]], [filtered_cov[-1]]
    for t in range(steps - 2, -1, -1):
        gain = filtered_cov[t] @ F.T @ np.linalg.inv(predicted_cov[t + 1])
        smoothed.insert(0, filtered[t] + gain @ (smoothed[0] - predicted[t + 1]))
        smoothed_cov.insert(0, filtered_cov[t] + gain @ (smoothed_cov[0] - predicted_cov[t + 1]) @ gain.T)
    return log_evidence, np.array(smoothed), np.array(smoothed_cov), np.array(filtered)


def test_evidence_and_marginals_equal_the_stacked_joint_normal():
    y = np.random.default_rng(1).normal(size=(6, 2))
    result = fg.infer(compound(y), free_energy=True)
    mu, sigma = chain_prior(6)
    observed_cov = sigma + np.kron(np.eye(6), R)
    assert result.log_evidence == pytest.approx(multivariate_normal(mu, observed_cov).logpdf(y.reshape(-1)), rel=1e-11)
    assert result.free_energy[-1] == pytest.approx(-result.log_evidence, rel=1e-11)
    gain = sigma @ np.linalg.inv(observed_cov)
    posterior_mean = (mu + gain @ (y.reshape(-1) - mu)).reshape(6, 2)
    posterior_cov = sigma - gain @ sigma
    np.testing.assert_allclose(result.marginal("x").mean, posterior_mean, atol=1e-11)
    np.testing.assert_allclose(result.marginal("x").cov, [posterior_cov[2 * t:2 * t + 2, 2 * t:2 * t + 2]
                                                          for t in range(6)], atol=1e-11)
    np.testing.assert_allclose(result.evidence_per_variable()["x"], result.log_evidence, rtol=1e-11)


def test_long_sequences_against_a_kalman_and_rts_loop():
    y = np.cumsum(np.random.default_rng(2).normal(size=(3000, 2)), axis=0) * 0.05
    result = fg.infer(compound(y))
    log_evidence, smoothed, smoothed_cov, _ = kalman_rts(y)
    assert result.log_evidence == pytest.approx(log_evidence, rel=1e-10)
    np.testing.assert_allclose(result.marginal("x").mean, smoothed, atol=1e-9)
    np.testing.assert_allclose(result.marginal("x").cov, smoothed_cov, atol=1e-10)


def test_control_inputs_shift_the_dynamics():
    rng = np.random.default_rng(4)
    y, u = rng.normal(size=(40, 2)), rng.normal(size=(39, 1))
    B = np.array([[0.5], [-1.0]])
    result = fg.infer(compound(y, control_matrix=B, control=u))
    offset = np.vstack([np.zeros((1, 2)), u @ B.T])
    log_evidence, smoothed, _, _ = kalman_rts(y, offset)
    assert result.log_evidence == pytest.approx(log_evidence, rel=1e-11)
    np.testing.assert_allclose(result.marginal("x").mean, smoothed, atol=1e-10)


def test_a_batch_of_chains_equals_separate_runs():
    sequences = np.random.default_rng(7).normal(size=(3, 9, 2))
    together = fg.infer(compound(sequences), free_energy=True)
    separate = [fg.infer(compound(y)) for y in sequences]
    assert together.log_evidence == pytest.approx(sum(r.log_evidence for r in separate), rel=1e-12)
    assert together.free_energy[-1] == pytest.approx(-together.log_evidence, rel=1e-11)
    for chain, result in enumerate(separate):
        np.testing.assert_allclose(together.marginal("x").mean[chain], result.marginal("x").mean, atol=1e-12)
        np.testing.assert_allclose(together.marginal("x").cov[chain], result.marginal("x").cov, atol=1e-12)


def test_one_dimensional_states_equal_the_scalar_chain():
    y = np.random.default_rng(9).normal(size=50)
    with fg.Model() as scalar:
        x = GaussMarkovChain("x", 0.7, 0.4, 0.1, 2.0, 50)
        Normal("y", mean=x, var=0.3, observed=y)
    with fg.Model() as vector:
        x = MvGaussMarkovChain("x", [[0.7]], [[0.4]], [0.1], [[2.0]], 50)
        MvNormal("y", mean=x, cov=[[0.3]], observed=y[:, None])
    a, b = fg.infer(scalar), fg.infer(vector)
    assert b.log_evidence == pytest.approx(a.log_evidence, rel=1e-12)
    np.testing.assert_allclose(b.marginal("x").mean[:, 0], a.marginal("x").mean, atol=1e-12)
    np.testing.assert_allclose(b.marginal("x").cov[:, 0, 0], a.marginal("x").var, rtol=1e-11)


@pytest.mark.parametrize("change, match", [
    (dict(transition=np.eye(3)), r"transition must have shape \(2, 2\) or \(4, 2, 2\)"),
    (dict(noise=np.array([[1.0, 2.0], [2.0, 1.0]])), "noise must be positive semi-definite"),
    (dict(noise=np.array([[1.0, 0.5], [0.0, 1.0]])), "noise must be symmetric"),
    (dict(initial_cov=np.zeros((2, 2))), "initial_cov must be positive definite"),
    (dict(transition=np.array([[np.nan, 0.0], [0.0, 1.0]])), "transition contains NaN"),
])
def test_bad_parameters_are_reported_with_the_node(change, match):
    parameters = dict(transition=F, noise=Q, initial_mean=M0, initial_cov=P0) | change
    with fg.Model():
        with pytest.raises(fg.ModelError, match=f"node 'x'.*{match}"):
            MvGaussMarkovChain("x", length=5, **parameters)


def test_bad_lengths_and_controls_are_named_errors():
    with fg.Model():
        with pytest.raises(fg.ModelError, match="length must be a whole number"):
            MvGaussMarkovChain("x", F, Q, M0, P0, 0)
        with pytest.raises(fg.ModelError, match="control_matrix and control go together"):
            MvGaussMarkovChain("x", F, Q, M0, P0, 5, control=np.zeros((4, 1)))
        with pytest.raises(fg.ModelError, match=r"control must have shape batch \+ \(T - 1, k\)"):
            MvGaussMarkovChain("x", F, Q, M0, P0, 5, control_matrix=np.ones((2, 1)), control=np.zeros((5, 1)))


def test_a_causal_chain_gives_the_filtering_marginals_and_the_same_evidence():
    y = np.cumsum(np.random.default_rng(12).normal(size=(400, 2)), axis=0) * 0.1
    result = fg.infer(compound(y, causal=True), free_energy=True)
    log_evidence, _, _, filtered = kalman_rts(y)
    assert result.log_evidence == pytest.approx(log_evidence, rel=1e-11)
    assert result.free_energy[-1] == pytest.approx(-log_evidence, rel=1e-11)
    np.testing.assert_allclose(result.marginal("x").mean, filtered, atol=1e-10)
    # the message to x_t carries the evidence of y_1..y_{t−1}
    to_states, _ = result.messages("x", "out")
    assert to_states.log_scale[150] == pytest.approx(kalman_rts(y[:150])[0], rel=1e-11)


def test_chains_may_each_start_from_their_own_state():
    """Per-chain m₀ and P₀ (a stream's carried filter states): each chain as its own run."""
    rng = np.random.default_rng(13)
    sequences = rng.normal(size=(2, 7, 2))
    means = rng.normal(size=(2, 2))
    covs = np.array([P0, 0.5 * P0 + 0.1 * np.eye(2)])
    with fg.Model() as model:
        x = MvGaussMarkovChain("x", F, Q, means, covs, 7, batch_shape=(2,))
        MvNormal("y", mean=x, cov=R, observed=sequences)
    together = fg.infer(model)
    for chain in range(2):
        with fg.Model() as single:
            x = MvGaussMarkovChain("x", F, Q, means[chain], covs[chain], 7)
            MvNormal("y", mean=x, cov=R, observed=sequences[chain])
        alone = fg.infer(single)
        np.testing.assert_allclose(together.marginal("x").mean[chain], alone.marginal("x").mean, atol=1e-12)
    assert together.log_evidence == pytest.approx(sum(
        fg.infer(_single(sequences[c], means[c], covs[c])).log_evidence for c in range(2)), rel=1e-12)


def _single(y, mean, cov):
    with fg.Model() as model:
        x = MvGaussMarkovChain("x", F, Q, mean, cov, len(y))
        MvNormal("y", mean=x, cov=R, observed=y)
    return model
