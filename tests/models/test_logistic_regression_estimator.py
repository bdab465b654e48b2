"""The scikit-learn estimator ``BayesianLogisticRegression``: scikit-learn's own checks, pipelines, the posterior
against the hand-written PG-VB, the predictive against adaptive quadrature, and its errors."""
import ast
import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from scipy import integrate  # noqa: E402
from scipy.special import expit  # noqa: E402
from sklearn.datasets import load_iris, make_classification  # noqa: E402
from sklearn.exceptions import ConvergenceWarning, NotFittedError  # noqa: E402
from sklearn.model_selection import StratifiedKFold, cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from fgraph.errors import DataError, FgraphError  # noqa: E402
from fgraph.models.logistic import BayesianLogisticRegression, predictive_log_probabilities  # noqa: E402
from tests.models.test_bayesian_logistic_regression import augment, numpy_pg_vb  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # checks that cap max_iter
@parametrize_with_checks([BayesianLogisticRegression()])
def test_scikit_learn_checks(estimator, check):
    """Every check of ``check_estimator`` that applies; the multiclass ones see the binary-only tag and expect
    (and get) "Only binary classification is supported" from fit."""
    check(estimator)


def iris_two_species():
    """Versicolor against virginica: 100 flowers, 4 features, overlapping classes (not separable)."""
    X, y = load_iris(return_X_y=True)
    return X[y > 0], np.array(["versicolor", "virginica"])[y[y > 0] - 1]


def test_pipeline_and_cross_validation():
    X, y = iris_two_species()
    pipeline = make_pipeline(StandardScaler(), BayesianLogisticRegression())
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    scores = cross_val_score(pipeline, X, y, cv=folds)
    by_hand = [pipeline.fit(X[train], y[train]).score(X[test], y[test]) for train, test in folds.split(X, y)]
    np.testing.assert_array_equal(scores, by_hand)
    assert scores.min() > 0.5  # better than the majority class (half) on every fold


def test_the_posterior_is_pg_vb_with_any_two_labels():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 2))
    labels = (rng.random(40) < expit(X @ [1.0, -2.0] + 0.3)).astype(float)
    y = np.where(labels == 1, "yes", "no")
    with pytest.warns(ConvergenceWarning):  # exactly 30 sweeps: a tolerance no run meets
        model = BayesianLogisticRegression(max_iter=30, tol=1e-300).fit(X, y)
    mean, cov, elbo = numpy_pg_vb(augment(X), labels, 30)[-1]  # with the prior σ² = 25 of both
    np.testing.assert_array_equal(model.classes_, ["no", "yes"])
    np.testing.assert_allclose(model.posterior_mean_, mean, rtol=1e-10)
    np.testing.assert_allclose(model.posterior_cov_, cov, rtol=1e-10)
    np.testing.assert_allclose(model.coef_, mean[None, :2], rtol=1e-10)
    np.testing.assert_allclose(model.intercept_, mean[2:], rtol=1e-10)
    assert model.elbo_[-1] == pytest.approx(elbo, rel=1e-10) and model.n_iter_ == 30
    assert np.all(np.diff(model.elbo_) >= 0.0)
    # without an intercept: PG-VB on the features alone
    with pytest.warns(ConvergenceWarning):
        plain = BayesianLogisticRegression(max_iter=30, tol=1e-300, fit_intercept=False).fit(X, y)
    np.testing.assert_allclose(plain.posterior_mean_, numpy_pg_vb(X, labels, 30)[-1][0], rtol=1e-10)
    np.testing.assert_array_equal(plain.intercept_, [0.0])


def test_predict_proba_integrates_over_the_posterior():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 1))
    y = (rng.random(30) < expit(2 * X[:, 0])).astype(int)
    model = BayesianLogisticRegression().fit(X, y)
    queries = np.array([[-3.0], [0.0], [0.5], [8.0]])
    rows = augment(queries)
    expected = [integrate.quad(lambda z, m=row @ model.posterior_mean_,
                               s=np.sqrt(row @ model.posterior_cov_ @ row):
                               expit(m + s * z) * np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi), -40, 40,
                               epsabs=1e-14, epsrel=1e-13, limit=400)[0] for row in rows]
    probabilities = model.predict_proba(queries)
    np.testing.assert_allclose(probabilities[:, 1], expected, rtol=1e-11)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-14)
    # not the plug-in σ(m): the uncertainty pulls the far query towards ½
    assert probabilities[3, 1] < expit(rows[3] @ model.posterior_mean_)
    decision = model.decision_function(queries)
    np.testing.assert_allclose(decision, np.log(probabilities[:, 1] / probabilities[:, 0]), rtol=1e-12)
    np.testing.assert_array_equal(model.predict(queries), (decision > 0).astype(int))


