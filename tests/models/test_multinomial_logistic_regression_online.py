"""``MultinomialLogisticRegression(likelihood=...)`` (the softmax model under a Gaussian likelihood approximation)
and ``partial_fit``.

Oracles: under an approximation the fit is K independent Bayesian linear regressions of the pseudo-observations
(written out here in numpy); streaming in any batching equals one fit; the predictive is E[softmax(ψ)] over the
independent Gaussian logits (here by a large independent Monte Carlo sample); Pólya-Gamma ``partial_fit`` is the
engine's fit of the batch from the carried posteriors.
"""
import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import fgraph as fg  # noqa: E402
from fgraph.errors import DataError  # noqa: E402
from fgraph.families import basis_matching  # noqa: E402
from fgraph.models.logistic import LIKELIHOODS, MultinomialLogisticRegression  # noqa: E402
from fgraph.nodes.mvnormal import MvNormal  # noqa: E402
from fgraph.nodes.stick_breaking_logistic import StickBreakingLogistic  # noqa: E402

APPROXIMATIONS = [name for name in LIKELIHOODS if name != "polya-gamma"]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@parametrize_with_checks([MultinomialLogisticRegression(likelihood="moment-original", predictive_samples=500)])
def test_scikit_learn_checks(estimator, check):
    check(estimator)


def data(N=90, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, 2))
    logits = X @ np.array([[2.0, -1.0, 0.0], [0.5, 1.5, -1.0]]) + np.array([0.2, 0.0, -0.3])
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    y = np.array(["a", "b", "c"])[[rng.choice(3, p=row) for row in p]]
    return X, y


@pytest.mark.parametrize("method", APPROXIMATIONS)
def test_fit_is_one_bayesian_linear_regression_per_class(method):
    X, y = data()
    estimator = MultinomialLogisticRegression(prior_var=4.0, likelihood=method, alpha_epsilon=0.3).fit(X, y)
    labels = np.searchsorted(["a", "b", "c"], y)
    targets, variances = basis_matching.softmax_pseudo_observations(labels, 3, 0.3, method)
    rows = np.column_stack([X, np.ones(len(X))])
    assert estimator.posterior_means_.shape == (3, 3) and estimator.coef_.shape == (3, 2)
    for k in range(3):
        precision = np.eye(3) / 4.0 + rows.T @ (rows / variances[:, k, None])
        cov = np.linalg.inv(precision)
        np.testing.assert_allclose(estimator.posterior_covs_[k], cov, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(estimator.posterior_means_[k], cov @ (rows.T @ (targets[:, k] / variances[:, k])),
                                   rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("method", APPROXIMATIONS)
def test_streaming_equals_one_fit(method):
    X, y = data(seed=1)
    batch = MultinomialLogisticRegression(likelihood=method).fit(X, y)
    streamed = MultinomialLogisticRegression(likelihood=method)
    for start, stop in ((0, 1), (1, 3), (3, 40), (40, 90)):
        streamed.partial_fit(X[start:stop], y[start:stop], classes=["c", "b", "a"])
    np.testing.assert_allclose(streamed.posterior_means_, batch.posterior_means_, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(streamed.posterior_covs_, batch.posterior_covs_, rtol=1e-9, atol=1e-12)
    assert streamed.n_samples_seen_ == 90 and list(streamed.classes_) == ["a", "b", "c"]


def test_the_predictive_is_the_softmax_averaged_over_the_gaussian_logits():
    X, y = data(seed=2)
    estimator = MultinomialLogisticRegression(likelihood="variational", predictive_samples=20000).fit(X, y)
    probabilities = estimator.predict_proba(X[:5])
    np.testing.assert_allclose(probabilities.sum(1), 1.0, rtol=1e-12)
    rows = np.column_stack([X[:5], np.ones(5)])
    means = rows @ estimator.posterior_means_.T
    stds = np.sqrt(np.einsum("ni,kij,nj->nk", rows, estimator.posterior_covs_, rows))
    draws = np.random.default_rng(123).standard_normal((400000, 1, 3)) * stds + means
    draws = np.exp(draws - draws.max(-1, keepdims=True))
    reference = (draws / draws.sum(-1, keepdims=True)).mean(0)
    np.testing.assert_allclose(probabilities, reference, atol=8 * 0.5 / np.sqrt(20000))
    np.testing.assert_array_equal(estimator.predict(X[:5]), np.array(["a", "b", "c"])[probabilities.argmax(1)])


def test_polya_gamma_partial_fit_carries_the_stick_posteriors():
    X, y = data(N=60, seed=3)
    online = MultinomialLogisticRegression(prior_var=9.0, tol=1e-10, max_iter=3000)
    online.partial_fit(X[:30], y[:30], classes=["a", "b", "c"])
    means, covs = online.posterior_means_.copy(), online.posterior_covs_.copy()
    online.partial_fit(X[30:], y[30:])
    with fg.Model() as model:
        betas = [MvNormal(f"beta{k}", mean=means[k], cov=covs[k]) for k in range(2)]
        StickBreakingLogistic("y", betas, X[30:], observed=np.searchsorted(["a", "b", "c"], y[30:]))
    result = fg.infer(model, algorithm="vmp", iterations=3000, tol=1e-10 * len(X[30:]))  # tol per sample
    for k in range(2):
        np.testing.assert_allclose(online.posterior_means_[k], result.marginal(f"beta{k}").mean, rtol=1e-10)


def test_bad_settings_and_labels_are_named_errors():
    X, y = data(N=20)
    with pytest.raises(ValueError, match="likelihood must be one of"):
        MultinomialLogisticRegression(likelihood="softmax").fit(X, y)
    with pytest.raises(ValueError, match="predictive_samples must be an integer"):
        MultinomialLogisticRegression(likelihood="moment", predictive_samples=0).fit(X, y)
    with pytest.raises(ValueError, match="classes must be passed on the first call"):
        MultinomialLogisticRegression(likelihood="moment").partial_fit(X, y)
    estimator = MultinomialLogisticRegression(likelihood="moment").partial_fit(X, y, classes=["a", "b", "c"])
    with pytest.raises(DataError, match="label 'd' at index 0 is not one of the classes"):
        estimator.partial_fit(X[:1], np.array(["d"]))
