"""The sparse variational GP: equal to the exact GP on the graph when the inducing inputs are the training inputs,
a lower bound otherwise, gradients against finite differences, and behind GPClassifier's API."""
import numpy as np
import pytest

from fgraph.errors import DataError, ModelError
from fgraph.families.kernels import ExponentiatedQuadratic, Matern32, Matern52
from fgraph.models.gp import (
    gp_posterior, kmeans_inducing_inputs, maximise_evidence, sparse_gp_posterior, sparse_log_evidence_gradients,
)

RNG = np.random.default_rng(21)
N = 35
X = RNG.uniform(-2, 2, size=(N, 2))
TARGETS = np.stack([np.sin(2 * X[:, 0]), X[:, 1] ** 2]) + 0.2 * RNG.normal(size=(2, N))
NOISE = RNG.uniform(0.05, 0.4, size=(2, N))
MEANS = np.array([0.1, -0.3])
X_NEW = RNG.uniform(-2.5, 2.5, size=(9, 2))
KERNEL = Matern52(1.1, [0.8, 1.3])


def test_inducing_inputs_at_the_training_inputs_give_the_exact_gp():
    sparse = sparse_gp_posterior(X, TARGETS, NOISE, KERNEL, X, MEANS, jitter=0.0)
    exact = gp_posterior(X, TARGETS, NOISE, KERNEL, MEANS)
    np.testing.assert_allclose(sparse.log_evidences, exact.log_evidences, rtol=1e-10)
    for ours, theirs in zip(sparse.predict(X_NEW), exact.predict(X_NEW)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-10)
    _, full = sparse.predict(X_NEW, full_cov=True)
    np.testing.assert_allclose(np.diagonal(full, axis1=1, axis2=2), sparse.predict(X_NEW)[1], rtol=1e-9, atol=1e-12)


def test_fewer_inducing_inputs_give_a_lower_bound_that_rises_with_them():
    exact = gp_posterior(X, TARGETS, NOISE, KERNEL, MEANS).log_evidence
    bounds = [sparse_gp_posterior(X, TARGETS, NOISE, KERNEL, X[:count], MEANS).log_evidence for count in (4, 12, 25)]
    assert bounds[0] < bounds[1] < bounds[2] < exact


