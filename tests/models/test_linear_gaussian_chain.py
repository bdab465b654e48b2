"""Linear Gaussian state-space models by belief propagation against the closed-form joint Gaussian.

Scalar chain: x_1 ~ N(m0, v0), x_t ~ N(a x_{t-1}, q), y_t ~ N(x_t, r) observed, T = 50.
Stacking the chain, x = E[x] + M ε with M[t, s] = a^(t-s) (t >= s) and ε ~ N(0, diag(v0, q, ..., q)),
so (x, y) is jointly normal with Cov[x] = M diag(...) M^T, Cov[y] = Cov[x] + r I, Cov[x, y] = Cov[x];
conditioning on y gives every posterior marginal, and log N(y | E[y], Cov[y]) is the log evidence.
BP on the chain (a tree) must reproduce all of them after one sweep, and the log-scale of the belief at
every variable must be the same number, the log evidence.
"""
import numpy as np
import pytest
from scipy import linalg, stats

import fgraph as fg
from fgraph.nodes import Add, Linear, Multiply, MvNormal, Normal

TOLERANCE = dict(rtol=1e-8, atol=1e-10)

T = 50
M0, V0, Q, R = 0.5, 2.0, 0.3, 0.5


def simulate(rng, gain, steps=T, chains=()):
    x = M0 + np.sqrt(V0) * rng.standard_normal(chains)
    states = []
    for _ in range(steps):
        states.append(x)
        x = gain * x + np.sqrt(Q) * rng.standard_normal(chains)
    states = np.array(states)
    return states + np.sqrt(R) * rng.standard_normal(states.shape)


def chain_model(y, gain, m0=M0):
    """The unrolled chain; ``y`` has shape (T,) or (T, K) (K independent chains as one plate)."""
    with fg.Model() as model:
        x = Normal("x_1", mean=m0, var=V0)
        Normal("y_1", mean=x, var=R, observed=y[0])
        for t in range(2, len(y) + 1):
            x = Linear(f"x_{t}", x, gain, Q)
            Normal(f"y_{t}", mean=x, var=R, observed=y[t - 1])
    return model


def closed_form(y, gain, m0=M0):
    """Posterior means, variances and log evidence of the scalar chain by conditioning the joint Gaussian."""
    steps = len(y)
    time = np.arange(steps)
    lags = time[:, None] - time[None, :]
    transition = np.where(lags >= 0, float(gain) ** np.maximum(lags, 0), 0.0)
    noise = np.full(steps, Q)
    noise[0] = V0
    mean_x = m0 * float(gain) ** time
    cov_x = transition @ np.diag(noise) @ transition.T
    cov_y = cov_x + R * np.eye(steps)
    factor = linalg.cho_factor(cov_y)
    posterior_mean = mean_x + cov_x @ linalg.cho_solve(factor, y - mean_x)
    posterior_cov = cov_x - cov_x @ linalg.cho_solve(factor, cov_x)
    log_evidence = stats.multivariate_normal(mean_x, cov_y).logpdf(y)
    return posterior_mean, np.diag(posterior_cov), log_evidence


@pytest.mark.parametrize("gain", [0.95, -1.1, 0.4])
def test_chain_matches_joint_gaussian(gain):
    y = simulate(np.random.default_rng(7), gain)
    result = fg.infer(chain_model(y, gain))
    assert result.plan.exact and result.iterations == 1
    mean, var, log_evidence = closed_form(y, gain)
    for t in range(1, T + 1):
        marginal = result.marginal(f"x_{t}")
        np.testing.assert_allclose(marginal.mean, mean[t - 1], **TOLERANCE, err_msg=f"mean of x_{t}")
        np.testing.assert_allclose(marginal.var, var[t - 1], **TOLERANCE, err_msg=f"variance of x_{t}")
    np.testing.assert_allclose(result.log_evidence, log_evidence, **TOLERANCE)
    per_variable = result.evidence_per_variable()
    assert sorted(per_variable) == sorted(f"x_{t}" for t in range(1, T + 1))
    for name, value in per_variable.items():
        np.testing.assert_allclose(value, log_evidence, **TOLERANCE, err_msg=name)


