"""The scikit-learn estimator ``MultinomialLogisticRegression``: scikit-learn's own checks, pipelines, the posterior
against the hand-written multinomial PG-VB, two classes against ``BayesianLogisticRegression``, its errors."""
import warnings

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from sklearn.datasets import load_iris  # noqa: E402
from sklearn.exceptions import ConvergenceWarning, NotFittedError  # noqa: E402
from sklearn.model_selection import StratifiedKFold, cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from fgraph.errors import DataError, FgraphError  # noqa: E402
from fgraph.models.logistic import (BayesianLogisticRegression, MultinomialLogisticRegression,
                                    stick_breaking_log_probabilities)  # noqa: E402
from tests.models.test_multinomial_logistic_regression import data, numpy_stick_breaking_vb  # noqa: E402


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # checks that cap max_iter
@parametrize_with_checks([MultinomialLogisticRegression()])
def test_scikit_learn_checks(estimator, check):
    check(estimator)


def test_pipeline_and_cross_validation_on_three_species():
    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    # setosa is separable: the coefficients creep outwards a little per sweep, so a looser tol keeps this quick
    pipeline = make_pipeline(StandardScaler(), MultinomialLogisticRegression(tol=1e-3))
    folds = StratifiedKFold(3, shuffle=True, random_state=0)
    scores = cross_val_score(pipeline, X, names, cv=folds)
    by_hand = [pipeline.fit(X[train], names[train]).score(X[test], names[test]) for train, test in folds.split(X, y)]
    np.testing.assert_array_equal(scores, by_hand)
    assert scores.min() > 0.8  # three balanced classes: chance is 1/3
    probabilities = pipeline.predict_proba(X)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-13)
    np.testing.assert_array_equal(pipeline.predict(X), pipeline[-1].classes_[np.argmax(probabilities, axis=1)])


def test_the_posterior_is_multinomial_pg_vb_with_any_labels():
    features, labels = data(40, 2, 4, 0)  # 13, 13, 8 and 6 of the four classes
    names = np.array(["a", "b", "c", "d"])[labels]
    with pytest.warns(ConvergenceWarning):  # exactly 30 sweeps: a tolerance no run meets
        model = MultinomialLogisticRegression(max_iter=30, tol=1e-300).fit(features, names)
    means, covs, _, _, elbo = numpy_stick_breaking_vb(features, 30, labels=labels, classes=4)[-1]
    np.testing.assert_array_equal(model.classes_, ["a", "b", "c", "d"])
    np.testing.assert_allclose(model.posterior_means_, means, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(model.posterior_covs_, covs, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(model.coef_, np.array(means)[:, :2], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(model.intercept_, np.array(means)[:, 2], rtol=1e-10, atol=1e-10)
    assert model.elbo_[-1] == pytest.approx(elbo, rel=1e-10) and model.n_iter_ == 30
    assert np.all(np.diff(model.elbo_) >= 0.0)
    # the predictive is the stick-breaking product of the per-stick integrals over q
    rows = np.column_stack([features, np.ones(len(features))])
    stds = np.sqrt(np.einsum("ni,kij,nj->nk", rows, model.posterior_covs_, rows))
    np.testing.assert_allclose(model.predict_log_proba(features),
                               stick_breaking_log_probabilities(rows @ model.posterior_means_.T, stds), rtol=1e-12)


def test_two_classes_are_the_binary_estimator_with_the_logit_negated():
    """Class 0 has probability σ(ψ_0) here and σ(−ψ) in BayesianLogisticRegression (which models classes_[1])."""
    features, labels = data(40, 2, 2, 9)
    multinomial = MultinomialLogisticRegression().fit(features, labels)
    binary = BayesianLogisticRegression().fit(features, labels)
    np.testing.assert_allclose(multinomial.posterior_means_[0], -binary.posterior_mean_, rtol=1e-9)
    np.testing.assert_allclose(multinomial.posterior_covs_[0], binary.posterior_cov_, rtol=1e-9)
    np.testing.assert_allclose(multinomial.elbo_, binary.elbo_, rtol=1e-12)
    np.testing.assert_allclose(multinomial.predict_proba(features), binary.predict_proba(features), rtol=1e-9)


def test_without_an_intercept():
    features, labels = data(30, 2, 3, 4)
    with pytest.warns(ConvergenceWarning):
        model = MultinomialLogisticRegression(max_iter=20, tol=1e-300, fit_intercept=False).fit(features, labels)
    # PG-VB on the features alone: the oracle's rows are [x; 1], so compare against a run on x without the 1
    from tests.models import test_multinomial_logistic_regression as oracle
    original = oracle.augment
    try:
        oracle.augment = lambda x: x
        means = numpy_stick_breaking_vb(features, 20, labels=labels, classes=3)[-1][0]
    finally:
        oracle.augment = original
    np.testing.assert_allclose(model.posterior_means_, means, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(model.intercept_, [0.0, 0.0])


def test_bad_input_is_named():
    features, labels = data(10, 1, 3, 1)
    with pytest.raises(DataError, match="at least 2 classes.*only one class: 'x'"):
        MultinomialLogisticRegression().fit(features, np.array(["x"] * 10))
    with pytest.raises(ValueError, match="NaN"):
        MultinomialLogisticRegression().fit(np.where(np.arange(10)[:, None] == 3, np.nan, features), labels)
    for parameters, message in (({"prior_var": 0.0}, "prior_var must be a positive number"),
                                ({"max_iter": 0}, "max_iter must be an integer >= 1"),
                                ({"tol": -1.0}, "tol must be a positive number"),
                                ({"predictive": "plug-in"}, "predictive must be one of")):
        with pytest.raises(ValueError, match=message):
            MultinomialLogisticRegression(**parameters).fit(features, labels)
    with pytest.raises(NotFittedError):
        MultinomialLogisticRegression().predict(features)
    assert issubclass(DataError, FgraphError) and issubclass(DataError, ValueError)


def test_convergence_is_reported_in_scikit_learns_terms():
    features, labels = data(30, 1, 3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = MultinomialLogisticRegression().fit(features, labels)
    assert model.converged_ and model.n_iter_ < 1000
    with pytest.warns(ConvergenceWarning, match="did not converge in max_iter=3 sweeps"):
        MultinomialLogisticRegression(max_iter=3).fit(features, labels)
