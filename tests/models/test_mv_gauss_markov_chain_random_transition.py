"""The multivariate Gauss–Markov chain with a random transition (F, λ) ~ MatrixNormalGamma under VMP (VB-LDS).

Model: (F, λ) ~ MNG(M₀, V₀, α₀, β₀) (rows f_i | λ_i ~ N(m₀_i, V₀/λ_i), λ_i ~ Gamma(α₀_i, β₀_i)),
x_1 ~ N(m₀, P₀), x_t = F x_{t−1} + c_t + N(0, diag(λ)⁻¹), y_t = C x_t + N(0, R), with the structured mean field
q(x_1..x_T) q(F, λ) of Beal (2003, ch. 5). The references:

* :func:`reference_vb`, a hand-written numpy VB-LDS: a Kalman filter and RTS smoother as a loop over time with
  the corrected matrices F̄ = M, Q̄ = diag(1/E[λ]) and the extra precision d V on x_1..x_{T−1}, the lag-one
  covariances G_{t−1} S_t from the RTS gain, then the closed-form matrix-normal–gamma update; its free energy is
  E_q[−log p(y, x | F, λ)] − H[q(x)] + KL(q(F, λ) ‖ p(F, λ)), every term written out from the smoothed
  moments (not from the scale factors the engine reads). The node must equal it at every iteration
  (marginals, q(F, λ), free energy), in both orders of a sweep;
* for d = 1, the scalar :func:`~fgraph.nodes.gauss_markov_chain.GaussMarkovChain` with a known gain and a Gamma
  precision (see :func:`test_one_dimensional_states_approach_the_scalar_chain_with_a_known_gain`);
* a simulated rotation (T = 3000), whose F the posterior recovers.
"""
import numpy as np
import pytest
from scipy.special import digamma, gammaln

import fgraph as fg
from fgraph.families.matrix_normal_gamma import MatrixNormalGamma as MNG
from fgraph.nodes import Gamma, GaussMarkovChain, MatrixNormalGamma, MvLinear, MvNormal, Normal
from fgraph.nodes.mv_gauss_markov_chain import MvGaussMarkovChain

TOLERANCE = dict(rtol=1e-8, atol=1e-10)
M0, P0 = np.array([0.3, -0.2]), np.array([[2.0, 0.4], [0.4, 1.0]])
PRIOR = (np.array([[0.5, 0.1], [-0.2, 0.6]]), np.array([[2.0, 0.3], [0.3, 1.5]]), np.array([2.0, 3.0]),
         np.array([1.0, 0.5]))  # M₀, V₀, α₀, β₀
START = (np.array([[0.8, 0.0], [0.0, 0.8]]), np.array([[0.5, 0.1], [0.1, 0.4]]), np.array([3.0, 2.0]),
         np.array([1.5, 0.7]))  # the initial q(F, λ)
TRUE_F = np.array([[0.95, -0.25], [0.25, 0.95]]) * 0.97
C_FULL, R_FULL = np.array([[1.0, 0.2], [0.0, 0.7]]), np.array([[0.3, 0.05], [0.05, 0.2]])
C_PART, R_PART = np.array([[1.0, 0.5]]), np.array([[0.1]])


def simulate(steps, C, R, seed=1, chains=(), noise=(0.2, 0.1)):
    rng = np.random.default_rng(seed)
    x = np.zeros(chains + (steps, 2))
    x[..., 0, :] = rng.multivariate_normal(M0, P0, size=chains) if chains else rng.multivariate_normal(M0, P0)
    for t in range(1, steps):
        x[..., t, :] = x[..., t - 1, :] @ TRUE_F.T + rng.normal(size=chains + (2,)) * np.sqrt(noise)
    y = x @ C.T + rng.multivariate_normal(np.zeros(len(R)), R, size=chains + (steps,))
    return x, y


