"""The scikit-learn estimator ``BayesianGMM``: scikit-learn's own checks, pipelines, equality with
``BayesianGaussianMixture`` from the same starts, restarts as copies, and its errors."""
import warnings

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from sklearn.mixture import BayesianGaussianMixture  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from fgraph.models.mixtures import BayesianGMM, GMMPriors, sklearn_lower_bound_offset  # noqa: E402
from tests.models.test_gmm import three_clusters  # noqa: E402


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # checks that cap max_iter
@parametrize_with_checks([BayesianGMM(), BayesianGMM(n_components=2, n_init=2, random_state=0)])
def test_scikit_learn_checks(estimator, check):
    """Every check of ``check_estimator`` that applies to a density estimator."""
    check(estimator)


@pytest.mark.parametrize("init_params, n_init", [("kmeans", 1), ("random", 3), ("k-means++", 2)])
def test_it_fits_what_scikit_learn_fits(init_params, n_init):
    """Same defaults, same random_state, no reg_covar: the same starts (restarts included), the same fixed point
    to 1e-6 and the lower bound less the documented constant is scikit-learn's. Restarts that reach the same
    optimum with the components in another order tie to round-off, so the components are matched first."""
    X = three_clusters(2) * [3.0, 0.5] + [100.0, -20.0]  # far from the origin: the estimator centres internally
    options = dict(n_components=3, init_params=init_params, n_init=n_init, random_state=5, max_iter=3000, tol=1e-11)
    ours = BayesianGMM(**options).fit(X)
    theirs = BayesianGaussianMixture(weight_concentration_prior_type="dirichlet_distribution",
                                     covariance_type="full", reg_covar=0.0, **options).fit(X)
    order = [int(np.argmin(np.linalg.norm(ours.means_ - mean, axis=1))) for mean in theirs.means_]
    assert sorted(order) == [0, 1, 2]
    np.testing.assert_allclose(ours.predict_proba(X)[:, order], theirs.predict_proba(X), atol=1e-6)
    np.testing.assert_allclose(ours.weights_[order], theirs.weights_, rtol=1e-6)
    np.testing.assert_allclose(ours.means_[order], theirs.means_, rtol=1e-6)
    np.testing.assert_allclose(ours.precisions_[order], theirs.precisions_, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(ours.covariances_[order], theirs.covariances_, rtol=1e-6)
    np.testing.assert_allclose(ours.degrees_of_freedom_[order], theirs.degrees_of_freedom_, rtol=1e-6)
    np.testing.assert_allclose(ours.mean_precision_[order], theirs.mean_precision_, rtol=1e-6)
    np.testing.assert_allclose(ours.covariance_prior_, theirs.covariance_prior_, rtol=1e-12)
    priors = GMMPriors(ours.weight_concentration_prior_, ours.mean_prior_, ours.mean_precision_prior_,
                       np.linalg.inv(ours.covariance_prior_), ours.degrees_of_freedom_prior_)
    np.testing.assert_allclose(ours.lower_bound_ - sklearn_lower_bound_offset(priors, len(X)), theirs.lower_bound_,
                               rtol=1e-9)
    np.testing.assert_array_equal(np.asarray(order)[theirs.predict(X)], ours.predict(X))
    assert ours.elbo_.shape[1] == n_init and np.all(np.diff(ours.elbo_, axis=0) >= -1e-9)


def test_pipeline_and_grid_search():
    X = three_clusters(4)
    pipeline = make_pipeline(StandardScaler(), BayesianGMM(n_init=2, random_state=0, tol=1e-6, max_iter=500))
    search = GridSearchCV(pipeline, {"bayesiangmm__n_components": [1, 3]}, cv=3).fit(X)
    assert search.best_params_ == {"bayesiangmm__n_components": 3}  # held-out predictive density picks K = 3
    scores = pipeline.set_params(bayesiangmm__n_components=3).fit(X).score_samples(X)
    assert scores.shape == (len(X),) and np.all(np.isfinite(scores))


def test_the_predictive_integrates_to_one():
    X = three_clusters(6)[:, :1]
    model = BayesianGMM(n_components=2, random_state=0, max_iter=500).fit(X)
    grid = np.linspace(-40, 40, 200_001)
    density = np.exp(model.score_samples(grid[:, None]))
    np.testing.assert_allclose(np.trapezoid(density, grid), 1.0, atol=1e-4)  # heavy Student-t tails


def test_errors_name_the_problem():
    X = three_clusters(7)
    with pytest.raises(ValueError, match="n_components must be an integer >= 1"):
        BayesianGMM(n_components=0).fit(X)
    with pytest.raises(ValueError, match="n_samples >= n_components"):
        BayesianGMM(n_components=5).fit(X[:4])
    with pytest.raises(ValueError, match="positive definite"):
        BayesianGMM(covariance_prior=np.array([[1.0, 1.0], [1.0, 1.0]])).fit(X)
    with pytest.raises(ValueError, match="ν₀ must be greater than d − 1"):
        BayesianGMM(degrees_of_freedom_prior=0.5).fit(X)
    bad = X.copy()
    bad[3, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        BayesianGMM().fit(bad)
    with pytest.raises(ValueError, match="power"):
        BayesianGMM(power=2.0).fit(X)
    with pytest.raises(ValueError, match="init_params"):
        BayesianGMM(init_params="spectral").fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(sklearn.exceptions.ConvergenceWarning, match="did not converge"):
            BayesianGMM(n_components=3, max_iter=2, tol=1e-12, random_state=0).fit(X)