def test_gradients_equal_finite_differences():
    kernel = Matern32(0.9, 0.7) * ExponentiatedQuadratic(1.3, [1.0, 2.0])
    Z = X[::4]
    gradients = sparse_log_evidence_gradients(sparse_gp_posterior(X, TARGETS, NOISE, kernel, Z, MEANS))

    def bound(kernel=kernel, targets=TARGETS, noise=NOISE, means=MEANS):
        return sparse_gp_posterior(X, targets, noise, kernel, Z, means).log_evidence

    theta, step = kernel.log_parameters, 1e-6
    for p in range(theta.size):
        shift = np.zeros(theta.size)
        shift[p] = step
        numeric = (bound(kernel.with_log_parameters(theta + shift)) - bound(kernel.with_log_parameters(theta - shift)))
        np.testing.assert_allclose(gradients.kernel[p], numeric / (2 * step), rtol=1e-5, atol=1e-6)
    shift = np.array([0.0, step])
    np.testing.assert_allclose(gradients.means[1], (bound(means=MEANS + shift) - bound(means=MEANS - shift))
                               / (2 * step), rtol=1e-5, atol=1e-6)
    for b, n in [(0, 2), (1, 30)]:
        shift = np.zeros_like(TARGETS)
        shift[b, n] = step
        np.testing.assert_allclose(gradients.targets[b, n], (bound(targets=TARGETS + shift)
                                                             - bound(targets=TARGETS - shift)) / (2 * step),
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(gradients.variances[b, n], (bound(noise=NOISE + shift) - bound(noise=NOISE - shift))
                                   / (2 * step), rtol=1e-5, atol=1e-6)


def test_learning_by_the_bound_with_all_inputs_learns_the_exact_hyperparameters():
    start = ExponentiatedQuadratic(1.0, [1.0, 1.0])
    sparse = maximise_evidence(X, TARGETS, NOISE, start, MEANS, inducing=X, jitter=0.0)
    exact = maximise_evidence(X, TARGETS, NOISE, start, MEANS)
    np.testing.assert_allclose(sparse.posterior.log_evidence, exact.posterior.log_evidence, rtol=1e-8)
    np.testing.assert_allclose(sparse.posterior.kernel.log_parameters, exact.posterior.kernel.log_parameters,
                               atol=1e-4)


def test_the_sparse_classifier_with_all_inputs_is_the_exact_one():
    pytest.importorskip("sklearn")
    from sklearn.datasets import load_iris
    from fgraph.models.gp import GPClassifier

    X_iris, y = load_iris(return_X_y=True)
    X_iris = (X_iris - X_iris.mean(0)) / X_iris.std(0)
    keep = np.r_[0:20, 50:70, 100:120]
    exact = GPClassifier(jitter=0.0, inducing_points=None).fit(X_iris[keep], y[keep])
    sparse = GPClassifier(jitter=0.0, inducing_points=X_iris[keep]).fit(X_iris[keep], y[keep])
    np.testing.assert_allclose(sparse.log_marginal_likelihood_value_, exact.log_marginal_likelihood_value_,
                               rtol=1e-7)
    np.testing.assert_allclose(sparse.predict_proba(X_iris), exact.predict_proba(X_iris), atol=1e-5)
    assert exact.inducing_inputs_ is None and sparse.inducing_inputs_.shape == (60, 4)


def test_kmeans_places_the_inducing_inputs_and_refuses_more_than_n():
    Z = kmeans_inducing_inputs(X, 6, random_state=0)
    assert Z.shape == (6, 2) and np.all(np.abs(Z) <= 2.0)
    with pytest.raises(ModelError, match="at most N = 35"):
        kmeans_inducing_inputs(X, 36)
    with pytest.raises(DataError, match="at most N"):
        sparse_gp_posterior(X, TARGETS, NOISE, KERNEL, np.vstack([X, X[:1]]))
    with pytest.raises(DataError, match="expects 2|2 input dimensions"):
        sparse_gp_posterior(X, TARGETS, NOISE, KERNEL, X[:, :1])


def test_the_gradient_in_the_inducing_inputs_equals_finite_differences():
    kernel = Matern52(1.2, [0.7, 1.1]) + ExponentiatedQuadratic(0.3, 2.0)
    Z = X[::5] + 0.1
    gradients = sparse_log_evidence_gradients(sparse_gp_posterior(X, TARGETS, NOISE, kernel, Z, MEANS), inducing=True)
    step = 1e-6
    for m, j in [(0, 0), (3, 1), (6, 0)]:
        shift = np.zeros(Z.shape)
        shift[m, j] = step
        numeric = (sparse_gp_posterior(X, TARGETS, NOISE, kernel, Z + shift, MEANS).log_evidence
                   - sparse_gp_posterior(X, TARGETS, NOISE, kernel, Z - shift, MEANS).log_evidence) / (2 * step)
        np.testing.assert_allclose(gradients.inducing[m, j], numeric, rtol=1e-5, atol=1e-6)


def test_learning_the_inducing_inputs_raises_the_bound():
    Z = X[:5]
    kernel = ExponentiatedQuadratic(1.0, 1.0)
    fixed = maximise_evidence(X, TARGETS, NOISE, kernel, MEANS, inducing=Z)
    learnt = maximise_evidence(X, TARGETS, NOISE, kernel, MEANS, inducing=Z, learn_inducing=True)
    assert learnt.posterior.log_evidence > fixed.posterior.log_evidence
    assert not np.allclose(learnt.posterior.inducing, Z)
    with pytest.raises(ModelError, match="give the initial ones"):
        maximise_evidence(X, TARGETS, NOISE, kernel, MEANS, learn_inducing=True)