# ------------------------------------------------------------------ the hand-written VB-LDS (numpy, loops)
def smoother(F, Q, extra, C, R, y, offset, m0=M0, P0=P0):
    """Kalman filter and RTS smoother of x_1 ~ N(m₀, P₀), x_t = F x_{t−1} + c_t + N(0, Q), y_t = C x_t + N(0, R),
    times exp(−½ x_tᵀ X x_t) on x_1..x_{T−1}: smoothed means (T, d), covariances (T, d, d) and the lag-one
    covariances Cov(x_{t−1}, x_t) = G_{t−1} S_t (T − 1, d, d), G_{t−1} = P_{t−1} Fᵀ (F P_{t−1} Fᵀ + Q)⁻¹."""
    steps, d = len(y), len(m0)
    R_inv = np.linalg.inv(R)
    filtered_mean, filtered_cov = np.zeros((steps, d)), np.zeros((steps, d, d))
    predicted_mean, predicted_cov = np.zeros((steps, d)), np.zeros((steps, d, d))
    mean, cov = m0, P0
    for t in range(steps):
        if t > 0:
            mean, cov = F @ mean + offset[t], F @ cov @ F.T + Q
        predicted_mean[t], predicted_cov[t] = mean, cov
        information = np.linalg.inv(cov) + C.T @ R_inv @ C + (extra if t < steps - 1 else 0.0)
        cov = np.linalg.inv(information)
        mean = cov @ (np.linalg.solve(predicted_cov[t], mean) + C.T @ R_inv @ y[t])
        filtered_mean[t], filtered_cov[t] = mean, cov
    means, covs, lag = filtered_mean.copy(), filtered_cov.copy(), np.zeros((steps - 1, d, d))
    for t in range(steps - 2, -1, -1):
        gain = filtered_cov[t] @ F.T @ np.linalg.inv(predicted_cov[t + 1])
        means[t] = filtered_mean[t] + gain @ (means[t + 1] - predicted_mean[t + 1])
        covs[t] = filtered_cov[t] + gain @ (covs[t + 1] - predicted_cov[t + 1]) @ gain.T
        lag[t] = gain @ covs[t + 1]
    return means, covs, lag


def states_under(q, C, R, ys, offset):
    """The chains' smoothed moments under q(F, λ) = (M, V, α, β): F̄ = M, Q̄ = diag(β/α), X = d V."""
    M, V, alpha, beta = q
    return [smoother(M, np.diag(beta / alpha), len(alpha) * V, C, R, y, offset) for y in ys]


def statistics(states, offset):
    """Σ_t E[x_{t−1}x_{t−1}ᵀ], Σ_t E[(x_t − c_t) x_{t−1}ᵀ], Σ_t E[(x_t − c_t)(x_t − c_t)ᵀ], T − 1, over the chains."""
    d = states[0][0].shape[-1]
    previous, cross, current, count = np.zeros((d, d)), np.zeros((d, d)), np.zeros((d, d)), 0
    for means, covs, lag in states:
        for t in range(1, len(means)):
            target = means[t] - offset[t]
            previous += covs[t - 1] + np.outer(means[t - 1], means[t - 1])
            cross += lag[t - 1].T + np.outer(target, means[t - 1])
            current += covs[t] + np.outer(target, target)
            count += 1
    return previous, cross, current, count


def update(stats, prior=PRIOR):
    """The closed-form MNG posterior: V⁻¹ = V₀⁻¹ + S_xx, M = (M₀V₀⁻¹ + S_yx) V, α = α₀ + n/2,
    β_i = β₀_i + ½ (S_yy,ii + m₀_iᵀV₀⁻¹m₀_i − m_iᵀV⁻¹m_i)."""
    previous, cross, current, count = stats
    M0_, V0_, alpha0, beta0 = prior
    V0_inv = np.linalg.inv(V0_)
    V = np.linalg.inv(V0_inv + previous)
    M = (M0_ @ V0_inv + cross) @ V
    beta = beta0 + 0.5 * (np.diag(current) + np.einsum("ij,jk,ik->i", M0_, V0_inv, M0_)
                          - np.einsum("ij,jk,ik->i", M, np.linalg.inv(V), M))
    return M, V, alpha0 + 0.5 * count, beta


