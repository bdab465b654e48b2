"""The estimators' ``to_arviz``: draws of their posteriors and pointwise log-likelihoods for arviz.waic / loo.

Oracles: the log-likelihood of a few draws written out by hand with numpy/scipy from the exported draws, and
the moments of many draws against the stored posterior (within Monte Carlo error).
"""
import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit, softmax

from fgraph.errors import DataError, ModelError
from fgraph.models import (
    BayesianGMM, BayesianLogisticRegression, CMNClassifier, GPClassifier, MultinomialLogisticRegression,
)

az = pytest.importorskip("arviz")
warnings.filterwarnings("ignore", category=FutureWarning, module="arviz")

RNG = np.random.default_rng(0)
X = RNG.normal(size=(40, 2))
BINARY = np.where(X[:, 0] + 0.5 * RNG.normal(size=40) > 0, "yes", "no")
THREE = np.digitize(X[:, 0], [-0.5, 0.5])


def test_binary_logistic_regression():
    estimator = BayesianLogisticRegression().fit(X, BINARY)
    idata = estimator.to_arviz(X, BINARY, draws=4000, seed=0)
    coef, intercept = idata.posterior["coef"].values[0], idata.posterior["intercept"].values[0]
    assert coef.shape == (4000, 2) and intercept.shape == (4000,)
    beta = np.column_stack([coef, intercept])
    np.testing.assert_allclose(beta.mean(axis=0), estimator.posterior_mean_,
                               atol=4 * np.sqrt(np.diag(estimator.posterior_cov_).max() / 4000))
    positive = BINARY == "yes"  # classes_ = ["no", "yes"]
    for s in (0, 17, 3999):
        p = expit(X @ coef[s] + intercept[s])
        np.testing.assert_allclose(idata.log_likelihood["y"].values[0, s], np.log(np.where(positive, p, 1 - p)),
                                   rtol=1e-8, atol=1e-12)
    assert np.isfinite(az.loo(idata).elpd_loo)
    assert set(estimator.to_arviz(draws=5, seed=0).groups()) == {"posterior"}


@pytest.mark.parametrize("likelihood", ["polya-gamma", "moment"])
def test_multinomial_logistic_regression(likelihood):
    estimator = MultinomialLogisticRegression(likelihood=likelihood).fit(X, THREE)
    idata = estimator.to_arviz(X, THREE, draws=200, seed=1)
    coef, intercept = idata.posterior["coef"].values[0], idata.posterior["intercept"].values[0]
    sticks = 2 if likelihood == "polya-gamma" else 3
    assert coef.shape == (200, sticks, 2) and idata.log_likelihood["y"].shape == (1, 200, 40)
    for s in (0, 99):
        psi = X @ coef[s].T + intercept[s]
        if likelihood == "polya-gamma":  # p(0) = σ(ψ0), p(1) = σ(−ψ0) σ(ψ1), p(2) = σ(−ψ0) σ(−ψ1)
            s0, s1 = expit(psi[:, 0]), expit(psi[:, 1])
            probabilities = np.column_stack([s0, (1 - s0) * s1, (1 - s0) * (1 - s1)])
        else:
            probabilities = softmax(psi, axis=1)
        np.testing.assert_allclose(idata.log_likelihood["y"].values[0, s],
                                   np.log(probabilities[np.arange(40), THREE]), rtol=1e-8, atol=1e-12)
    assert np.isfinite(az.waic(idata).elpd_waic)


def test_bayesian_gmm():
    estimator = BayesianGMM(n_components=2, random_state=0).fit(X)
    idata = estimator.to_arviz(X, draws=300, seed=2)
    weights, means, precisions = (idata.posterior[key].values[0] for key in ("weights", "means", "precisions"))
    assert weights.shape == (300, 2) and means.shape == (300, 2, 2) and precisions.shape == (300, 2, 2, 2)
    for s in (0, 150):
        density = sum(weights[s, k] * stats.multivariate_normal(means[s, k], np.linalg.inv(precisions[s, k])).pdf(X)
                      for k in range(2))
        np.testing.assert_allclose(idata.log_likelihood["X"].values[0, s], np.log(density), rtol=1e-10)
    np.testing.assert_array_equal(idata.observed_data["X"].values, X)
    assert np.isfinite(az.loo(idata).elpd_loo)


