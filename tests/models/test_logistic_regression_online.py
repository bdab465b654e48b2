"""``BayesianLogisticRegression(likelihood=...)`` and ``partial_fit``, and the conjugate update they stream with.

Oracles: the Gaussian likelihood approximations make the fit Bayesian linear regression of the pseudo-observations
m on x̃ with noise variances v, written out here in numpy (the engine's fit must be it); streaming through
``partial_fit`` in any batching must equal one fit (conjugacy); the update in its three forms (Sherman–Morrison,
Woodbury, precision) must equal the direct formula; Pólya-Gamma ``partial_fit`` must be the engine's fit of each
batch from the previous posterior.
"""
import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import fgraph as fg  # noqa: E402
from fgraph.errors import DataError  # noqa: E402
from fgraph.families import basis_matching  # noqa: E402
from fgraph.models.logistic import observe_linear, observe_one, LIKELIHOODS, BayesianLogisticRegression  # noqa: E402
from fgraph.nodes.logistic import Logistic  # noqa: E402
from fgraph.nodes.mvnormal import MvNormal  # noqa: E402

APPROXIMATIONS = [name for name in LIKELIHOODS if name != "polya-gamma"]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@parametrize_with_checks([BayesianLogisticRegression(likelihood="moment"),
                          BayesianLogisticRegression(likelihood="variational", alpha_epsilon=0.3, beta_epsilon=0.2)])
def test_scikit_learn_checks(estimator, check):
    check(estimator)


def data(N=120, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, d))
    logits = X @ np.array([1.2, -0.8, 0.5])[:d] + 0.4
    y = np.where(rng.random(N) < 1.0 / (1.0 + np.exp(-logits)), "yes", "no")
    return X, y


def regression_posterior(X, labels, prior_var, method, alpha, beta):
    """q(β) of Bayesian linear regression of the pseudo-observations on [x, 1] (numpy, by hand)."""
    m, v = basis_matching.logistic_pseudo_observations(labels, alpha, beta, method)
    rows = np.column_stack([X, np.ones(len(X))])
    precision = np.eye(rows.shape[1]) / prior_var + rows.T @ (rows / v[:, None])
    cov = np.linalg.inv(precision)
    return cov @ (rows.T @ (m / v)), cov