def kl_mng(q, prior=PRIOR):
    """KL(MNG(M, V, α, β) ‖ MNG(M₀, V₀, α₀, β₀)): per row KL of the gammas + E_λ KL(N(m_i, V/λ) ‖ N(m₀_i, V₀/λ))."""
    M, V, alpha, beta = q
    M0_, V0_, alpha0, beta0 = prior
    d = V.shape[-1]
    V0_inv = np.linalg.inv(V0_)
    gammas = ((alpha - alpha0) * digamma(alpha) - gammaln(alpha) + gammaln(alpha0)
              + alpha0 * (np.log(beta) - np.log(beta0)) + alpha * (beta0 - beta) / beta)
    centred = M - M0_
    normals = 0.5 * (np.trace(V0_inv @ V) - d + np.linalg.slogdet(V0_)[1] - np.linalg.slogdet(V)[1]
                     + alpha / beta * np.einsum("ij,jk,ik->i", centred, V0_inv, centred))
    return float(np.sum(gammas + normals))


def free_energy(states, q, C, R, ys, offset, prior=PRIOR):
    """E_q[−log p(y, x | F, λ)] − H[q(x)] + KL(q(F, λ) ‖ p(F, λ)), from the smoothed moments."""
    M, V, alpha, beta = q
    d, m = M.shape[0], C.shape[0]
    ell, log_ell = alpha / beta, digamma(alpha) - np.log(beta)
    R_inv, P0_inv = np.linalg.inv(R), np.linalg.inv(P0)
    total = kl_mng(q, prior)
    for (means, covs, lag), y in zip(states, ys):
        steps = len(means)
        second = covs + np.einsum("ti,tj->tij", means, means)
        for t in range(steps):  # observations
            residual = y[t] - C @ means[t]
            total += 0.5 * (m * np.log(2 * np.pi) + np.linalg.slogdet(R)[1]
                            + np.trace(R_inv @ (np.outer(residual, residual) + C @ covs[t] @ C.T)))
        centred = second[0] - np.outer(means[0], M0) - np.outer(M0, means[0]) + np.outer(M0, M0)
        total += 0.5 * (d * np.log(2 * np.pi) + np.linalg.slogdet(P0)[1] + np.trace(P0_inv @ centred))
        for t in range(1, steps):  # Σ_i E[λ_i (y_i − f_iᵀx)²] = Σ_i ℓ_i E[(y_i − m_iᵀx)²] + d tr(V E[xxᵀ])
            target_mean = means[t] - offset[t]
            target_second = second[t] - np.outer(offset[t], means[t]) - np.outer(means[t], offset[t]) \
                + np.outer(offset[t], offset[t])
            joint = lag[t - 1].T + np.outer(target_mean, means[t - 1])  # E[(x_t − c_t) x_{t−1}ᵀ]
            squares = np.diag(target_second) - 2.0 * np.sum(M * joint, axis=1) + np.einsum(
                "ij,jk,ik->i", M, second[t - 1], M)
            total += 0.5 * (d * np.log(2 * np.pi) - np.sum(log_ell) + ell @ squares
                            + d * np.trace(V @ second[t - 1]))
        # H[q(x)] of a Gaussian Markov chain: Σ_t H[q(x_{t−1}, x_t)] − Σ_{1<t<T} H[q(x_t)]
        for t in range(1, steps):
            pair = np.block([[covs[t - 1], lag[t - 1]], [lag[t - 1].T, covs[t]]])
            total -= 0.5 * np.linalg.slogdet(2 * np.pi * np.e * pair)[1]
        for t in range(1, steps - 1):
            total += 0.5 * np.linalg.slogdet(2 * np.pi * np.e * covs[t])[1]
    return total


