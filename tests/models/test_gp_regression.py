"""GP regression on the graph against scikit-learn's GaussianProcessRegressor, the evidence's gradients against
finite differences, batched functions against separate fits, and hyperparameter learning against scikit-learn's."""
import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process import kernels as sk

import fgraph as fg
from fgraph.errors import DataError
from fgraph.families.kernels import ExponentiatedQuadratic, Linear, Matern32, Matern52
from fgraph.models.gp import gp_posterior, log_evidence_gradients, maximise_evidence
from fgraph.nodes import DiagonalNormal, GaussianProcess

RNG = np.random.default_rng(7)
N = 40
X = RNG.uniform(-3, 3, size=(N, 2))
NOISE = RNG.uniform(0.02, 0.3, size=N)
Y = np.sin(X[:, 0]) + 0.5 * np.cos(2 * X[:, 1]) + np.sqrt(NOISE) * RNG.normal(size=N)
X_NEW = RNG.uniform(-3.5, 3.5, size=(15, 2))

PAIRS = [
    pytest.param(ExponentiatedQuadratic(1.5, 0.8), sk.ConstantKernel(1.5) * sk.RBF(0.8), id="eq"),
    pytest.param(Matern32(0.7, [0.6, 2.0]), sk.ConstantKernel(0.7) * sk.Matern([0.6, 2.0], nu=1.5), id="matern32"),
    pytest.param(Matern52(2.0, 1.1) + Linear(0.1),
                 sk.ConstantKernel(2.0) * sk.Matern(1.1, nu=2.5) + sk.ConstantKernel(0.1) * sk.DotProduct(0.0),
                 id="sum"),
]


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")  # scikit-learn's log θ of DotProduct(0)
@pytest.mark.parametrize("ours, theirs", PAIRS)
def test_posterior_predictions_and_evidence_equal_scikit_learn(ours, theirs):
    fitted = gp_posterior(X, Y, NOISE, ours)
    reference = GaussianProcessRegressor(theirs, alpha=NOISE, optimizer=None).fit(X, Y)
    np.testing.assert_allclose(fitted.log_evidence, reference.log_marginal_likelihood_value_, rtol=1e-10)
    mean, cov = reference.predict(X, return_cov=True)  # the posterior at the training inputs
    np.testing.assert_allclose(fitted.belief.mean[0], mean, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(fitted.belief.cov[0], cov, rtol=1e-8, atol=1e-9)
    new_mean, new_std = reference.predict(X_NEW, return_std=True)
    ours_mean, ours_var = fitted.predict(X_NEW)
    np.testing.assert_allclose(ours_mean[0], new_mean, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(np.sqrt(ours_var[0]), new_std, rtol=1e-8, atol=1e-9)
    _, full = fitted.predict(X_NEW, full_cov=True)
    np.testing.assert_allclose(np.diagonal(full[0]), ours_var[0], rtol=1e-10, atol=1e-12)


def test_the_evidence_is_the_scale_factor_of_the_graph():
    kernel = ExponentiatedQuadratic(1.2, 0.9)
    with fg.Model() as model:
        f = GaussianProcess("f", X, kernel, mean=0.3)
        DiagonalNormal("y", mean=f, variances=NOISE, observed=Y)
    result = fg.infer(model)
    K = kernel(X) + np.diag(NOISE)
    sign, log_det = np.linalg.slogdet(K)
    residual = Y - 0.3
    closed_form = -0.5 * (residual @ np.linalg.solve(K, residual) + log_det + N * np.log(2 * np.pi))
    np.testing.assert_allclose(result.log_evidence, closed_form, rtol=1e-10)
    np.testing.assert_allclose(result.evidence_per_variable()["f"], closed_form, rtol=1e-10)


def test_batched_functions_equal_separate_fits():
    targets = np.stack([Y, -Y, 2 * Y])
    noise = np.stack([NOISE, NOISE[::-1], np.full(N, 0.1)])
    means = np.array([0.1, -0.2, 0.0])
    kernel = Matern52(1.0, 1.0)
    batched = gp_posterior(X, targets, noise, kernel, means)
    for b in range(3):
        single = gp_posterior(X, targets[b], noise[b], kernel, means[b])
        np.testing.assert_allclose(batched.log_evidences[b], single.log_evidence, rtol=1e-12)
        np.testing.assert_allclose(batched.belief.mean[b], single.belief.mean[0], rtol=1e-11, atol=1e-13)
        np.testing.assert_allclose(batched.predict(X_NEW)[1][b], single.predict(X_NEW)[1][0], rtol=1e-10)


def _evidence(kernel, targets, noise, means):
    return gp_posterior(X, targets, noise, kernel, means).log_evidence


def test_gradients_equal_finite_differences():
    kernel = Matern32(1.3, [0.7, 1.6]) * ExponentiatedQuadratic(0.9, 2.0)
    targets, noise, means = np.stack([Y, Y**2]), np.stack([NOISE, 2 * NOISE]), np.array([0.2, -0.4])
    gradients = log_evidence_gradients(gp_posterior(X, targets, noise, kernel, means))
    theta, step = kernel.log_parameters, 1e-6
    for p in range(theta.size):
        shift = np.zeros(theta.size)
        shift[p] = step
        numeric = (_evidence(kernel.with_log_parameters(theta + shift), targets, noise, means)
                   - _evidence(kernel.with_log_parameters(theta - shift), targets, noise, means)) / (2 * step)
        np.testing.assert_allclose(gradients.kernel[p], numeric, rtol=1e-5, atol=1e-6)
    for b in range(2):
        shift = np.zeros(2)
        shift[b] = step
        numeric = (_evidence(kernel, targets, noise, means + shift) - _evidence(kernel, targets, noise, means - shift))
        np.testing.assert_allclose(gradients.means[b], numeric / (2 * step), rtol=1e-5, atol=1e-6)
    for b, n in [(0, 3), (1, 17)]:
        shift = np.zeros_like(targets)
        shift[b, n] = step
        numeric = (_evidence(kernel, targets + shift, noise, means) - _evidence(kernel, targets - shift, noise, means))
        np.testing.assert_allclose(gradients.targets[b, n], numeric / (2 * step), rtol=1e-5, atol=1e-6)
        numeric = (_evidence(kernel, targets, noise + shift, means) - _evidence(kernel, targets, noise - shift, means))
        np.testing.assert_allclose(gradients.variances[b, n], numeric / (2 * step), rtol=1e-5, atol=1e-6)


def test_learnt_hyperparameters_match_scikit_learns_optimum():
    fit = maximise_evidence(X, Y, NOISE, ExponentiatedQuadratic(1.0, [1.0, 1.0]), learn_mean=False, n_restarts=2,
                            random_state=0)
    reference = GaussianProcessRegressor(sk.ConstantKernel(1.0, (1e-5, 1e5)) * sk.RBF([1.0, 1.0], (1e-5, 1e5)),
                                         alpha=NOISE, n_restarts_optimizer=2, random_state=0).fit(X, Y)
    np.testing.assert_allclose(fit.posterior.log_evidence, reference.log_marginal_likelihood_value_, rtol=1e-6)
    np.testing.assert_allclose(fit.posterior.kernel.log_parameters, reference.kernel_.theta, atol=1e-3)
    assert fit.converged and fit.evaluations > 1


def test_a_learnt_mean_is_the_generalised_least_squares_mean():
    # for fixed θ, ∂𝓛/∂m = 1ᵀα = 0 gives m = 1ᵀS⁻¹y / 1ᵀS⁻¹1
    kernel = ExponentiatedQuadratic(1.0, 1.0)
    fit = maximise_evidence(X, Y + 3.0, NOISE, kernel, learn_mean=True)
    S = fit.posterior.kernel(X) + np.diag(NOISE)
    ones = np.ones(N)
    expected = ones @ np.linalg.solve(S, Y + 3.0) / (ones @ np.linalg.solve(S, ones))
    np.testing.assert_allclose(fit.posterior.means[0], expected, rtol=1e-5)


@pytest.mark.parametrize("targets, noise, words", [
    (Y[:5], NOISE, "N = 40"),
    (np.where(Y > 1, np.nan, Y), NOISE, "NaN"),
    (Y, -NOISE, "positive"),
])
def test_bad_observations_are_named(targets, noise, words):
    with pytest.raises(DataError, match=words):
        gp_posterior(X, targets, noise, ExponentiatedQuadratic())


def test_a_constant_mean_shifts_targets_and_predictions_alike():
    kernel = Matern52(1.0, 0.7)
    shifted = gp_posterior(X, Y + 2.5, NOISE, kernel, mean=2.5)
    centred = gp_posterior(X, Y, NOISE, kernel, mean=0.0)
    np.testing.assert_allclose(shifted.log_evidence, centred.log_evidence, rtol=1e-12)
    np.testing.assert_allclose(shifted.belief.mean, centred.belief.mean + 2.5, rtol=1e-12)
    np.testing.assert_allclose(shifted.predict(X_NEW)[0], centred.predict(X_NEW)[0] + 2.5, rtol=1e-12)