def test_plate_of_independent_chains_equals_unrolled_chains():
    """K chains as one plated model (every x_t of batch shape (K,)) == K separate scalar models."""
    chains, steps, gain = 3, 20, 0.8
    y = simulate(np.random.default_rng(11), gain, steps, chains=(chains,))  # (T, K)
    m0 = np.array([0.5, -1.0, 2.0])
    plated = fg.infer(chain_model(y, gain, m0=m0))
    assert plated.plan.exact
    per_chain = []
    for k in range(chains):
        single = fg.infer(chain_model(y[:, k], gain, m0=m0[k]))
        mean, var, log_evidence = closed_form(y[:, k], gain, m0=m0[k])
        per_chain.append(log_evidence)
        np.testing.assert_allclose(single.log_evidence, log_evidence, **TOLERANCE)
        for t in range(1, steps + 1):
            marginal = plated.marginal(f"x_{t}")
            assert marginal.batch_shape == (chains,)
            np.testing.assert_allclose(marginal.mean[k], single.marginal(f"x_{t}").mean, **TOLERANCE)
            np.testing.assert_allclose(marginal.var[k], single.marginal(f"x_{t}").var, **TOLERANCE)
            np.testing.assert_allclose(marginal.mean[k], mean[t - 1], **TOLERANCE)
    np.testing.assert_allclose(plated.log_evidence, sum(per_chain), **TOLERANCE)
    # the belief of a plated variable carries one log-scale per chain: that chain's evidence
    for name, value in plated.evidence_per_variable().items():
        np.testing.assert_allclose(value, per_chain, **TOLERANCE, err_msg=name)


def test_plated_observations_through_a_linear_node_equal_unrolled():
    """y_i ~ N(a x, q) for i = 1..N as one plated Linear node == N separate nodes == closed form.

    The N backward messages, each carrying log-scale -log|a|, meet at x in a plate reduction.
    """
    gain, count = -1.5, 8
    rng = np.random.default_rng(3)
    y = gain * 0.7 + np.sqrt(Q) * rng.standard_normal(count)
    with fg.Model() as plated_model:
        x = Normal("x", mean=M0, var=V0)
        Linear("y", x, gain, Q, observed=y)
    with fg.Model() as unrolled_model:
        x = Normal("x", mean=M0, var=V0)
        for i in range(count):
            Linear(f"y_{i}", x, gain, Q, observed=y[i])
    plated, unrolled = fg.infer(plated_model), fg.infer(unrolled_model)
    # closed form: y = a x 1 + noise, Cov[y] = a² v0 1 1^T + q I
    ones = np.ones(count)
    cov_y = gain**2 * V0 * np.outer(ones, ones) + Q * np.eye(count)
    log_evidence = stats.multivariate_normal(gain * M0 * ones, cov_y).logpdf(y)
    cov_xy = gain * V0 * ones
    mean = M0 + cov_xy @ np.linalg.solve(cov_y, y - gain * M0 * ones)
    var = V0 - cov_xy @ np.linalg.solve(cov_y, cov_xy)
    for result in (plated, unrolled):
        assert result.plan.exact
        np.testing.assert_allclose(result.marginal("x").mean, mean, **TOLERANCE)
        np.testing.assert_allclose(result.marginal("x").var, var, **TOLERANCE)
        np.testing.assert_allclose(result.log_evidence, log_evidence, **TOLERANCE)
        np.testing.assert_allclose(result.evidence_per_variable()["x"], log_evidence, **TOLERANCE)


# ------------------------------------------------------------------ vectors
A = np.array([[0.9, 0.3], [-0.2, 0.8]])  # state transition
C = np.array([[1.0, 0.5], [0.0, 2.0]])  # observation matrix (square, invertible)
B = np.array([0.1, -0.2])  # known drift added every step
M0_VECTOR = np.array([1.0, -0.5])
V0_MATRIX = np.array([[1.0, 0.3], [0.3, 0.5]])
Q_MATRIX = np.array([[0.2, 0.05], [0.05, 0.1]])
R_MATRIX = np.array([[0.3, -0.1], [-0.1, 0.4]])


def mv_chain_model(y):
    """x_1 ~ N(m0, V0); x_t ~ N(A x_{t-1} + b, Q); y_t ~ N(C x_t, R) with R as a precision, y observed."""
    with fg.Model() as model:
        x = MvNormal("x_1", mean=M0_VECTOR, cov=V0_MATRIX)
        for t in range(1, len(y) + 1):
            if t > 1:
                z = Multiply(f"z_{t}", A, x)
                u = Add(f"u_{t}", z, B)
                x = MvNormal(f"x_{t}", mean=u, cov=Q_MATRIX)
            w = Multiply(f"w_{t}", C, x)
            MvNormal(f"y_{t}", mean=w, precision=np.linalg.inv(R_MATRIX), observed=y[t - 1])
    return model


