"""Bayesian logistic regression by VMP with Pólya-Gamma augmentation, against quadrature and hand-written PG-VB.

    β ~ N(0, σ²I),   y_n ~ Bernoulli(σ(βᵀ[x_n; 1])),   n = 1..N.

The exact posterior in 1 dimension (the bias alone, no features) and 2
(slope and bias) comes from quadrature: the evidence Z = ∫ N(β; 0, σ²I)
Π σ(±ψ_n) dβ on a grid aligned with the Laplace approximation, and its
moments and predictive on the same grid. Against it:

* the ELBO (−F) is below log Z, and the gap is at least KL(q ‖ p(β | y)),
  which is computed independently: log Z − E_q[log p(y, β)] − H[q] with each
  E_q[log σ(±ψ_n)] by 1-D quadrature over ψ_n ~ N(x̃ᵀμ, x̃ᵀΣx̃);
* the VB mean is within the distance that KL allows: a log-concave
  posterior with −∇² log p ⪰ Σ₀⁻¹ has sub-Gaussian linear functionals with
  variance proxy (Σ₀)_ii (Herbst's argument), so |E_q β_i − E_p β_i| ≤
  sqrt(2 (Σ₀)_ii KL); the predictive p(y = 1 | x*) = E[σ(ψ*)] (σ ∈ [0, 1]) is
  within the total variation, ≤ sqrt(KL/2) (Pinsker);
* the VB variances are below the exact ones (mean-field VB underestimates);
* the free energy never increases, and a hand-written numpy PG-VB from the
  same start (E[ω] = 1/4, i.e. ξ = 0) gives the same free energy and q(β) at
  every iteration to 1e-10.

The measured numbers (the gaps) are printed by ``docs/logistic.md``.
"""
import numpy as np
import pytest
from scipy import integrate
from scipy.special import expit, log_expit

import fgraph as fg
from fgraph.families import PointMass
from fgraph.nodes import MvNormal
from fgraph.nodes.logistic import Logistic

PRIOR_VAR = 25.0  # σ = 5
ITERATIONS = 60


def data(dimension, count, seed):
    """Features (count, dimension) and labels from a logistic model with a moderate slope (not separable)."""
    rng = np.random.default_rng(seed)
    features = rng.normal(size=(count, dimension))
    truth = np.array([1.5, -0.5, 0.8][:dimension] + [0.4])
    labels = (rng.random(count) < expit(np.column_stack([features, np.ones(count)]) @ truth)).astype(float)
    return features, labels


def engine_run(features, labels, iterations=ITERATIONS, callback=None, intercept=True):
    dimension = features.shape[1] + intercept
    with fg.Model() as model:
        beta = MvNormal("beta", mean=np.zeros(dimension), cov=PRIOR_VAR * np.eye(dimension))
        Logistic("y", beta, features, observed=labels, intercept=intercept)
    return fg.infer(model, algorithm="vmp", iterations=iterations, init={"y_xi": PointMass(0.0)}, callback=callback)


# ------------------------------------------------------------------ oracles


def log_joint(betas, augmented, labels):
    """log N(β; 0, σ²I) + Σ_n log σ(±x̃_nᵀβ) for β of shape (..., D)."""
    signs = 2.0 * labels - 1.0
    logits = betas @ augmented.T
    dimension = augmented.shape[1]
    prior = -0.5 * np.sum(betas**2, axis=-1) / PRIOR_VAR - 0.5 * dimension * np.log(2 * np.pi * PRIOR_VAR)
    return prior + np.sum(log_expit(signs * logits), axis=-1)