def reference_vb(ys, C, R, sweeps, offset=None, states_first=False):
    """Beal's VB-LDS for the chains ``ys`` (B, T, m) sharing (F, λ), from q(F, λ) = START.

    ``states_first=False`` (the node's default sweep): q(F, λ) from the statistics of the chains under the current
    q(F, λ), then q(x) under the new one; ``True``: q(x) under the current q(F, λ), then q(F, λ) from it (the
    free energy then reads q(x) made from the previous q(F, λ)). One dict per sweep.
    """
    ys = np.asarray(ys)
    offset = np.zeros(ys.shape[-2:-1] + (2,)) if offset is None else offset
    q, history = START, []
    for _ in range(sweeps):
        states = states_under(q, C, R, ys, offset)
        q = update(statistics(states, offset))
        if not states_first:
            states = states_under(q, C, R, ys, offset)
        history.append({"states": states, "q": q, "free_energy": free_energy(states, q, C, R, ys, offset)})
    return history


# ------------------------------------------------------------------ the models
def compound(y, C, R, chains=(), per_chain=False, control=None):
    steps = y.shape[-2]
    with fg.Model() as model:
        theta = MatrixNormalGamma("theta", *PRIOR, batch_shape=chains + (1,) if per_chain else None)
        options = {} if control is None else {"control_matrix": control[0], "control": control[1]}
        x = MvGaussMarkovChain("x", theta, None, M0, P0, steps, batch_shape=chains, **options)
        MvLinear("y", x, C, R, observed=y)
    return model


def start(per_chain_shape=None):
    q = MNG(*START)
    return {"theta": q if per_chain_shape is None else q.broadcast_to(per_chain_shape)}


STATES_FIRST = [("y", "in"), ("x", "out"), ("x", "pairs"), ("theta", "out"), ("x", "transition")]


def assert_equal_to_reference(result, history, chains=None):
    np.testing.assert_allclose(result.free_energy, [h["free_energy"] for h in history], **TOLERANCE)
    last = history[-1]
    q_x = result.marginal("x")
    means = np.array([m for m, _, _ in last["states"]])
    covs = np.array([c for _, c, _ in last["states"]])
    np.testing.assert_allclose(np.reshape(q_x.mean, means.shape), means, **TOLERANCE)
    np.testing.assert_allclose(np.reshape(q_x.cov, covs.shape), covs, **TOLERANCE)
    q = result.marginal("theta")
    for name, value in zip(("matrix_mean", "column_covariance", "shape", "rate"), last["q"]):
        np.testing.assert_allclose(getattr(q, name), value, **TOLERANCE, err_msg=name)


# ------------------------------------------------------------------ (1) the hand-written VB-LDS, every iteration
@pytest.mark.parametrize("observation", ["full", "partial"])
@pytest.mark.parametrize("steps", [2, 3, 30])
def test_equals_the_hand_written_vb_lds_at_every_iteration(steps, observation):
    C, R = (C_FULL, R_FULL) if observation == "full" else (C_PART, R_PART)
    _, y = simulate(steps, C, R, seed=steps)
    history = reference_vb(y[None], C, R, 10)
    for sweeps in range(1, 11):  # marginals and q(F, λ) after every iteration: a run of k sweeps is the reference's k
        result = fg.infer(compound(y, C, R), algorithm="vmp", iterations=sweeps, init=start())
        assert_equal_to_reference(result, history[:sweeps])  # the free energies of sweeps 1..k


def test_states_first_free_energy_reads_the_transition_the_states_were_made_from():
    """q(x) from q_k(F, λ), then q(F, λ) moves on: the node's term adds U(q(x), q_{k+1}) − U(q(x), q_k)."""
    _, y = simulate(25, C_FULL, R_FULL, seed=5)
    result = fg.infer(compound(y, C_FULL, R_FULL), algorithm="vmp", iterations=10, init=start(),
                      schedule=STATES_FIRST)
    assert_equal_to_reference(result, reference_vb(y[None], C_FULL, R_FULL, 10, states_first=True))


