"""The Bayesian Gaussian mixture as a scikit-learn estimator, fitted by the engine's VMP on the graph of
:mod:`fgraph.models.mixtures.gmm`.

:class:`BayesianGMM` is the model of scikit-learn's ``BayesianGaussianMixture(weight_concentration_prior_type=
"dirichlet_distribution", covariance_type="full")`` — a Dirichlet weight, Gaussian–Wishart components — with
the same parameter names and defaults for its priors, initialisation and stopping, and the same fixed point
from the same start (tested to 1e-6). What differs:

* ``lower_bound_`` is the full ELBO −F, every constant kept; scikit-learn drops constants, and its value is
  ``lower_bound_ − sklearn_lower_bound_offset(priors, N)`` (:func:`fgraph.models.mixtures.gmm.sklearn_lower_bound_offset`);
* :meth:`score_samples` is the posterior predictive density log p(x | data), a mixture of Student-t's, not
  scikit-learn's plug-in density at the posterior means;
* the ``n_init`` restarts are copies of one graph run together (``fg.Model(copies=n_init)``), not a loop,
  starting from the responsibilities scikit-learn's restarts start from for the same ``random_state``;
* ``power`` ω ∈ (0, 1] tempers the likelihood and the switch's prior (fractional VB, docs/gmm.md);
* there is no ``reg_covar`` (it is not part of the model; scikit-learn's default adds 1e-6 N_k I to W_k⁻¹)
  and the data are centred internally (m₀ shifted with them, exactly), so that W_k⁻¹ keeps its digits.

Usable in a pipeline::

    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from fgraph.models import BayesianGMM

    model = make_pipeline(StandardScaler(), BayesianGMM(n_components=3, n_init=4, random_state=0)).fit(X)
    labels, log_density = model.predict(X), model.score_samples(X)
"""
from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, DensityMixin
from sklearn.utils.validation import check_is_fitted

from fgraph.models.mixtures.gmm import (GMMPriors, build_gmm, fit_gmm, initial_responsibilities, log_responsibilities,
                                        predictive_log_density)
from fgraph.models.estimators import check_data_size, check_integer, check_random_state, report_convergence

__all__ = ["BayesianGMM"]

INIT_PARAMS = ("kmeans", "k-means++", "random", "random_from_data")


def _validate(estimator, X, reset: bool):
    from sklearn.utils.validation import validate_data

    X = validate_data(estimator, X, reset=reset, dtype=np.float64, ensure_min_samples=2 if reset else 1)
    check_data_size(estimator, X, "the covariance of the data")
    return X