def test_cmn_classifier():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator = CMNClassifier(n_experts=2, max_iter=30, random_state=0, n_predictive_samples=16).fit(X, THREE)
    idata = estimator.to_arviz(X, THREE, draws=40, seed=0)
    assert idata.posterior["A"].shape[:2] == (1, 40) and idata.log_likelihood["y"].shape == (1, 40, 40)
    assert np.all(idata.log_likelihood["y"].values < 0)
    assert np.isfinite(az.waic(idata).elpd_waic)


def test_bad_inputs_are_refused():
    estimator = BayesianLogisticRegression().fit(X, BINARY)
    with pytest.raises(DataError, match="pass both X and y"):
        estimator.to_arviz(X)
    with pytest.raises(DataError, match="labels the estimator was not fitted to, e.g. 'maybe'"):
        estimator.to_arviz(X[:2], np.array(["yes", "maybe"]))
    with pytest.raises(DataError, match="one label per row"):
        estimator.to_arviz(X, BINARY[:3])


# ------------------------------------------------------------------ GPClassifier: latent functions, not weights


def _gp_posterior_formula(classifier, b):
    """The exact regression's posterior at the training inputs, written out: ``m + K (K + V)⁻¹ (ỹ − m)`` and
    ``K − K (K + V)⁻¹ K`` from the fitted kernel, means and pseudo-observations."""
    kernel = classifier.kernel_(X)
    solved = np.linalg.solve(kernel + np.diag(classifier.posterior_.variances[b]), kernel)  # (K + V)⁻¹ K
    mean = classifier.means_[b] + solved.T @ (classifier.posterior_.targets[b] - classifier.means_[b])
    return mean, kernel - kernel @ solved


def _check_latent_draws_at_x(idata, classifier, names, draws):
    """The latent values behind the log-likelihood are N(μ*, σ*²) of latent_predictive: standardised, mean 0 and
    variance 1 within 5 standard errors (of the mean, 1/√S; of the variance, √(2/S))."""
    mean, variance = classifier.latent_predictive(X)
    for b, name in enumerate(names):
        z = (idata.posterior[name].values[0] - mean[:, b]) / np.sqrt(variance[:, b])
        np.testing.assert_allclose(z.mean(axis=0), 0.0, atol=5 / np.sqrt(draws))
        np.testing.assert_allclose(z.var(axis=0), 1.0, atol=5 * np.sqrt(2 / draws))


def _check_predictive_average(idata, classifier, labels, draws):
    """``mean_s p(y_i | f_s(x_i))`` → ``predict_proba(X)[i, y_i]``: within 5 Monte Carlo standard errors per point
    (seeded; predict_proba's own error, quadrature or 2048 scrambled Sobol points, is far below that)."""
    likelihoods = np.exp(idata.log_likelihood["y"].values[0])
    expected = classifier.predict_proba(X)[np.arange(len(X)), labels]
    np.testing.assert_array_less(np.abs(likelihoods.mean(axis=0) - expected),
                                 5 * likelihoods.std(axis=0) / np.sqrt(draws) + 1e-12)


