"""The authors' predictive (fgraph.models.cmn.bound_predictive): against a point-by-point transcription of their
forward pass (VersesTech/cavi-cmn: ``MultinomialRegression.log_forward``, ``LinearMNG.variational_forward``,
``MultinomialRegression.__backward_smooth``), written here with loops and explicit matrices; against the
deterministic network when the posteriors are point masses; rows sum to one; bad input is named."""
import numpy as np
import pytest
from scipy.special import digamma, expit, logsumexp

from fgraph.errors import DataError
from fgraph.models.cmn.bound_predictive import bound_predictive_log_proba


def random_posteriors(rng, R=2, K=3, L=3, d=2):
    h, D, H = L - 1, d + 1, L
    def spd(*shape, size, scale):
        A = rng.normal(size=shape + (size, size)) * scale
        return A @ np.swapaxes(A, -1, -2) + 0.1 * np.eye(size)
    return {
        "gate_mean": rng.normal(size=(R, K - 1, D)), "gate_cov": spd(R, K - 1, size=D, scale=0.4),
        "out_mean": rng.normal(size=(R, L - 1, H)), "out_cov": spd(R, L - 1, size=H, scale=0.4),
        "M": rng.normal(size=(R, K, h, D)), "V": spd(R, K, size=D, scale=0.3),
        "a": rng.uniform(2.0, 20.0, size=(R, K)), "b": rng.uniform(0.5, 3.0, size=(R, K, h)),
    }


def log_two_cosh(c):
    return np.log(2.0 * np.cosh(c / 2.0))


def stick_counts(classes):
    b = np.array([[1.0 if j <= y else 0.0 for j in range(classes - 1)] for y in range(classes)])
    kappa = np.array([[(1.0 if j == y else 0.0) - b[y, j] / 2 for j in range(classes - 1)] for y in range(classes)])
    return b, kappa


def authors_forward(p, x, iterations=4):
    """log p(y | x) of one restart's posteriors ``p`` (no restart axis) at one input, point by point."""
    xt = np.append(x, 1.0)
    K, h, D = p["M"].shape
    L = p["out_mean"].shape[0] + 1
    gate_b, gate_kappa = stick_counts(K)
    out_b, out_kappa = stick_counts(L)
    log_w = np.zeros(K)
    for k in range(K):
        for j in range(K - 1):
            m = p["gate_mean"][j] @ xt
            c = np.sqrt(m * m + xt @ p["gate_cov"][j] @ xt)
            log_w[k] += gate_kappa[k, j] * m - gate_b[k, j] * log_two_cosh(c)
        log_w[k] += 0.5 * h * (digamma(p["a"][k]) - np.log(p["a"][k])) - 0.5 * h * xt @ p["V"][k] @ xt
    log_w -= logsumexp(log_w)
    total = np.full(L, -np.inf)
    for k in range(K):
        P = np.diag(p["a"][k] / p["b"][k])  # E[Λ_k]
        mu = p["M"][k] @ xt
        bounds = np.zeros(L)
        for y in range(L):
            c = np.full(L - 1, 1e-6)
            for _ in range(iterations):
                precision, linear = P.copy(), P @ mu
                for l in range(L - 1):
                    beta_mean = p["out_mean"][l]
                    second = p["out_cov"][l] + np.outer(beta_mean, beta_mean)
                    omega = out_b[y, l] * np.tanh(c[l] / 2) / (2 * c[l])
                    precision += omega * second[:h, :h]
                    linear += out_kappa[y, l] * beta_mean[:h] - omega * (second[:h, h] + second[h, :h]) / 2
                cov = np.linalg.inv(precision)
                mean = cov @ linear
                outer = np.outer(np.append(mean, 1.0), np.append(mean, 1.0))
                outer[:h, :h] += cov
                for l in range(L - 1):
                    second = p["out_cov"][l] + np.outer(p["out_mean"][l], p["out_mean"][l])
                    c[l] = np.sqrt(np.sum(outer * second))
            value = 0.0
            for l in range(L - 1):
                psi = p["out_mean"][l] @ np.append(mean, 1.0)
                value += out_kappa[y, l] * psi - out_b[y, l] * log_two_cosh(c[l])
            kl = 0.5 * (np.trace(P @ cov) + (mean - mu) @ P @ (mean - mu) - h
                        - np.linalg.slogdet(P)[1] - np.linalg.slogdet(cov)[1])
            bounds[y] = value - kl
        total = np.logaddexp(total, log_w[k] + bounds - logsumexp(bounds))
    return total


@pytest.mark.parametrize("K, L", [(3, 3), (1, 2), (4, 4)])
def test_equals_the_authors_forward_pass_point_by_point(K, L):
    rng = np.random.default_rng(K * 10 + L)
    p = random_posteriors(rng, R=2, K=K, L=L)
    X = rng.normal(size=(5, 2))
    found = bound_predictive_log_proba(p, X)
    for r in range(2):
        one = {key: value[r] for key, value in p.items()}
        for n in range(5):
            np.testing.assert_allclose(found[r, n], authors_forward(one, X[n]), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.exp(found).sum(-1), 1.0, rtol=1e-12)


def test_point_mass_posteriors_give_the_deterministic_network():
    """Coefficients known, the experts' noise vanishing: every bound is tight, and the predictive is the
    network p(y | x) = Σ_k p(z = k | x, β0) p(y | x1 = A_k x̃, β1)."""
    rng = np.random.default_rng(3)
    p = random_posteriors(rng, R=1, K=3, L=3)
    tiny = 1e-12
    p["gate_cov"] = tiny * np.broadcast_to(np.eye(3), p["gate_cov"].shape).copy()
    p["out_cov"] = tiny * np.broadcast_to(np.eye(3), p["out_cov"].shape).copy()
    p["V"] = tiny * np.broadcast_to(np.eye(3), p["V"].shape).copy()
    p["a"] = np.full((1, 3), 1e10)
    p["b"] = np.full((1, 3, 2), 1e-2)  # E[λ] = 1e12
    X = rng.normal(size=(4, 2))
    found = np.exp(bound_predictive_log_proba(p, X, iterations=30))

    def sticks(psi):
        probabilities, left = [], 1.0
        for value in psi:
            probabilities.append(left * expit(value))
            left *= expit(-value)
        return np.array(probabilities + [left])

    for n, x in enumerate(X):
        xt = np.append(x, 1.0)
        gate = sticks(p["gate_mean"][0] @ xt)
        expected = sum(gate[k] * sticks(p["out_mean"][0] @ np.append(p["M"][0, k] @ xt, 1.0)) for k in range(3))
        np.testing.assert_allclose(found[0, n], expected, rtol=1e-4)


def test_bad_input_is_named():
    p = random_posteriors(np.random.default_rng(0))
    with pytest.raises(DataError, match="X must have shape"):
        bound_predictive_log_proba(p, np.zeros((3, 5)))
    with pytest.raises(DataError, match="iterations must be an integer"):
        bound_predictive_log_proba(p, np.zeros((3, 2)), iterations=0)
