"""The scan elements of linear-Gaussian chains against the sequential Kalman filter and RTS smoother.

The reference is the textbook recursion, one time step at a time (numpy
linear algebra per step, one chain at a time): predict, update with the
gain P⁻ (P⁻ + R)⁻¹, the Rauch–Tung–Striebel backward pass, the log evidence
as the sum of log N(y_t | m⁻_t, P⁻_t + R_t), and the backward information
filter for β_t. Checked for scalar states (d = 1) and d = 2, with batches.
"""
import numpy as np
import pytest
from scipy.stats import multivariate_normal

from fgraph.rules.gauss_markov_chain.elements import filter_and_backward_information, kalman_smoother


def sequential_kalman(F, Q, m0, P0, ys, Rs):
    """One chain: ys (T, d), Rs (T, d, d). Returns filtered/smoothed means and covariances, log p(y), (η_t, J_t)."""
    steps, d = ys.shape
    fm, fP = np.empty((steps, d)), np.empty((steps, d, d))
    log_evidence = 0.0
    mean, cov = m0, P0
    for t in range(steps):
        log_evidence += multivariate_normal(mean, cov + Rs[t]).logpdf(ys[t])
        gain = cov @ np.linalg.inv(cov + Rs[t])
        mean, cov = mean + gain @ (ys[t] - mean), cov - gain @ cov
        fm[t], fP[t] = mean, cov
        mean, cov = F @ mean, F @ cov @ F.T + Q
    sm, sP = fm.copy(), fP.copy()
    for t in range(steps - 2, -1, -1):
        predicted = F @ fP[t] @ F.T + Q
        smoother_gain = fP[t] @ F.T @ np.linalg.inv(predicted)
        sm[t] = fm[t] + smoother_gain @ (sm[t + 1] - F @ fm[t])
        sP[t] = fP[t] + smoother_gain @ (sP[t + 1] - predicted) @ smoother_gain.T
    # backward information filter: β_T = 1; β_{t}(x) ∝ ∫ N(x' | F x, Q) N(y_{t+1} | x', R) β_{t+1}(x') dx'
    eta, J = np.zeros((steps, d)), np.zeros((steps, d, d))
    for t in range(steps - 2, -1, -1):
        info = J[t + 1] + np.linalg.inv(Rs[t + 1])
        shift = eta[t + 1] + np.linalg.solve(Rs[t + 1], ys[t + 1])
        inner = np.linalg.inv(np.eye(d) + info @ Q)
        J[t] = F.T @ inner @ info @ F
        eta[t] = F.T @ inner @ shift
    return {"filtered_mean": fm, "filtered_cov": fP, "smoothed_mean": sm, "smoothed_cov": sP,
            "log_evidence": log_evidence, "eta": eta, "J": J}


def random_problem(rng, d, batch, steps):
    F = rng.normal(size=(d, d)) * 0.6 + 0.3 * np.eye(d)
    root = rng.normal(size=(d, d))
    Q = root @ root.T + 0.3 * np.eye(d)
    m0 = rng.normal(size=d)
    root = rng.normal(size=(d, d))
    P0 = root @ root.T + np.eye(d)
    ys = rng.normal(size=(d,) + batch + (steps,)) * 2.0
    roots = rng.normal(size=(d, d) + batch + (steps,))
    Rs = np.einsum("ik...,jk...->ij...", roots, roots) + 0.2 * np.eye(d).reshape((d, d) + (1,) * (len(batch) + 1))
    return F, Q, m0, P0, ys, Rs


def per_chain(array, index, vector_axes):
    """Chain ``index`` (a batch index tuple) of a scan-layout array, time first: (T, d) or (T, d, d)."""
    picked = array[(slice(None),) * vector_axes + index]
    return np.moveaxis(picked, -1, 0)


@pytest.mark.parametrize("d, batch, steps", [(1, (), 1), (1, (), 2), (1, (), 1000), (1, (3,), 257), (2, (), 1),
                                             (2, (), 100), (2, (2, 2), 37), (3, (2,), 20)])