def test_gp_classifier_binary():
    classifier = GPClassifier().fit(X, BINARY)
    draws = 4000
    idata = classifier.to_arviz(X, BINARY, draws=draws, seed=0)
    assert set(idata.posterior.data_vars) == {"f", "f_X"}
    assert idata.posterior["f"].dims == ("chain", "draw", "training_point")
    assert idata.posterior["f"].shape == (1, draws, 40)
    assert idata.posterior["f_X"].dims == ("chain", "draw", "point")
    assert idata.log_likelihood["y"].dims == ("chain", "draw", "point")
    assert idata.log_likelihood["y"].shape == (1, draws, 40)
    np.testing.assert_array_equal(idata.observed_data["y"].values, BINARY)
    positive = BINARY == "yes"  # classes_ = ["no", "yes"]
    latent = idata.posterior["f_X"].values[0]
    for s in (0, 17, draws - 1):
        p = expit(latent[s])
        np.testing.assert_allclose(idata.log_likelihood["y"].values[0, s], np.log(np.where(positive, p, 1 - p)),
                                   rtol=1e-8, atol=1e-12)
    _check_latent_draws_at_x(idata, classifier, ["f_X"], draws)
    _check_predictive_average(idata, classifier, positive.astype(int), draws)
    # the draws at the training inputs are joint: their moments are the GP posterior's, correlations included
    f = idata.posterior["f"].values[0]
    mean, cov = _gp_posterior_formula(classifier, 0)
    spread = np.sqrt(np.diag(cov))
    np.testing.assert_allclose(f.mean(axis=0), mean, atol=5 * spread.max() / np.sqrt(draws))
    cov_error = np.sqrt((np.outer(spread**2, spread**2) + cov**2) / draws)  # the sample covariance's std. error
    np.testing.assert_array_less(np.abs(np.cov(f, rowvar=False) - cov), 5 * cov_error + 1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # Pareto k: the latent values are per point
        assert np.isfinite(az.loo(idata).elpd_loo)
    assert set(classifier.to_arviz(draws=5, seed=0).groups()) == {"posterior"}


def test_gp_classifier_three_classes():
    from fgraph.families.kernels import ExponentiatedQuadratic

    classifier = GPClassifier(optimizer=None, kernel=ExponentiatedQuadratic(2.0, 1.0)).fit(X, THREE)
    draws = 4000
    idata = classifier.to_arviz(X, THREE, draws=draws, seed=1)
    names = ["f_0", "f_1", "f_2"]
    assert set(idata.posterior.data_vars) == set(names) | {f"{name}_X" for name in names}
    for name in names:
        assert idata.posterior[name].dims == ("chain", "draw", "training_point")
        assert idata.posterior[f"{name}_X"].shape == (1, draws, 40)
        mean, cov = _gp_posterior_formula(classifier, int(name[-1]))
        np.testing.assert_allclose(idata.posterior[name].values[0].mean(axis=0), mean,
                                   atol=5 * np.sqrt(np.diag(cov).max() / draws))
    latent = np.stack([idata.posterior[f"{name}_X"].values[0] for name in names], axis=-1)  # (S, n, K)
    for s in (0, 99, draws - 1):
        np.testing.assert_allclose(idata.log_likelihood["y"].values[0, s],
                                   np.log(softmax(latent[s], axis=1)[np.arange(40), THREE]), rtol=1e-8, atol=1e-12)
    _check_latent_draws_at_x(idata, classifier, [f"{name}_X" for name in names], draws)
    _check_predictive_average(idata, classifier, THREE, draws)
    assert np.isfinite(az.waic(idata).elpd_waic) and np.isfinite(az.loo(idata).elpd_loo)


def test_gp_classifier_sparse_draws_at_the_inducing_inputs():
    classifier = GPClassifier(inducing_points=8, random_state=0).fit(X, BINARY)
    draws = 4000
    idata = classifier.to_arviz(draws=draws, seed=2)
    f = idata.posterior["f"]
    assert f.dims == ("chain", "draw", "inducing_point") and f.shape == (1, draws, 8)
    mean, variance = classifier.latent_predictive(classifier.inducing_inputs_)
    np.testing.assert_allclose(f.values[0].mean(axis=0), mean[:, 0], atol=5 * np.sqrt(variance.max() / draws))
    np.testing.assert_allclose(f.values[0].var(axis=0), variance[:, 0],
                               atol=5 * np.sqrt(2 / draws) * variance.max())


def test_gp_classifier_bad_inputs_are_refused():
    classifier = GPClassifier(optimizer=None).fit(X, BINARY)
    with pytest.raises(DataError, match="pass both X and y"):
        classifier.to_arviz(X)
    with pytest.raises(DataError, match="pass both X and y"):
        classifier.to_arviz(y=BINARY)
    with pytest.raises(DataError, match="labels the estimator was not fitted to, e.g. 'maybe'"):
        classifier.to_arviz(X[:2], np.array(["yes", "maybe"]))
    with pytest.raises(ModelError, match="draws= must be a positive integer"):
        classifier.to_arviz(draws=0)
