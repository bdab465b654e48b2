"""The estimators' defaults converge on breast cancer (scikit-learn's bundled copy), and a run stopped by its cap
says which estimator, which option and which value; iterative estimators report ``n_iter_``,
``lower_bound_`` and ``converged_`` the scikit-learn way."""
import warnings

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn.datasets import load_breast_cancer, load_iris  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.model_selection import cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from fgraph.examples.faithful import load_faithful  # noqa: E402
from fgraph.models import (BayesianGMM, BayesianLogisticRegression, CMNClassifier, GPClassifier,  # noqa: E402
                           MultinomialLogisticRegression)


@pytest.fixture(scope="module")
def breast_cancer():
    return load_breast_cancer(return_X_y=True)


@pytest.mark.parametrize("scaled", [True, False], ids=["standardized", "raw"])
def test_logistic_defaults_converge_in_every_fold_of_breast_cancer(breast_cancer, scaled):
    X, y = breast_cancer
    estimator = make_pipeline(StandardScaler(), BayesianLogisticRegression()) if scaled else BayesianLogisticRegression()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        scores = cross_val_score(estimator, X, y, cv=5, error_score="raise")
    assert np.all(scores > 0.9)


def test_logistic_reports_convergence_the_scikit_learn_way(breast_cancer):
    X, y = breast_cancer
    X = StandardScaler().fit_transform(X)
    fitted = BayesianLogisticRegression().fit(X, y)
    assert fitted.converged_ and fitted.n_iter_ < fitted.max_iter
    assert fitted.lower_bound_ == fitted.elbo_[-1]
    assert abs(fitted.elbo_[-1] - fitted.elbo_[-2]) < fitted.tol * len(X)  # tol per sample
    with pytest.warns(ConvergenceWarning, match=r"BayesianLogisticRegression did not converge in max_iter=5 "
                                                r"sweeps.*increase max_iter \(now 5\)"):
        stopped = BayesianLogisticRegression(max_iter=5).fit(X, y)
    assert not stopped.converged_ and stopped.n_iter_ == 5 and stopped.lower_bound_ == stopped.elbo_[-1]


def test_multinomial_reports_lower_bound(breast_cancer):
    X, y = breast_cancer
    X = StandardScaler().fit_transform(X)[:200]
    fitted = MultinomialLogisticRegression().fit(X, y[:200])
    assert fitted.converged_ and fitted.lower_bound_ == fitted.elbo_[-1]
    closed_form = MultinomialLogisticRegression(likelihood="moment").partial_fit(X, y[:200], classes=[0, 1])
    assert closed_form.lower_bound_ is None and closed_form.converged_


def test_cmn_defaults_converge_on_breast_cancer(breast_cancer):
    """The change of the CMN's ELBO shrinks like 1/t: ``tol=1e-4`` per sample is met well inside the 500 sweeps
    (three folds: each fit is a few seconds)."""
    X, y = breast_cancer
    estimator = make_pipeline(StandardScaler(), CMNClassifier(random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        scores = cross_val_score(estimator, X, y, cv=3, error_score="raise")
    assert np.all(scores > 0.9)


def test_cmn_reports_convergence_the_scikit_learn_way(breast_cancer):
    X, y = breast_cancer
    X = StandardScaler().fit_transform(X)[:150]
    with pytest.warns(ConvergenceWarning, match=r"CMNClassifier did not converge in max_iter=3 sweeps: the ELBO per "
                                                r"sample of a restart .*increase max_iter \(now 3\)"):
        stopped = CMNClassifier(n_experts=3, n_restarts=2, max_iter=3, random_state=0).fit(X, y[:150])
    assert not stopped.converged_ and stopped.n_iter_ == 3
    assert stopped.lower_bound_ == stopped.elbo_[-1, stopped.best_restart_] == stopped.elbo_[-1].max()
    fitted = CMNClassifier(n_experts=3, max_iter=500, random_state=0).fit(X, y[:150])
    assert fitted.converged_ and fitted.n_iter_ < 500
    assert abs(fitted.elbo_[-1, 0] - fitted.elbo_[-2, 0]) < fitted.tol * len(X)  # tol per sample
    assert abs(fitted.elbo_[-2, 0] - fitted.elbo_[-3, 0]) >= fitted.tol * len(X)


@pytest.mark.parametrize("data", ["faithful", "iris"])
@pytest.mark.parametrize("n_components", [3, 5])
def test_bayesian_gmm_defaults_converge_on_old_faithful_and_iris(data, n_components):
    X = load_faithful()[0] if data == "faithful" else load_iris(return_X_y=True)[0]
    for seed in range(3):
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            fitted = BayesianGMM(n_components=n_components, random_state=seed).fit(X)
        assert fitted.converged_ and fitted.n_iter_ < fitted.max_iter
        assert fitted.lower_bound_ == fitted.lower_bounds_[-1] == fitted.elbo_[-1].max()


def test_bayesian_gmm_reports_convergence_the_scikit_learn_way():
    X = load_faithful()[0]
    with pytest.warns(ConvergenceWarning, match=r"BayesianGMM did not converge in max_iter=2 sweeps: the ELBO of a "
                                                r"restart .*increase max_iter \(now 2\)"):
        stopped = BayesianGMM(n_components=3, n_init=2, max_iter=2, random_state=0).fit(X)
    assert not stopped.converged_ and stopped.n_iter_ == 2 and stopped.elbo_.shape == (2, 2)
    assert stopped.lower_bound_ == stopped.elbo_[-1, stopped.best_restart_] == stopped.elbo_[-1].max()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # tol=0 asks for max_iter sweeps: nothing to warn about
        fixed = BayesianGMM(n_components=3, max_iter=4, tol=0.0, random_state=0).fit(X)
    assert fixed.n_iter_ == 4 and not fixed.converged_


def test_gp_classifier_reports_convergence_the_scikit_learn_way(breast_cancer):
    X, y = breast_cancer
    X, y = StandardScaler().fit_transform(X)[:120], y[:120]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fitted = GPClassifier().fit(X, y)
    assert fitted.converged_ and 0 < fitted.n_iter_ < fitted.max_iter and fitted.lower_bound_ is None
    with pytest.warns(ConvergenceWarning, match=r"GPClassifier did not converge: L-BFGS stopped .* after 2 iterations "
                                                r"\(max_iter=2\).*increase max_iter \(now 2\)"):
        stopped = GPClassifier(max_iter=2).fit(X, y)
    assert not stopped.converged_ and stopped.n_iter_ == 2
    with pytest.warns(ConvergenceWarning, match=r"GPClassifier did not converge.*max_iter=2"):
        bounded = GPClassifier(optimizer="elbo", max_iter=2, n_draws=64).fit(X[:40], y[:40])
    assert bounded.lower_bound_ == bounded.elbo_ and np.isfinite(bounded.lower_bound_)
    assert GPClassifier(optimizer=None).fit(X, y).converged_