def exact_posterior(augmented, labels, queries, points=801, width=14.0):
    """log Z, mean, covariance and p(y = 1 | x̃*) for each row of ``queries``, by a grid (trapezoid rule).

    The grid is centred on the mode and spans ±``width`` standard deviations of the Laplace
    approximation along its principal axes; the posterior is smooth and log-concave, so the
    trapezoid rule converges geometrically (the test also halves the grid to check it).
    """
    dimension = augmented.shape[1]
    signs = 2.0 * labels - 1.0
    mode = np.zeros(dimension)
    for _ in range(100):  # Newton on the log-concave log joint
        p = expit(signs * (augmented @ mode))
        gradient = augmented.T @ (signs * (1 - p)) - mode / PRIOR_VAR
        hessian = -(augmented.T * (p * (1 - p))) @ augmented - np.eye(dimension) / PRIOR_VAR
        mode = mode - np.linalg.solve(hessian, gradient)
    values, vectors = np.linalg.eigh(np.linalg.inv(-hessian))
    axis = np.linspace(-width, width, points)
    step = axis[1] - axis[0]
    grids = np.meshgrid(*([axis] * dimension), indexing="ij")
    whitened = np.stack([g.ravel() for g in grids], axis=-1)
    betas = mode + (whitened * np.sqrt(values)) @ vectors.T
    log_values = log_joint(betas, augmented, labels)
    peak = log_values.max()
    weights = np.exp(log_values - peak)
    edge = np.any(np.abs(whitened) == width, axis=-1)
    weights_trapezoid = weights * np.where(edge, 0.5, 1.0) if dimension == 1 else weights  # tails are ~0 anyway
    jacobian = np.prod(np.sqrt(values)) * step**dimension
    total = weights_trapezoid.sum()
    log_z = peak + np.log(total * jacobian)
    mean = weights_trapezoid @ betas / total
    centred = betas - mean
    cov = (centred * weights_trapezoid[:, None]).T @ centred / total
    predictive = (weights_trapezoid @ expit(betas @ queries.T)) / total
    return log_z, mean, cov, predictive


def expected_log_sigmoid(mean, var, sign):
    """E[log σ(sign ψ)] for ψ ~ N(mean, var), by adaptive quadrature."""
    std = np.sqrt(var)
    value, _ = integrate.quad(lambda z: log_expit(sign * (mean + std * z)) * np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi),
                              -12, 12, epsabs=1e-13, epsrel=1e-13, limit=200)
    return value


def true_elbo(mean, cov, augmented, labels):
    """E_q[log p(y, β)] + H[q] for q = N(mean, cov): the ELBO of q itself, with no bound on the likelihood."""
    dimension = len(mean)
    likelihood = sum(expected_log_sigmoid(row @ mean, row @ cov @ row, 2 * y - 1) for row, y in zip(augmented, labels))
    prior = -0.5 * (np.trace(cov) + mean @ mean) / PRIOR_VAR - 0.5 * dimension * np.log(2 * np.pi * PRIOR_VAR)
    entropy = 0.5 * (dimension * (1 + np.log(2 * np.pi)) + np.linalg.slogdet(cov)[1])
    return likelihood + prior + entropy


def numpy_pg_vb(augmented, labels, iterations):
    """Hand-written PG-VB: ω-update (ξ = sqrt(E[ψ²]), E[ω] = tanh(ξ/2)/(2ξ)), then q(β); ELBO after each pair.

    Starts from ξ = 0 (E[ω] = 1/4). The ELBO is Σ_n [κ_n E[ψ_n] − log 2 − log cosh(ξ_n/2)] − KL(q(β) ‖ prior).
    """
    count, dimension = augmented.shape
    kappa = labels - 0.5
    prior_precision = np.eye(dimension) / PRIOR_VAR
    xi = np.zeros(count)
    trace = []
    for _ in range(iterations):
        omega = np.where(xi > 0, np.tanh(xi / 2) / (2 * np.where(xi > 0, xi, 1.0)), 0.25)
        cov = np.linalg.inv(prior_precision + (augmented.T * omega) @ augmented)
        mean = cov @ (augmented.T @ kappa)
        xi = np.sqrt(np.einsum("ni,ij,nj->n", augmented, cov + np.outer(mean, mean), augmented))
        log_cosh = np.logaddexp(xi / 2, -xi / 2) - np.log(2)
        kl = 0.5 * (np.trace(cov) / PRIOR_VAR + mean @ mean / PRIOR_VAR - dimension
                    + dimension * np.log(PRIOR_VAR) - np.linalg.slogdet(cov)[1])
        trace.append((mean, cov, np.sum(kappa * (augmented @ mean) - np.log(2) - log_cosh) - kl))
    return trace


def augment(features):
    return np.column_stack([features, np.ones(len(features))])


# ------------------------------------------------------------------ tests

CASES = [pytest.param(0, 20, 3, id="bias-only-1d"), pytest.param(1, 30, 1, id="slope-and-bias-2d"),
         pytest.param(1, 8, 2, id="few-points-2d")]


