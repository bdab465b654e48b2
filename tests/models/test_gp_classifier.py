"""GPClassifier: scikit-learn's checks, the pseudo-observations of basis_matching, against scikit-learn's
GaussianProcessClassifier, the exact model's bound against a dense computation, bad input."""
import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.datasets import load_breast_cancer, load_iris  # noqa: E402
from sklearn.gaussian_process import GaussianProcessClassifier  # noqa: E402
from sklearn.gaussian_process.kernels import RBF, ConstantKernel  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from fgraph.errors import DataError, ModelError  # noqa: E402
from fgraph.families.basis_matching import (  # noqa: E402
    expected_log_sigmoid, logistic_pseudo_observations, softmax_pseudo_observations,
)
from fgraph.families.kernels import ExponentiatedQuadratic  # noqa: E402
from fgraph.metrics import log_predictive_density  # noqa: E402
from fgraph.models.gp import GPClassifier, classification_bound, gp_posterior, pseudo_observations  # noqa: E402


@parametrize_with_checks([GPClassifier(max_iter=5, n_draws=256)])
def test_scikit_learn_checks(estimator, check):
    check(estimator)


def _split(loader, size=None):
    X, y = loader(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    if size is not None:
        keep = np.random.default_rng(0).permutation(len(y))[:size]
        X, y = X[keep], y[keep]
    return train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)


@pytest.mark.parametrize("method", ["moment", "laplace", "variational", "moment-original"])
def test_pseudo_observations_are_those_of_basis_matching(method):
    labels = np.array([0, 2, 1, 1, 0])
    targets, variances = pseudo_observations(labels, 3, method, 0.05)
    expected_targets, expected_variances = softmax_pseudo_observations(labels, 3, 0.05, method)
    np.testing.assert_array_equal(targets, expected_targets.T)
    np.testing.assert_array_equal(variances, expected_variances.T)
    targets, variances = pseudo_observations(labels % 2, 2, method, 0.05)
    expected_targets, expected_variances = logistic_pseudo_observations(labels % 2, 0.05, None, method)
    np.testing.assert_array_equal(targets[0], expected_targets)
    np.testing.assert_array_equal(variances[0], expected_variances)


def test_the_fit_is_the_regression_on_the_pseudo_observations():
    X_train, X_test, y_train, _ = _split(load_iris)
    classifier = GPClassifier(optimizer=None, learn_mean=False,
                              kernel=ExponentiatedQuadratic(2.0, 1.5)).fit(X_train, y_train)
    targets, variances = softmax_pseudo_observations(y_train, 3, 0.1, "moment")
    regression = gp_posterior(X_train, targets.T, variances.T, ExponentiatedQuadratic(2.0, 1.5), targets.mean(axis=0))
    np.testing.assert_allclose(classifier.log_marginal_likelihood_value_, regression.log_evidence, rtol=1e-12)
    mean, variance = classifier.latent_predictive(X_test)
    expected_mean, expected_variance = regression.predict(X_test)
    np.testing.assert_allclose(mean, expected_mean.T, rtol=1e-12)
    np.testing.assert_allclose(variance, expected_variance.T, rtol=1e-12)


def test_binary_classification_against_scikit_learns_laplace_classifier():
    X_train, X_test, y_train, y_test = _split(load_breast_cancer, 300)
    ours = GPClassifier(method="moment").fit(X_train, y_train)
    theirs = GaussianProcessClassifier(ConstantKernel(1.0) * RBF(1.0), random_state=0).fit(X_train, y_train)
    ours_p, theirs_p = ours.predict_proba(X_test), theirs.predict_proba(X_test)
    np.testing.assert_allclose(ours_p.sum(axis=1), 1.0, rtol=1e-12)
    assert np.mean(ours.predict(X_test) == y_test) >= np.mean(theirs.predict(X_test) == y_test) - 0.03
    assert log_predictive_density(ours_p, y_test) >= log_predictive_density(theirs_p, y_test) - 0.05


def test_multiclass_probabilities_are_the_softmax_averaged_over_the_latent_predictive():
    X_train, X_test, y_train, y_test = _split(load_iris)
    classifier = GPClassifier(n_draws=4096).fit(X_train, y_train)
    mean, variance = classifier.latent_predictive(X_test[:4])
    draws = mean[:, None, :] + np.sqrt(variance)[:, None, :] * np.random.default_rng(1).normal(size=(4, 200_000, 3))
    softmax = np.exp(draws - draws.max(axis=-1, keepdims=True))
    monte_carlo = (softmax / softmax.sum(axis=-1, keepdims=True)).mean(axis=1)
    np.testing.assert_allclose(classifier.predict_proba(X_test[:4]), monte_carlo, atol=3e-3)
    assert np.mean(classifier.predict(X_test) == y_test) >= 0.9


def test_binary_bound_equals_the_dense_computation():
    X_train, _, y_train, _ = _split(load_breast_cancer, 60)
    targets, variances = logistic_pseudo_observations(y_train, 0.2, None, "variational")
    kernel = ExponentiatedQuadratic(3.0, 4.0)
    posterior = gp_posterior(X_train, targets, variances, kernel, 0.1)
    mean, cov = posterior.belief.mean[0], posterior.belief.cov[0]
    K = kernel(X_train)
    difference = mean - 0.1
    kl = 0.5 * (np.trace(np.linalg.solve(K, cov)) + difference @ np.linalg.solve(K, difference) - len(mean)
                + np.linalg.slogdet(K)[1] - np.linalg.slogdet(cov)[1])
    expected = np.sum(expected_log_sigmoid((2 * y_train - 1) * mean, np.sqrt(np.diag(cov)))) - kl
    np.testing.assert_allclose(classification_bound(posterior, y_train), expected, rtol=1e-7)