def mv_closed_form(y):
    """Posterior means and covariances of the stacked states (blocks of 2) and the log evidence."""
    steps, d = y.shape
    mean_x = [M0_VECTOR]
    for _ in range(steps - 1):
        mean_x.append(A @ mean_x[-1] + B)
    mean_x = np.concatenate(mean_x)
    transition = np.zeros((steps * d, steps * d))
    for t in range(steps):
        for s in range(t + 1):
            transition[t * d:(t + 1) * d, s * d:(s + 1) * d] = np.linalg.matrix_power(A, t - s)
    noise = linalg.block_diag(V0_MATRIX, *([Q_MATRIX] * (steps - 1)))
    cov_x = transition @ noise @ transition.T
    observation = np.kron(np.eye(steps), C)
    cov_y = observation @ cov_x @ observation.T + np.kron(np.eye(steps), R_MATRIX)
    cov_xy = cov_x @ observation.T
    residual = y.reshape(-1) - observation @ mean_x
    posterior_mean = mean_x + cov_xy @ np.linalg.solve(cov_y, residual)
    posterior_cov = cov_x - cov_xy @ np.linalg.solve(cov_y, cov_xy.T)
    log_evidence = stats.multivariate_normal(observation @ mean_x, cov_y).logpdf(y.reshape(-1))
    return posterior_mean.reshape(steps, d), posterior_cov, log_evidence


def test_vector_chain_with_matrix_gain_matches_joint_gaussian():
    steps, d = 5, 2
    rng = np.random.default_rng(5)
    y = rng.normal(size=(steps, d))
    result = fg.infer(mv_chain_model(y))
    assert result.plan.exact
    mean, cov, log_evidence = mv_closed_form(y)
    for t in range(1, steps + 1):
        block = slice((t - 1) * d, t * d)
        marginal = result.marginal(f"x_{t}")
        np.testing.assert_allclose(marginal.mean, mean[t - 1], **TOLERANCE, err_msg=f"mean of x_{t}")
        np.testing.assert_allclose(marginal.cov, cov[block, block], **TOLERANCE, err_msg=f"covariance of x_{t}")
        # w_t = C x_t is deterministic: its marginal is the image of x_t's
        w = result.marginal(f"w_{t}")
        np.testing.assert_allclose(w.mean, C @ mean[t - 1], **TOLERANCE)
        np.testing.assert_allclose(w.cov, C @ cov[block, block] @ C.T, **TOLERANCE)
    np.testing.assert_allclose(result.log_evidence, log_evidence, **TOLERANCE)
    for name, value in result.evidence_per_variable().items():
        np.testing.assert_allclose(value, log_evidence, **TOLERANCE, err_msg=name)


def test_mean_field_chain_reaches_the_closed_form_fixed_point():
    """VMP with q(x) = Π q(x_t) on a Gaussian chain (GaussianLinear mean-field rules and average energy).

    With joint posterior precision J = Cov[x]^-1 + I / r, the mean-field fixed point has the exact
    posterior means and variances 1 / J_tt, and its free energy is
    -log p(y) + KL(q || p(x | y)) = -log p(y) + ½ (Σ_t log J_tt - log|J|).
    """
    steps, gain = 10, 0.9
    y = simulate(np.random.default_rng(1), gain, steps)
    init = {f"x_{t}": fg.NormalMeanVariance(0.0, 10.0) for t in range(1, steps + 1)}
    result = fg.infer(chain_model(y, gain), algorithm="vmp", init=init, iterations=300)
    assert np.all(np.diff(result.free_energy) <= 1e-12), "the VMP free energy must not increase"
    mean, _, log_evidence = closed_form(y, gain)
    time = np.arange(steps)
    lags = time[:, None] - time[None, :]
    transition = np.where(lags >= 0, gain ** np.maximum(lags, 0), 0.0)
    noise = np.full(steps, Q)
    noise[0] = V0
    precision = np.linalg.inv(transition @ np.diag(noise) @ transition.T) + np.eye(steps) / R
    for t in range(1, steps + 1):
        np.testing.assert_allclose(result.marginal(f"x_{t}").mean, mean[t - 1], **TOLERANCE)
        np.testing.assert_allclose(result.marginal(f"x_{t}").var, 1.0 / precision[t - 1, t - 1], **TOLERANCE)
    kl = 0.5 * (np.sum(np.log(np.diag(precision))) - np.linalg.slogdet(precision)[1])
    np.testing.assert_allclose(result.free_energy[-1], -log_evidence + kl, **TOLERANCE)