def test_scan_smoother_equals_the_sequential_recursion(d, batch, steps):
    rng = np.random.default_rng(100 * d + steps)
    F, Q, m0, P0, ys, Rs = random_problem(rng, d, batch, steps)
    scanned = kalman_smoother(F, Q, m0, P0, ys, Rs)
    _, _, eta, J = filter_and_backward_information(F, Q, m0, P0, ys, Rs)
    assert scanned["log_evidence"].shape == batch
    for index in np.ndindex(*batch):
        expected = sequential_kalman(F, Q, m0, P0, per_chain(ys, index, 1), per_chain(Rs, index, 2))
        for key, axes in [("filtered_mean", 1), ("smoothed_mean", 1), ("filtered_cov", 2), ("smoothed_cov", 2)]:
            np.testing.assert_allclose(per_chain(scanned[key], index, axes), expected[key], rtol=1e-10, atol=1e-10,
                                       err_msg=key)
        np.testing.assert_allclose(scanned["log_evidence"][index], expected["log_evidence"], rtol=1e-10)
        np.testing.assert_allclose(per_chain(eta, index, 1), expected["eta"], rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(per_chain(J, index, 2), expected["J"], rtol=1e-10, atol=1e-10)


def test_a_singular_transition_is_fine():
    """F = 0: the states are independent; β_t is flat (J = 0) and smoothing is filtering."""
    rng = np.random.default_rng(2)
    _, Q, m0, P0, ys, Rs = random_problem(rng, 2, (), 30)
    F = np.zeros((2, 2))
    scanned = kalman_smoother(F, Q, m0, P0, ys, Rs)
    _, _, eta, J = filter_and_backward_information(F, Q, m0, P0, ys, Rs)
    assert np.all(J == 0.0) and np.all(eta == 0.0)
    np.testing.assert_allclose(scanned["smoothed_mean"], scanned["filtered_mean"], rtol=1e-13)
    expected = sequential_kalman(F, Q, m0, P0, per_chain(ys, (), 1), per_chain(Rs, (), 2))
    np.testing.assert_allclose(scanned["log_evidence"], expected["log_evidence"], rtol=1e-12)


def scalar_kalman_in_floats(a, q, m0, v0, ys, rs):
    """One scalar chain on Python floats: filtered and smoothed moments and log p(y), step by step."""
    fm, fv, log_evidence = [], [], 0.0
    mean, var = m0, v0
    for y, r in zip(ys.tolist(), rs.tolist()):
        total = var + r
        log_evidence -= 0.5 * (np.log(2 * np.pi * total) + (y - mean) ** 2 / total)
        gain = var / total
        mean, var = mean + gain * (y - mean), var - gain * var
        fm.append(mean)
        fv.append(var)
        mean, var = a * mean, a * a * var + q
    sm, sv = fm[:], fv[:]
    for t in range(len(fm) - 2, -1, -1):
        predicted = a * a * fv[t] + q
        gain = fv[t] * a / predicted
        sm[t] = fm[t] + gain * (sm[t + 1] - a * fm[t])
        sv[t] = fv[t] + gain * gain * (sv[t + 1] - predicted)
    return np.array(fm), np.array(fv), np.array(sm), np.array(sv), log_evidence


@pytest.mark.parametrize("batch, steps", [((), 10**5), ((3,), 10**4)])
def test_long_scalar_chains_equal_the_float_recursion(batch, steps):
    rng = np.random.default_rng(steps)
    a, q, m0, v0 = 0.95, 0.3, -0.5, 2.0
    ys = rng.normal(size=batch + (steps,)) * 3.0
    rs = rng.uniform(0.05, 4.0, size=batch + (steps,))
    scanned = kalman_smoother([[a]], [[q]], [m0], [[v0]], ys[None], rs[None, None])
    for index in np.ndindex(*batch):
        fm, fv, sm, sv, log_evidence = scalar_kalman_in_floats(a, q, m0, v0, ys[index], rs[index])
        np.testing.assert_allclose(scanned["filtered_mean"][(0,) + index], fm, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(scanned["filtered_cov"][(0, 0) + index], fv, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(scanned["smoothed_mean"][(0,) + index], sm, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(scanned["smoothed_cov"][(0, 0) + index], sv, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(scanned["log_evidence"][index], log_evidence, rtol=1e-10)