class BayesianGMM(DensityMixin, BaseEstimator):
    """Variational Bayesian Gaussian mixture with full covariances, fitted by VMP on a factor graph.

    Parameters
    ----------
    n_components : int, default 1
        K, the number of components.
    weight_concentration_prior : float or None, default None
        α₀ of the Dirichlet weight (every component); None is 1/K.
    mean_prior : array (n_features,) or None, default None
        m₀; None is the mean of the data.
    mean_precision_prior : float or None, default None
        β₀ > 0; None is 1.
    covariance_prior : array (n_features, n_features) or None, default None
        W₀⁻¹, symmetric positive definite (scikit-learn's convention); None is the data's covariance.
    degrees_of_freedom_prior : float or None, default None
        ν₀ > n_features − 1; None is n_features.
    tol : float, default 1e-3
        Stop when every restart's ELBO changed by less than ``tol`` nats in a sweep (of the whole ELBO, as
        scikit-learn's ``BayesianGaussianMixture`` judges its lower bound; 0: run ``max_iter`` sweeps). A run
        stopped by ``max_iter`` instead is reported by a scikit-learn ``ConvergenceWarning`` naming ``max_iter``
        and its value (:func:`fgraph.models.estimators.report_convergence`).
    max_iter : int, default 100
        Most sweeps (one M-step and one E-step each).
    n_init : int, default 1
        Restarts, copies of one graph; the one of highest final ELBO is kept.
    init_params : {"kmeans", "k-means++", "random", "random_from_data"}, default "kmeans"
        How the starting responsibilities are made (as scikit-learn makes them).
    random_state : int in 0..2**32 − 1, RandomState or None, default None
        Seeds the starting responsibilities (as scikit-learn's; a numpy Generator is not accepted).
    power : float in (0, 1], default 1.0
        ω on the likelihood and on the switch's prior (fractional VB); 1 is plain VB.

    Attributes
    ----------
    weights_ : (K,) E[π]            means_ : (K, d) m_k               covariances_ : (K, d, d) E[Λ_k]⁻¹
    precisions_ : (K, d, d) E[Λ_k] = ν_k W_k                           weight_concentration_ : (K,) α
    mean_precision_ : (K,) β       degrees_of_freedom_ : (K,) ν        scale_ : (K, d, d) W_k
    lower_bound_ : float, the ELBO of the chosen restart (every constant kept)
    lower_bounds_ : (n_iter_,) its ELBO after every sweep (non-decreasing)
    elbo_ : (n_iter_, n_init) every restart's ELBO after every sweep
    best_restart_ : int            n_iter_ : int                        converged_ : bool
    weight_concentration_prior_, mean_prior_, mean_precision_prior_, covariance_prior_, degrees_of_freedom_prior_ :
        the priors used
    n_features_in_ : int
    """

    def __init__(self, n_components=1, weight_concentration_prior=None, mean_prior=None, mean_precision_prior=None,
                 covariance_prior=None, degrees_of_freedom_prior=None, tol=1e-3, max_iter=100, n_init=1,
                 init_params="kmeans", random_state=None, power=1.0):
        self.n_components = n_components
        self.weight_concentration_prior = weight_concentration_prior
        self.mean_prior = mean_prior
        self.mean_precision_prior = mean_precision_prior
        self.covariance_prior = covariance_prior
        self.degrees_of_freedom_prior = degrees_of_freedom_prior
        self.tol = tol
        self.max_iter = max_iter
        self.n_init = n_init
        self.init_params = init_params
        self.random_state = random_state
        self.power = power

    def _check_parameters(self) -> None:
        check_integer("n_components", self.n_components, 1)
        check_integer("max_iter", self.max_iter, 1)
        check_integer("n_init", self.n_init, 1)
        tol = self.tol
        if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not np.isfinite(tol) or tol < 0:
            raise ValueError(f"tol must be a non-negative number (nats), got {tol!r}")
        if self.init_params not in INIT_PARAMS:
            raise ValueError(f"init_params must be one of {INIT_PARAMS}, got {self.init_params!r}")
        power = self.power
        if isinstance(power, bool) or not isinstance(power, numbers.Real) or not 0.0 < power <= 1.0:
            raise ValueError(f"power must be a number in (0, 1], got {power!r}")
        # the starts are drawn by scikit-learn's check_random_state: RandomState seeds are 32-bit
        check_random_state(self, self.random_state, kinds=(np.random.RandomState,), upper=2**32)

    def _priors(self, X) -> GMMPriors:
        """The priors in terms of the data as given (W₀ from scikit-learn's W₀⁻¹)."""
        scale = None
        if self.covariance_prior is not None:
            covariance = np.atleast_2d(np.asarray(self.covariance_prior, dtype=float))
            d = X.shape[1]
            if covariance.shape != (d, d) or not np.all(np.isfinite(covariance)):
                raise ValueError(f"covariance_prior must be a finite {d}x{d} matrix, got shape {covariance.shape}")
            try:
                np.linalg.cholesky(covariance)
            except np.linalg.LinAlgError:
                raise ValueError("covariance_prior (W₀⁻¹) must be symmetric positive definite") from None
            scale = np.linalg.inv(covariance)
        prior = GMMPriors(weight_concentration=self.weight_concentration_prior, mean=self.mean_prior,
                          precision_scale=self.mean_precision_prior, scale=scale, df=self.degrees_of_freedom_prior)
        return prior.resolved(X, int(self.n_components))

    # ------------------------------------------------------------------ fit
    def fit(self, X, y=None):
        """Fit q(Z) q(π) q(μ, Λ) to ``X`` (n_samples, n_features); ``y`` is ignored."""
        self._check_parameters()
        X = _validate(self, X, reset=True)
        K = int(self.n_components)
        if X.shape[0] < K:
            raise ValueError(f"Expected n_samples >= n_components but got n_components = {K}, "
                             f"n_samples = {X.shape[0]}")
        priors = self._priors(X)
        centre = X.mean(axis=0)
        centred = GMMPriors(priors.weight_concentration, priors.mean - centre, priors.precision_scale, priors.scale,
                            priors.df)
        R = int(self.n_init)
        starts = initial_responsibilities(X, K, self.init_params, self.random_state, n_copies=R)
        network = build_gmm(X - centre, K, centred, n_copies=R, power=float(self.power))
        fit = fit_gmm(network, starts, iterations=int(self.max_iter), tol=float(self.tol) if self.tol > 0 else None)
        posteriors = fit.posteriors()
        best = int(np.argmax(fit.elbo[-1]))
        self._centre = centre
        self.elbo_ = fit.elbo
        self.best_restart_ = best
        self.lower_bounds_ = fit.elbo[:, best].copy()
        self.weight_concentration_ = posteriors["alpha"][best]
        self.weights_ = self.weight_concentration_ / self.weight_concentration_.sum()
        self.mean_precision_ = posteriors["precision_scale"][best]
        self.means_ = posteriors["mean"][best] + centre
        self.degrees_of_freedom_ = posteriors["df"][best]
        self.scale_ = posteriors["scale"][best]
        self.precisions_ = self.degrees_of_freedom_[:, None, None] * self.scale_
        self.covariances_ = np.linalg.inv(self.precisions_)
        self.weight_concentration_prior_ = priors.weight_concentration
        self.mean_prior_ = priors.mean
        self.mean_precision_prior_ = priors.precision_scale
        self.covariance_prior_ = np.linalg.inv(priors.scale)
        self.degrees_of_freedom_prior_ = priors.df
        # tol in nats of the whole ELBO, as scikit-learn's BayesianGaussianMixture judges its lower bound
        report_convergence(self, fit.elbo, fit.converged, fit.iterations, best=best, warn=self.tol > 0)
        return self

    def fit_predict(self, X, y=None):
        """Fit and return the component of highest responsibility of every row of ``X``."""
        return self.fit(X).predict(X)

    # -------------------------------------------------------------- predict
    def _posteriors(self) -> dict:
        return {"alpha": self.weight_concentration_, "mean": self.means_ - self._centre,
                "precision_scale": self.mean_precision_, "scale": self.scale_, "df": self.degrees_of_freedom_}

    def predict_proba(self, X):
        """Responsibilities r_nk of new rows (n_samples, K): the E-step, E[log π_k] + E[log N(x | μ_k, Λ_k⁻¹)]
        normalised over k."""
        check_is_fitted(self)
        X = _validate(self, X, reset=False)
        return np.exp(log_responsibilities(self._posteriors(), X - self._centre))

    def predict(self, X):
        """The component of highest responsibility."""
        return np.argmax(self.predict_proba(X), axis=1)

    def score_samples(self, X):
        """log p(x | data) per row: the posterior predictive density, a mixture of Student-t's
        (:func:`fgraph.models.mixtures.gmm.predictive_log_density`)."""
        check_is_fitted(self)
        X = _validate(self, X, reset=False)
        return predictive_log_density(self._posteriors(), X - self._centre)

    def score(self, X, y=None):
        """The mean of :meth:`score_samples` (per-point log predictive density)."""
        return float(np.mean(self.score_samples(X)))

    def to_arviz(self, X=None, draws=1000, seed=None):
        """An ``arviz.InferenceData`` (:mod:`fgraph.models.arviz`): ``draws`` draws of q(π) q(μ, Λ) — ``weights``
        (draw, K) ~ Dir(weight_concentration_), ``precisions`` (draw, K, d, d) ~ W(degrees_of_freedom_, scale_),
        ``means`` (draw, K, d) ~ N(means_, (mean_precision_ Λ)⁻¹); given ``X``, the pointwise
        ``log p(x_i | θ_s) = log Σ_k π_k N(x_i | μ_k, Λ_k⁻¹)`` (observed name ``X``) for ``arviz.waic`` /
        ``arviz.loo``."""
        from scipy import stats
        from scipy.special import logsumexp

        from fgraph.models.arviz import export

        def draw(count, rng):
            K, d = self.means_.shape
            weights = rng.dirichlet(self.weight_concentration_, size=count)
            precisions = np.stack([stats.wishart(df=self.degrees_of_freedom_[k], scale=self.scale_[k]).rvs(
                size=count, random_state=rng).reshape(count, d, d) for k in range(K)], axis=1)
            # μ_k = m_k + L⁻ᵀ z with L Lᵀ = κ_k Λ_k: covariance (κ_k Λ_k)⁻¹
            factor = np.linalg.cholesky(self.mean_precision_[None, :, None, None] * precisions)
            noise = rng.standard_normal((count, K, d, 1))
            means = self.means_ + np.linalg.solve(np.swapaxes(factor, -1, -2), noise)[..., 0]
            return {"weights": weights, "means": means, "precisions": precisions}

        def log_likelihood(parameters, X, labels, rng):
            weights, means, precisions = parameters["weights"], parameters["means"], parameters["precisions"]
            difference = X[None, :, None, :] - means[:, None]  # (S, N, K, d)
            squared = np.einsum("snki,skij,snkj->snk", difference, precisions, difference)
            log_det = np.linalg.slogdet(precisions)[1]  # (S, K)
            d = X.shape[1]
            component = 0.5 * (log_det[:, None] - d * np.log(2.0 * np.pi) - squared)
            return logsumexp(np.log(weights)[:, None] + component, axis=-1)

        return export(self, X, None, draws, seed, draw, log_likelihood, supervised=False)