@pytest.mark.parametrize("mean", [-30.0, -4.0, -0.7, 0.0, 0.3, 2.5, 12.0])
@pytest.mark.parametrize("std", [0.0, 0.05, 0.6, 1.0, 1.0001, 2.0, 7.0, 40.0])
def test_the_logistic_normal_integral_against_adaptive_quadrature(mean, std):
    log_one, log_zero = predictive_log_probabilities(mean, std)

    def expected(sign):
        if std == 0.0:
            return expit(sign * mean)
        kink = [-mean / std] if abs(mean / std) < 40 else None
        return integrate.quad(lambda z: expit(sign * (mean + std * z)) * np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi),
                              -40, 40, epsabs=1e-300, epsrel=1e-13, limit=1000, points=kink)[0]

    # relative accuracy in each tail: the small probability keeps its digits
    assert np.exp(log_one) == pytest.approx(expected(1.0), rel=1e-10, abs=1e-300)
    assert np.exp(log_zero) == pytest.approx(expected(-1.0), rel=1e-10, abs=1e-300)


def test_the_probit_option_is_mackays_formula():
    log_one, log_zero = predictive_log_probabilities(np.array([1.2, -0.4]), np.array([0.8, 3.0]), method="probit")
    np.testing.assert_allclose(np.exp(log_one), expit(np.array([1.2, -0.4]) / np.sqrt(1 + np.pi * np.array([0.64, 9.0]) / 8)),
                               rtol=1e-14)
    np.testing.assert_allclose(np.exp(log_one) + np.exp(log_zero), 1.0, rtol=1e-14)
    X, y = make_classification(60, 3, n_informative=2, n_redundant=0, random_state=1)
    probit = BayesianLogisticRegression(predictive="probit").fit(X, y)
    exact = BayesianLogisticRegression().fit(X, y)
    assert np.max(np.abs(probit.predict_proba(X) - exact.predict_proba(X))) < 0.02  # MacKay's approximation error


def test_errors_are_value_errors_that_say_what_is_wrong():
    X = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(DataError, match="needs samples of 2 classes, but the data contain only one class"):
        BayesianLogisticRegression().fit(X, np.ones(10))
    with pytest.raises(ValueError, match="Only binary classification is supported. The type of the target is multiclass"):
        BayesianLogisticRegression().fit(X, np.arange(10) % 3)
    with pytest.raises(ValueError, match="Unknown label type"):
        BayesianLogisticRegression().fit(X, np.linspace(0, 1, 10))
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        BayesianLogisticRegression().fit(bad, np.arange(10) % 2)
    model = BayesianLogisticRegression().fit(X, np.arange(10) % 2)
    with pytest.raises(ValueError, match="X has 3 features, but BayesianLogisticRegression is expecting 2"):
        model.predict(np.ones((2, 3)))
    with pytest.raises(NotFittedError):
        BayesianLogisticRegression().predict_proba(X)
    for parameters, message in [({"prior_var": -1.0}, "prior_var must be a positive number"),
                                ({"max_iter": 0}, "max_iter must be an integer >= 1"),
                                ({"tol": 0.0}, "tol must be a positive number"),
                                ({"predictive": "laplace"}, "predictive must be one of")]:
        with pytest.raises(ValueError, match=message):
            BayesianLogisticRegression(**parameters).fit(X, np.arange(10) % 2)
    assert issubclass(DataError, FgraphError)


def test_a_run_that_does_not_converge_says_so_in_scikit_learn_terms():
    X, y = iris_two_species()
    with pytest.warns(ConvergenceWarning, match="did not converge in max_iter=5 sweeps"):
        model = BayesianLogisticRegression(max_iter=5).fit(X, y)
    assert not model.converged_ and model.n_iter_ == 5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert BayesianLogisticRegression().fit(X, y).converged_


def test_import_fgraph_loads_neither_the_models_nor_scikit_learn():
    probe = ("import json, sys, fgraph; print(json.dumps(sorted(m for m in sys.modules "
             "if m.startswith(('fgraph.models', 'sklearn')))))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                                       check=True).stdout)
    assert loaded == []


def test_the_engine_core_does_not_import_the_models():
    # the command line (fgraph/cli.py) sits above everything: it runs the examples and `fgraph vad`
    core = [path for path in (ROOT / "fgraph").glob("*.py") if path.name != "cli.py"]
    core += list((ROOT / "fgraph" / "families").glob("*.py"))
    for path in core:
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(name.startswith("fgraph.models") for name in names), path