def test_elbo_chooses_alpha_epsilon_and_improves_the_bound():
    X_train, _, y_train, _ = _split(load_iris)
    fixed = GPClassifier(method="laplace", alpha_epsilon=0.1, optimizer=None, n_draws=512).fit(X_train, y_train)
    chosen = GPClassifier(method="laplace", alpha_epsilon="elbo", optimizer=None, n_draws=512).fit(X_train, y_train)
    fixed_bound = classification_bound(fixed.posterior_, np.searchsorted(fixed.classes_, y_train), 512)
    assert chosen.elbo_ >= fixed_bound - 1e-9 and chosen.alpha_epsilon_ != 0.1
    joint = GPClassifier(method="laplace", alpha_epsilon="elbo", optimizer="elbo", n_draws=512,
                         max_iter=30).fit(X_train, y_train)
    assert joint.elbo_ >= chosen.elbo_ - 1e-6


@pytest.mark.parametrize("parameters, words", [
    ({"method": "probit"}, "method must be one of"),
    ({"alpha_epsilon": 0.0}, "alpha_epsilon must be"),
    ({"alpha_epsilon": "evidence"}, "alpha_epsilon must be"),
    ({"optimizer": "adam"}, "optimizer must be"),
    ({"kernel": "rbf"}, "kernel must be"),
    ({"n_draws": 0}, "n_draws must be"),
    ({"kernel": ExponentiatedQuadratic(1.0, [1.0, 1.0])}, "2 ARD lengthscales but X has 4 features"),
    ({"inducing_points": 1000}, "at most N = 150"),
    ({"inducing_points": np.zeros((5, 3))}, "shape \\(M, 4\\)"),
    ({"inducing_points": "many"}, "inducing_points must be"),
    ({"random_state": np.random.default_rng(0)}, "random_state must be None"),
    ({"inducing_points": 10, "optimizer": "elbo"}, "needs the exact GP"),
])
def test_bad_parameters_are_named(parameters, words):
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ModelError, match=words):
        GPClassifier(**parameters).fit(X, y)


def test_one_class_is_refused():
    with pytest.raises(DataError, match="at least 2 classes"):
        GPClassifier().fit(np.zeros((4, 2)), np.ones(4))


@pytest.mark.parametrize("method", ["moment", "variational", "moment-original", "laplace"])
def test_the_evidence_gradient_in_log_alpha_equals_finite_differences(method):
    from fgraph.models.gp import log_evidence_gradients, pseudo_observation_derivatives

    X_train, _, y_train, _ = _split(load_iris)
    kernel = ExponentiatedQuadratic(3.0, 1.5)

    def evidence(alpha):
        targets, variances = pseudo_observations(y_train, 3, method, alpha)
        return gp_posterior(X_train, targets, variances, kernel, -1.0).log_evidence

    targets, variances, d_targets, d_variances = pseudo_observation_derivatives(y_train, 3, method, 0.2)
    gradients = log_evidence_gradients(gp_posterior(X_train, targets, variances, kernel, -1.0))
    analytic = np.sum(gradients.targets * d_targets) + np.sum(gradients.variances * d_variances)
    step = 1e-4
    numeric = (evidence(0.2 * np.exp(step)) - evidence(0.2 * np.exp(-step))) / (2 * step)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5)


def test_learning_alpha_epsilon_with_the_hyperparameters_raises_the_evidence():
    from fgraph.models.gp import maximise_evidence, pseudo_observation_derivatives

    X_train, _, y_train, _ = _split(load_breast_cancer, 120)
    kernel = ExponentiatedQuadratic(2.0, 3.0)

    def observations(alpha):
        return pseudo_observation_derivatives(y_train, 2, "moment", alpha)

    learnt = maximise_evidence(X_train, None, None, kernel, 0.0, observations=observations, alpha_epsilon=0.1,
                               alpha_bounds=(1e-2, 1e2))
    assert 0.1 < learnt.alpha_epsilon < 1e2 * (1 + 1e-9)  # upwards: on labels it runs to the bound
    for alpha in (0.05, 0.1, 1.0):
        targets, variances, _, _ = observations(alpha)
        fixed = maximise_evidence(X_train, targets, variances, kernel, 0.0)
        assert learnt.posterior.log_evidence >= fixed.posterior.log_evidence - 1e-6


def test_multiclass_classification_against_scikit_learns_one_vs_rest():
    X_train, X_test, y_train, y_test = _split(load_iris)
    ours = GPClassifier(n_draws=1024).fit(X_train, y_train)
    theirs = GaussianProcessClassifier(ConstantKernel(1.0) * RBF(1.0), multi_class="one_vs_rest",
                                       random_state=0).fit(X_train, y_train)
    ours_p, theirs_p = ours.predict_proba(X_test), theirs.predict_proba(X_test)
    assert np.mean(ours.predict(X_test) == y_test) >= np.mean(theirs.predict(X_test) == y_test) - 0.05
    assert log_predictive_density(ours_p, y_test) >= log_predictive_density(theirs_p, y_test) - 0.05