@pytest.mark.parametrize("method", APPROXIMATIONS)
def test_fit_is_bayesian_linear_regression_of_the_pseudo_observations(method):
    X, y = data()
    estimator = BayesianLogisticRegression(prior_var=4.0, likelihood=method, alpha_epsilon=0.2, beta_epsilon=0.5)
    estimator.fit(X, y)
    mean, cov = regression_posterior(X, (y == "yes").astype(float), 4.0, method, 0.2, 0.5)
    np.testing.assert_allclose(estimator.posterior_mean_, mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(estimator.posterior_cov_, cov, rtol=1e-10, atol=1e-13)
    assert estimator.converged_ and estimator.n_iter_ <= 3  # one sweep is exact: the second sees no change
    assert list(estimator.classes_) == ["no", "yes"]


@pytest.mark.parametrize("method", APPROXIMATIONS)
def test_streaming_in_any_batching_equals_one_fit(method):
    X, y = data(seed=1)
    batch = BayesianLogisticRegression(likelihood=method).fit(X, y)
    one_at_a_time = BayesianLogisticRegression(likelihood=method)
    for n in range(len(X)):
        one_at_a_time.partial_fit(X[n:n + 1], y[n:n + 1], classes=["no", "yes"])
    uneven = BayesianLogisticRegression(likelihood=method)
    for start, stop in ((0, 3), (3, 50), (50, 51), (51, 120)):  # Woodbury (B ≤ D), one row, precision form
        uneven.partial_fit(X[start:stop], y[start:stop], classes=["no", "yes"])
    for streamed in (one_at_a_time, uneven):
        np.testing.assert_allclose(streamed.posterior_mean_, batch.posterior_mean_, rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(streamed.posterior_cov_, batch.posterior_cov_, rtol=1e-9, atol=1e-12)
        assert streamed.n_samples_seen_ == len(X)
    np.testing.assert_allclose(one_at_a_time.predict_proba(X), batch.predict_proba(X), rtol=1e-9)
    # fit then partial_fit continues from fit's posterior
    continued = BayesianLogisticRegression(likelihood=method).fit(X[:60], y[:60]).partial_fit(X[60:], y[60:])
    np.testing.assert_allclose(continued.posterior_mean_, batch.posterior_mean_, rtol=1e-9, atol=1e-11)


def test_polya_gamma_partial_fit_carries_the_posterior_as_the_next_prior():
    X, y = data(N=80, seed=2)
    labels = (y == "yes").astype(float)
    online = BayesianLogisticRegression(prior_var=9.0, tol=1e-10, max_iter=3000)
    online.partial_fit(X[:50], y[:50], classes=["no", "yes"])
    first = BayesianLogisticRegression(prior_var=9.0, tol=1e-10, max_iter=3000).fit(X[:50], y[:50])
    np.testing.assert_allclose(online.posterior_mean_, first.posterior_mean_, rtol=1e-12)
    mean, cov = online.posterior_mean_.copy(), online.posterior_cov_.copy()
    online.partial_fit(X[50:], y[50:])
    with fg.Model() as model:  # the second batch by hand: the engine from the carried prior
        beta = MvNormal("beta", mean=mean, cov=cov)
        Logistic("y", beta, X[50:], observed=labels[50:])
    # the estimator's tol is per sample: 1e-10 nats times the batch's 30 labels
    expected = fg.infer(model, algorithm="vmp", iterations=3000, tol=1e-10 * len(X[50:])).marginal("beta")
    np.testing.assert_allclose(online.posterior_mean_, expected.mean, rtol=1e-10)
    np.testing.assert_allclose(online.posterior_cov_, expected.cov, rtol=1e-10)
    # assumed-density filtering is not the batch posterior: the order of the data matters
    batch = BayesianLogisticRegression(prior_var=9.0, tol=1e-10, max_iter=3000).fit(X, y)
    assert np.abs(online.posterior_mean_ - batch.posterior_mean_).max() > 1e-4


@pytest.mark.parametrize("B", [1, 2, 4, 9])
def test_the_conjugate_update_in_each_form_is_the_direct_formula(B):
    rng = np.random.default_rng(B)
    D = 4
    root = rng.standard_normal((D, D))
    cov = root @ root.T + 0.5 * np.eye(D)
    mean = rng.standard_normal(D)
    rows, targets, variances = rng.standard_normal((B, D)), rng.standard_normal(B), rng.uniform(0.2, 3.0, B)
    precision = np.linalg.inv(cov) + rows.T @ (rows / variances[:, None])
    expected_cov = np.linalg.inv(precision)
    expected_mean = expected_cov @ (np.linalg.solve(cov, mean) + rows.T @ (targets / variances))
    new_mean, new_cov = observe_linear(mean, cov, rows, targets, variances)
    np.testing.assert_allclose(new_mean, expected_mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(new_cov, expected_cov, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(new_cov, new_cov.T)
    if B == 1:
        one_mean, one_cov = observe_one(mean, cov, rows[0], targets[0], variances[0])
        np.testing.assert_allclose(one_mean, expected_mean, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(one_cov, expected_cov, rtol=1e-10, atol=1e-12)


def test_bad_settings_and_labels_are_named_errors():
    X, y = data(N=20)
    for options, match in (({"likelihood": "probit"}, "likelihood must be one of"),
                           ({"likelihood": "moment", "alpha_epsilon": 0.0}, "alpha_epsilon must be a positive"),
                           ({"likelihood": "moment", "beta_epsilon": -1.0}, "beta_epsilon must be a positive")):
        with pytest.raises(ValueError, match=match):
            BayesianLogisticRegression(**options).fit(X, y)
        with pytest.raises(ValueError, match=match):
            BayesianLogisticRegression(**options).partial_fit(X, y, classes=["no", "yes"])
    with pytest.raises(ValueError, match="classes must be passed on the first call"):
        BayesianLogisticRegression(likelihood="moment").partial_fit(X, y)
    with pytest.raises(DataError, match="classes must hold exactly 2 labels"):
        BayesianLogisticRegression(likelihood="moment").partial_fit(X, y, classes=["no", "yes", "maybe"])
    estimator = BayesianLogisticRegression(likelihood="moment").partial_fit(X, y, classes=["no", "yes"])
    with pytest.raises(DataError, match="label 'maybe' at index 1 is not one of the classes"):
        estimator.partial_fit(X[:2], np.array(["no", "maybe"]))
    with pytest.raises(DataError, match="differ from those of the first call"):
        estimator.partial_fit(X[:2], y[:2], classes=["a", "b"])
    with pytest.raises(ValueError, match="features"):
        estimator.partial_fit(X[:2, :2], y[:2])
