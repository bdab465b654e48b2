"""The scikit-learn estimator ``CMNClassifier``: scikit-learn's own checks, pipelines and cross-validation, the fit
is ``fit_cmn`` of the graph (labels through ``classes_``), the ELBO per restart, the predictive of the chosen restart,
accuracy on breast cancer, and its errors."""
import warnings

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from sklearn.datasets import load_breast_cancer, load_iris  # noqa: E402
from sklearn.exceptions import ConvergenceWarning, NotFittedError  # noqa: E402
from sklearn.model_selection import StratifiedKFold, cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from fgraph.errors import DataError, FgraphError  # noqa: E402
from fgraph.families import MvNormalMeanCovariance  # noqa: E402
from fgraph.families.matrix_normal_gamma import MatrixNormalGamma as MatrixNormalGammaFamily  # noqa: E402
from fgraph.families.mixture import Mixture  # noqa: E402
from fgraph.models.cmn import CMNClassifier, CMNPriors, build_cmn, fit_cmn, initial_state, predictive_log_proba  # noqa: E402


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # 20 sweeps: checks, not a fit
@parametrize_with_checks([CMNClassifier(n_experts=2, max_iter=20, n_predictive_samples=16, random_state=0)])
def test_scikit_learn_checks(estimator, check):
    """Every check of ``check_estimator`` applies (multiclass, string labels, pickling, idempotent fits, predictions
    independent of the other rows and their order: the predictive's Monte Carlo draws are shared by all rows)."""
    check(estimator)


def iris():
    X, y = load_iris(return_X_y=True)
    return X, np.array(["setosa", "versicolor", "virginica"])[y]