def test_a_control_input_is_subtracted_from_the_regression_target():
    rng = np.random.default_rng(6)
    B, u = np.array([[0.5], [-1.0]]), rng.normal(size=(19, 1))
    _, y = simulate(20, C_FULL, R_FULL, seed=6)
    offset = np.vstack([np.zeros((1, 2)), u @ B.T])
    result = fg.infer(compound(y, C_FULL, R_FULL, control=(B, u)), algorithm="vmp", iterations=8, init=start())
    assert_equal_to_reference(result, reference_vb(y[None], C_FULL, R_FULL, 8, offset=offset))


def test_chains_of_a_batch_share_the_transition():
    """B chains, one (F, λ): the node's message adds the statistics of every chain."""
    _, y = simulate(15, C_FULL, R_FULL, seed=7, chains=(3,))
    result = fg.infer(compound(y, C_FULL, R_FULL, chains=(3,)), algorithm="vmp", iterations=8, init=start())
    assert_equal_to_reference(result, reference_vb(y, C_FULL, R_FULL, 8))


def test_chains_with_a_transition_each_are_separate_models():
    _, y = simulate(15, C_FULL, R_FULL, seed=8, chains=(3,))
    together = fg.infer(compound(y, C_FULL, R_FULL, chains=(3,), per_chain=True), algorithm="vmp", iterations=8,
                        init=start((3, 1)))
    assert together.marginal("theta").batch_shape == (3, 1)
    total = 0.0
    for chain in range(3):
        alone = fg.infer(compound(y[chain], C_FULL, R_FULL), algorithm="vmp", iterations=8, init=start())
        total += np.array(alone.free_energy)
        np.testing.assert_allclose(together.marginal("x").mean[chain], alone.marginal("x").mean, rtol=1e-10,
                                   atol=1e-12)
        np.testing.assert_allclose(together.marginal("theta").matrix_mean[chain, 0],
                                   alone.marginal("theta").matrix_mean, rtol=1e-10)
        np.testing.assert_allclose(together.marginal("theta").rate[chain, 0], alone.marginal("theta").rate,
                                   rtol=1e-10)
    np.testing.assert_allclose(together.free_energy, total, rtol=1e-10)


# ------------------------------------------------------------------ (2) the free energy never increases
@pytest.mark.parametrize("schedule", [None, STATES_FIRST])
@pytest.mark.parametrize("observation", ["full", "partial"])
def test_the_free_energy_never_increases(schedule, observation):
    C, R = (C_FULL, R_FULL) if observation == "full" else (C_PART, R_PART)
    _, y = simulate(300, C, R, seed=9)
    result = fg.infer(compound(y, C, R), algorithm="vmp", iterations=60, init=start(), schedule=schedule)
    changes = np.diff(result.free_energy)
    assert np.all(changes <= 1e-9 * np.abs(result.free_energy[1:]))
    assert result.free_energy[-1] < result.free_energy[0] - 1.0  # it moves