@pytest.mark.parametrize("dimension, count, seed", CASES)
def test_vmp_against_the_quadrature_posterior(dimension, count, seed):
    features, labels = data(dimension, count, seed)
    augmented = augment(features)
    queries = augment(np.linspace(-2.0, 2.0, 5)[:, None] * np.ones((1, dimension)))
    log_z, mean, cov, predictive = exact_posterior(augmented, labels, queries)
    # the grid has converged: half the points per axis give the same numbers
    coarse = exact_posterior(augmented, labels, queries, points=401)
    assert coarse[0] == pytest.approx(log_z, abs=1e-10)
    np.testing.assert_allclose(coarse[1], mean, atol=1e-10)

    result = engine_run(features, labels)
    q = result.marginal("beta")
    free_energy = np.asarray(result.free_energy)
    assert np.all(np.diff(free_energy) <= 1e-12 * np.abs(free_energy[1:])), "the free energy increased"
    elbo = -free_energy[-1]
    kl = log_z - true_elbo(q.mean, q.cov, augmented, labels)  # KL(q ‖ p(β | y)) ≥ 0
    assert 0.0 <= kl <= log_z - elbo  # ELBO ≤ ELBO of q ≤ log Z: the PG bound only loosens it
    # VB underestimates every marginal variance
    assert np.all(np.diag(q.cov) < np.diag(cov))
    # the mean within what KL allows (sub-Gaussian proxy σ² of a posterior more log-concave than its prior)
    assert np.all(np.abs(q.mean - mean) <= np.sqrt(2.0 * PRIOR_VAR * kl))
    # the predictive E_q[σ(ψ*)] (by quadrature over ψ* ~ N(m, s²)) within the total variation
    vb_predictive = [integrate.quad(lambda z, m=row @ q.mean, s=np.sqrt(row @ q.cov @ row):
                                    expit(m + s * z) * np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi), -12, 12)[0]
                     for row in queries]
    assert np.all(np.abs(np.array(vb_predictive) - predictive) <= np.sqrt(kl / 2.0))


@pytest.mark.parametrize("dimension, count, seed", CASES)
def test_vmp_equals_hand_written_pg_vb_at_every_iteration(dimension, count, seed):
    features, labels = data(dimension, count, seed)
    seen = []
    result = engine_run(features, labels, iterations=25,
                        callback=lambda iteration, state: seen.append((state.marginal("beta").mean,
                                                                       state.marginal("beta").cov)))
    reference = numpy_pg_vb(augment(features), labels, 25)
    assert len(seen) == len(reference) == len(result.free_energy) == 25
    for (mean, cov), (expected_mean, expected_cov, expected_elbo), free_energy in zip(seen, reference,
                                                                                       result.free_energy):
        np.testing.assert_allclose(mean, expected_mean, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(cov, expected_cov, rtol=1e-10, atol=1e-12)
        assert -free_energy == pytest.approx(expected_elbo, rel=1e-10)
    # and the tilt is at its optimum for the final q(β)
    augmented = augment(features)
    second = reference[-1][1] + np.outer(reference[-1][0], reference[-1][0])
    np.testing.assert_allclose(result.marginal("y_xi").value,
                               np.sqrt(np.einsum("ni,ij,nj->n", augmented, second, augmented)), rtol=1e-10)


def test_without_an_intercept_it_is_pg_vb_on_the_features_alone():
    features, labels = data(2, 25, 4)
    result = engine_run(features, labels, iterations=20, intercept=False)
    mean, cov, elbo = numpy_pg_vb(features, labels, 20)[-1]
    np.testing.assert_allclose(result.marginal("beta").mean, mean, rtol=1e-10)
    np.testing.assert_allclose(result.marginal("beta").cov, cov, rtol=1e-10)
    assert -result.free_energy[-1] == pytest.approx(elbo, rel=1e-10)


def test_a_large_plate_never_forms_its_per_observation_matrices():
    """N = 10⁵, d = 20: the messages to β are sums over the plate; N 21×21 matrices (350 MB) are never made."""
    import tracemalloc

    from fgraph.families import gaussian_plate

    features, labels = data(2, 100_000, 7)
    features = np.column_stack([features] + [np.random.default_rng(9).normal(size=(100_000, 18))])
    formed = []
    original = gaussian_plate.GaussianLikelihoodOnDemand.__getattr__

    def spy(self, name):
        formed.append(name)
        return original(self, name)

    gaussian_plate.GaussianLikelihoodOnDemand.__getattr__ = spy
    try:
        tracemalloc.start()
        result = engine_run(features, labels, iterations=3)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        gaussian_plate.GaussianLikelihoodOnDemand.__getattr__ = original
    assert not formed
    assert peak < 120e6  # the data (16 MB), x̃ (17 MB) and a few N-vectors; the elements alone would be 353 MB
    assert np.all(np.diff(result.free_energy) <= 0.0)