def test_pipeline_and_cross_validation_on_three_species():
    X, y = iris()
    pipeline = make_pipeline(StandardScaler(), CMNClassifier(n_experts=3, max_iter=30, random_state=0,
                                                             n_predictive_samples=64))
    folds = StratifiedKFold(3, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        scores = cross_val_score(pipeline, X, y, cv=folds)
        by_hand = [pipeline.fit(X[train], y[train]).score(X[test], y[test]) for train, test in folds.split(X, y)]
    np.testing.assert_array_equal(scores, by_hand)
    assert scores.min() > 0.8  # three balanced classes: chance is 1/3
    probabilities = pipeline.predict_proba(X)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(pipeline.predict(X), pipeline[-1].classes_[np.argmax(probabilities, axis=1)])
    np.testing.assert_allclose(pipeline.predict_log_proba(X), np.log(probabilities), rtol=1e-12)


def test_the_fit_is_fit_cmn_of_the_graph_with_labels_through_classes():
    """Labels "c", "a", "b" are classes 2, 0, 1 (sorted ``classes_``); the ELBO per sweep and restart and every
    posterior are those of ``fit_cmn(build_cmn(...), seed=random_state)`` — restarts are the graph's copies."""
    X, names = iris()
    X = StandardScaler().fit_transform(X)[::3]
    y = np.array(["a", "b", "c"])[np.argsort(np.argsort(names))[::3] // 50]  # the species, renamed
    labels = np.searchsorted(["a", "b", "c"], y)
    with pytest.warns(ConvergenceWarning, match="did not converge in max_iter=8 sweeps"):
        model = CMNClassifier(n_experts=4, n_restarts=3, max_iter=8, tol=1e-9, random_state=5).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the engine's own ConvergenceWarning
        fit = fit_cmn(build_cmn(X, labels, 4, n_restarts=3), iterations=8, tol=1e-9, seed=5)
    np.testing.assert_array_equal(model.classes_, ["a", "b", "c"])
    assert model.elbo_.shape == (8, 3) and model.n_iter_ == 8 and not model.converged_
    np.testing.assert_array_equal(model.elbo_, fit.elbo)
    assert model.best_restart_ == fit.best_restart == np.argmax(fit.elbo[-1])
    for key, value in fit.posteriors().items():
        np.testing.assert_array_equal(model.posteriors_[key], value, err_msg=key)
    assert model.posteriors_["M"].shape == (3, 4, 2, 5) and model.n_features_in_ == 4
    # E-step passes and worker processes reach fit_cmn
    with pytest.warns(ConvergenceWarning, match="did not converge in max_iter=4 sweeps"):
        model = CMNClassifier(n_experts=4, n_restarts=3, max_iter=4, tol=1e-9, random_state=5, e_step_passes=2,
                              n_jobs=2).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = fit_cmn(build_cmn(X, labels, 4, n_restarts=3), iterations=4, tol=1e-9, seed=5, e_step_passes=2)
    np.testing.assert_allclose(model.elbo_, fit.elbo, rtol=1e-10)
    np.testing.assert_allclose(model.posteriors_["M"], fit.posteriors()["M"], rtol=1e-9, atol=1e-12)


def test_the_authors_settings_reach_fit_cmn():
    """``with_authors_settings`` is the estimator with the sticks' prior bias, the prior-mean initial state, eight
    E-step passes and 200 sweeps; its fit is ``fit_cmn`` of the graph under those options, and its parameters
    clone and override as any estimator's."""
    from sklearn.base import clone

    X, names = iris()
    X = StandardScaler().fit_transform(X)[::3]
    labels = np.argsort(np.argsort(names))[::3] // 50
    model = CMNClassifier.with_authors_settings(n_experts=4, n_restarts=2, max_iter=3, tol=1e-9, random_state=4)
    assert (model.initial, model.e_step_passes, model.priors) == ("prior-mean", 8, CMNPriors(stick_bias=True))
    assert CMNClassifier.with_authors_settings().max_iter == 200
    with pytest.warns(ConvergenceWarning):
        clone(model).fit(X, labels)
        model.fit(X, labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = fit_cmn(build_cmn(X, labels, 4, n_restarts=2, priors=CMNPriors(stick_bias=True)), iterations=3,
                      tol=1e-9, seed=4, e_step_passes=8, initial="prior-mean")
    np.testing.assert_allclose(model.elbo_, fit.elbo, rtol=1e-12)
    with pytest.raises(ValueError, match="initial must be one of"):
        CMNClassifier(initial="zeros").fit(X, labels)


def test_the_defaults_are_the_sticks_bias_and_the_prior_mean_start_with_one_pass():
    """``CMNClassifier()`` fits the graph with the sticks' prior bias, the initial state at the prior means and one
    E-step pass — as ``fit_cmn`` with those options named, and not as eq. (4) with drawn coefficients."""
    X, names = iris()
    X = StandardScaler().fit_transform(X)[::3]
    labels = np.argsort(np.argsort(names))[::3] // 50
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CMNClassifier(n_experts=4, n_restarts=2, max_iter=3, tol=1e-9, random_state=4).fit(X, labels)
        named = fit_cmn(build_cmn(X, labels, 4, n_restarts=2, priors=CMNPriors(stick_bias=True)), iterations=3,
                        tol=1e-9, seed=4, e_step_passes=1, initial="prior-mean")
        eq4 = fit_cmn(build_cmn(X, labels, 4, n_restarts=2, priors=CMNPriors(stick_bias=False)), iterations=3,
                      tol=1e-9, seed=4, e_step_passes=1, initial="draws")
    np.testing.assert_allclose(model.elbo_, named.elbo, rtol=1e-12)
    assert np.all(np.abs(model.elbo_[-1] - eq4.elbo[-1]) > 1e-3)


@pytest.mark.parametrize("data", ["iris", "breast cancer"])
def test_the_elbo_never_decreases_in_any_restart(data):
    if data == "iris":
        X, y = iris()
    else:
        X, y = load_breast_cancer(return_X_y=True)
        X, y = X[::4], y[::4]
    X = StandardScaler().fit_transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = CMNClassifier(n_experts=5, n_restarts=3, max_iter=40, random_state=1).fit(X, y)
    changes = np.diff(model.elbo_, axis=0)
    assert np.all(changes >= -1e-9 * np.abs(model.elbo_[1:])), changes.min()
    assert np.ptp(model.elbo_[-1]) > 0  # the restarts are different runs


def test_predictions_come_from_the_chosen_restart():
    X, y = iris()
    X = StandardScaler().fit_transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = CMNClassifier(n_experts=3, n_restarts=3, max_iter=15, random_state=2,
                              n_predictive_samples=32).fit(X, y)
    queries = X[::10]

    def alone(r):  # the predictive of restart r by itself (its own draws of x1)
        posteriors = {key: value[r:r + 1] for key, value in model.posteriors_.items()}
        return predictive_log_proba(posteriors, queries, n_samples=32, random_state=2)[0]

    assert model.best_restart_ == np.argmax(model.elbo_[-1])
    np.testing.assert_allclose(model.predict_log_proba(queries), alone(model.best_restart_), rtol=1e-12)
    model.set_params(restart=1)
    np.testing.assert_allclose(model.predict_log_proba(queries), alone(1), rtol=1e-12)
    every = predictive_log_proba(model.posteriors_, queries, n_samples=32, random_state=2)  # (R, N*, L)
    model.set_params(restart=3)
    with pytest.raises(ValueError, match=r"restart must be 'best', 'all' or an integer in 0..2 \(the fitted"):
        model.predict(queries)
    model.set_params(restart="all")
    np.testing.assert_allclose(model.predict_proba(queries), np.exp(every).mean(axis=0), rtol=1e-12)
    assert not np.allclose(every[0], every[1], rtol=1e-3)  # the restarts predict differently


def test_breast_cancer_accuracy_is_near_the_papers():
    """z-scored features, 400 training points, the paper's K = 20 and priors, a modest 100 sweeps: the accuracy on
    the 169 held-out points is measured, not tuned (the paper reports about 0.97 for CAVI-CMN)."""
    X, y = load_breast_cancer(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))
    train, test = order[:400], order[400:]
    pipeline = make_pipeline(StandardScaler(), CMNClassifier(max_iter=100, random_state=0, n_predictive_samples=64))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        pipeline.fit(X[train], y[train])
    assert pipeline.score(X[test], y[test]) > 0.93


def test_convergence_is_judged_per_restart_on_the_elbo_per_sample():
    """``tol`` is per sample (scikit-learn's convention): 0.5 nats of the whole ELBO are ``tol = 0.5 / N``."""
    X, y = iris()
    X = StandardScaler().fit_transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a converged run warns about nothing
        model = CMNClassifier(n_experts=2, n_restarts=2, max_iter=500, tol=0.5 / len(X), random_state=0).fit(X, y)
    assert model.converged_ and model.n_iter_ < 500
    last = np.abs(model.elbo_[-1] - model.elbo_[-2])
    assert np.all(last < 0.5) and np.any(np.abs(model.elbo_[-2] - model.elbo_[-3]) >= 0.5)
    assert model.lower_bound_ == model.elbo_[-1, model.best_restart_] == model.elbo_[-1].max()


def test_errors_say_what_is_wrong():
    X = np.random.default_rng(0).normal(size=(12, 2))
    y = np.arange(12) % 2
    with pytest.raises(DataError, match="needs samples of at least 2 classes, but the data contain only one class"):
        CMNClassifier().fit(X, np.ones(12))
    with pytest.raises(ValueError, match="Unknown label type"):
        CMNClassifier().fit(X, np.linspace(0, 1, 12))
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        CMNClassifier().fit(bad, y)
    for parameters, message in [({"n_experts": 0}, "n_experts must be an integer >= 1"),
                                ({"n_experts": 2.5}, "n_experts must be an integer >= 1"),
                                ({"latent_dim": 0}, "latent_dim must be an integer >= 1 or None"),
                                ({"n_restarts": 0}, "n_restarts must be an integer >= 1"),
                                ({"max_iter": 0}, "max_iter must be an integer >= 1"),
                                ({"tol": 0.0}, r"tol must be a positive number \(nats per sample\)"),
                                ({"n_predictive_samples": 0}, "n_predictive_samples must be an integer >= 1"),
                                ({"e_step_passes": 0}, "e_step_passes must be an integer >= 1"),
                                ({"n_jobs": 0}, "n_jobs must be an integer >= 1"),
                                ({"priors": {"v0": 1.0}}, "priors must be a CMNPriors or None"),
                                ({"restart": "mean"}, "restart must be 'best', 'all' or an integer"),
                                ({"restart": 2, "n_restarts": 2}, "restart must be 'best', 'all' or an integer")]:
        with pytest.raises(ValueError, match=message):
            CMNClassifier(**parameters).fit(X, y)
    with pytest.raises(NotFittedError):
        CMNClassifier().predict_proba(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = CMNClassifier(n_experts=2, max_iter=3, priors=CMNPriors(v0=2.0), latent_dim=2).fit(X, y)
    assert model.posteriors_["M"].shape == (1, 2, 2, 3)  # h = 2 latent dimensions for two classes
    with pytest.raises(ValueError, match="X has 3 features, but CMNClassifier is expecting 2"):
        model.predict(np.ones((2, 3)))
    assert issubclass(DataError, FgraphError)


def one_restart_of(init: dict, r: int) -> dict:
    """Restart r of an initial state of R copies (:func:`fgraph.models.cmn.graph.initial_state`), as the state of one copy:
    every array that carries the copy axis (``batch_ndim`` leading axes beyond its event) keeps row r only."""
    def rows(array, event_ndim):
        array = np.asarray(array)
        return array[r:r + 1] if array.ndim > event_ndim else array

    state = {}
    for key, family in init.items():
        if isinstance(family, MatrixNormalGammaFamily):  # mean (R, K, 1, h, D), V (D, D), shape and rate (R, K, 1, ·)
            state[key] = MatrixNormalGammaFamily(rows(family.matrix_mean, 2), rows(family.column_covariance, 2),
                                                 rows(family.shape, 1), rows(family.rate, 1))
        elif isinstance(family, Mixture):  # weights (R, N, K); components mean (R, N, h), cov (h, h) shared
            state[key] = Mixture.create(rows(family.log_weights, 2), [
                MvNormalMeanCovariance(rows(c.mean, 2), rows(c.cov, 3)) for c in family.components])
        else:  # mean (R, D), cov (R, D, D)
            state[key] = MvNormalMeanCovariance(rows(family.mean, 1), rows(family.cov, 2))
    return state


def test_the_best_restart_is_the_one_restart_fit_from_its_initial_state():
    """Copies do not interact: restart r of an R-copy fit equals a one-copy fit started from restart r's state."""
    X, y = iris()
    X = StandardScaler().fit_transform(X)[::2]
    y = np.searchsorted(np.unique(y), y[::2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CMNClassifier(n_experts=3, n_restarts=3, max_iter=10, tol=1e-9, random_state=4).fit(X, y)
        best = model.best_restart_
        start = initial_state(build_cmn(X, y, 3, n_restarts=3), seed=4)
        alone = fit_cmn(build_cmn(X, y, 3), iterations=10, tol=1e-9, init=one_restart_of(start, best))
    np.testing.assert_allclose(alone.elbo[:, 0], model.elbo_[:, best], rtol=1e-10)
    for key, value in alone.posteriors().items():
        np.testing.assert_allclose(value[0], model.posteriors_[key][best], rtol=1e-8, atol=1e-12, err_msg=key)