# ------------------------------------------------------------------ (3) d = 1: the scalar chain
def test_one_dimensional_states_approach_the_scalar_chain_with_a_known_gain():
    """The priors cannot coincide exactly: the scalar chain's are independent, a ~ N(μ, v) and w ~ Gamma(α, β),
    with the mean field q(a) q(w), while the matrix-normal–gamma ties the gain to the precision, a | λ ~ N(m, V/λ),
    and q(F, λ) keeps that dependence (with a random gain the fixed points differ: the joint q(a, λ) and the
    product q(a) q(w) give different rates, by about 1/(2 E[w]) in the flat-prior limit). They meet where the
    gain is known: the scalar chain with gain = m and precision w ~ Gamma(α, β), and the d = 1 chain with
    MNG(m, V₀, α, β) as V₀ → 0, which agree to O(V₀) (the posterior mean of the gain moves by V₀ (S_xy − m S_xx),
    the extra precision on the states is V), until the cancellation in β = β₀ + ½ (… + m²/V₀ − M²/V) (rounding
    times m²/V₀) takes over: at V₀ = 1e−8 both are about 1e−8 of the free energy.

    The exact d = 1 comparison is rule by rule: ``tests/rules/mv_gauss_markov_chain/test_structured.py`` (the message
    to the states equals the scalar chain's with the moments (M, V/E[λ], E[λ], E[log λ])) and ``test_transition.py``
    (the statistics of the message to (F, λ) equal those of the scalar chain's messages to its gain and precision).
    """
    rng = np.random.default_rng(3)
    steps, gain, V0 = 40, 0.8, 1e-8
    x = np.zeros(steps)
    for t in range(1, steps):
        x[t] = gain * x[t - 1] + 0.5 * rng.normal()
    y = x + 0.4 * rng.normal(size=steps)
    with fg.Model() as scalar:
        w = Gamma("w", shape=2.0, rate=1.0)
        states = GaussMarkovChain("x", gain, precision=w, initial_mean=0.1, initial_var=2.0, length=steps)
        Normal("y", mean=states, var=0.16, observed=y)
    with fg.Model() as vector:
        theta = MatrixNormalGamma("theta", [[gain]], V0, 2.0, 1.0)
        states = MvGaussMarkovChain("x", theta, None, [0.1], [[2.0]], steps)
        MvNormal("y", mean=states, cov=[[0.16]], observed=y[:, None])
    # states first in both (the scalar chain's q(x) starts from the moments of its initial q(w))
    a = fg.infer(scalar, algorithm="vmp", iterations=10, schedule=[
        ("x", "moments"), ("y", "mean"), ("x", "out"), ("w", "out"), ("x", "precision")],
        init={"x": fg.NormalMeanVariance(np.zeros(steps), np.ones(steps)), "w": fg.Gamma(3.0, 2.0)})
    b = fg.infer(vector, algorithm="vmp", iterations=10, schedule=[
        ("y", "mean"), ("x", "out"), ("x", "pairs"), ("theta", "out"), ("x", "transition")],
        init={"theta": MNG([[gain]], [[V0]], [3.0], [2.0])})
    np.testing.assert_allclose(b.free_energy, a.free_energy, rtol=3e-8)
    np.testing.assert_allclose(b.marginal("x").mean[:, 0], a.marginal("x").mean, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(b.marginal("x").cov[:, 0, 0], a.marginal("x").var, rtol=1e-6)
    np.testing.assert_allclose([b.marginal("theta").shape[0], b.marginal("theta").rate[0]],
                               [a.marginal("w").shape, a.marginal("w").rate], rtol=1e-6)


# ------------------------------------------------------------------ (4) recovery of a rotation
def test_a_long_simulated_rotation_is_recovered():
    """T = 3000 steps of a damped rotation with diagonal process noise, observed with noise: E[F] within 4
    posterior standard deviations (Var[F_ij] = V_jj E[1/λ_i]) of the truth, E[1/λ] near the noise variances."""
    rng = np.random.default_rng(2024)
    steps, angle = 3000, 0.2
    F = 0.98 * np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    noise, R = np.array([0.05, 0.08]), 0.05 * np.eye(2)
    x = np.zeros((steps, 2))
    x[0] = rng.normal(size=2)
    for t in range(1, steps):
        x[t] = F @ x[t - 1] + rng.normal(size=2) * np.sqrt(noise)
    y = x + rng.multivariate_normal(np.zeros(2), R, size=steps)
    with fg.Model() as model:
        theta = MatrixNormalGamma("theta", np.zeros((2, 2)), 10.0, 1.0, 0.1)
        states = MvGaussMarkovChain("x", theta, None, np.zeros(2), np.eye(2), steps)
        MvNormal("y", mean=states, cov=R, observed=y)
    result = fg.infer(model, algorithm="vmp", iterations=300, tol=1e-9,
                      init={"theta": MNG(np.zeros((2, 2)), 10.0 * np.eye(2), np.ones(2), 0.1 * np.ones(2))})
    q = result.marginal("theta")
    variance = q.rate / (q.shape - 1.0)  # E[1/λ_i]
    std = np.sqrt(np.diagonal(q.column_covariance)[None, :] * variance[:, None])
    assert np.all(np.abs(q.matrix_mean - F) < 4.0 * std)
    assert np.all(std < 0.02)  # the data pin F down: a few posterior std is a tight check
    variance_std = variance / np.sqrt(q.shape - 2.0)
    assert np.all(np.abs(variance - noise) < 4.0 * variance_std)
    assert np.all(np.diff(result.free_energy) <= 1e-9 * np.abs(result.free_energy[1:]))


# ------------------------------------------------------------------ errors
def test_belief_propagation_is_refused_with_the_node_named():
    _, y = simulate(10, C_FULL, R_FULL)
    with pytest.raises(fg.ModelError, match="node 'x' .*random transition.*algorithm='vmp'"):
        fg.infer(compound(y, C_FULL, R_FULL), algorithm="bp", init=start())
    with pytest.raises(fg.ModelError, match="node 'x' .*random transition.*algorithm='vmp'"):
        fg.infer(compound(y, C_FULL, R_FULL), algorithm="vmp", init=start(),
                 constraints={"factorization": {"x": "bp"}})


@pytest.mark.parametrize("arguments, match", [
    ({"noise": np.eye(2)}, "process noise is diag\\(λ\\)⁻¹ from the same MatrixNormalGamma .* pass noise=None"),
    ({"causal": True}, "causal=True needs a fixed transition.*algorithm='vmp'"),
    ({"length": 1}, "length >= 2"),
    ({"transition": "theta3"}, "'theta3' must have event shape \\(2, 2\\)"),
    ({"transition": "theta4"}, "'theta4' has batch shape \\(4,\\); .* batch \\(\\), one per chain batch \\(1,\\)"),
    ({"transition": np.eye(2), "noise": None}, "noise .* is needed with a fixed transition"),
])
def test_bad_arguments_are_model_errors_naming_the_chain(arguments, match):
    with fg.Model():
        variables = {"theta": MatrixNormalGamma("theta", *PRIOR),
                     "theta3": MatrixNormalGamma("theta3", np.zeros((3, 3)), 1.0, 1.0, 1.0),
                     "theta4": MatrixNormalGamma("theta4", *PRIOR, batch_shape=(4,))}
        arguments = {"transition": "theta", "noise": None, "length": 5} | arguments
        transition = arguments.pop("transition")
        transition = variables[transition] if isinstance(transition, str) else transition
        with pytest.raises(fg.ModelError, match=f"MvGaussMarkovChain 'x'.*{match}"):
            MvGaussMarkovChain("x", transition, arguments.pop("noise"), M0, P0, arguments.pop("length"),
                               **arguments)


def test_a_model_with_copies_is_refused():
    with fg.Model(copies=2):
        theta = MatrixNormalGamma("theta", *PRIOR)
        with pytest.raises(fg.ModelError, match="MvGaussMarkovChain 'x'.*model with copies"):
            MvGaussMarkovChain("x", theta, None, M0, P0, 5)


def test_a_fixed_transition_keeps_the_fixed_chain():
    with fg.Model() as model:
        MvGaussMarkovChain("x", TRUE_F, 0.1 * np.eye(2), M0, P0, 5)
    assert type(model.nodes[0]).__name__ == "MvGaussMarkovChainNode"
