"""Multinomial Bayesian logistic regression by stick-breaking Pólya-Gamma VMP.

    β_k ~ N(0, σ² I) (k = 0..K−2),   y_n ~ StickBreaking(σ(β_kᵀ[x_n; 1])),   n = 1..N,

built from K − 1 ``MvNormal`` priors and a
:func:`fgraph.nodes.stick_breaking_logistic.StickBreakingLogistic` plate and run by
the engine. The posterior factorises over the sticks, q(β_k) = N(μ_k, Σ_k),
so for a new x the logits ψ_k* = β_kᵀx̃ are *independent* Gaussians
N(m_k, s_k²), m_k = μ_kᵀx̃, s_k² = x̃ᵀΣ_kx̃, and the predictive class
probabilities are products of one-dimensional integrals,

    p(y = j | x, data) ≈ E[σ(ψ_j)] Π_{k<j} E[σ(−ψ_k)]   (j < K − 1),      Π_{k<K−1} E[σ(−ψ_k)]   (j = K − 1),

each E[σ(±ψ_k)] computed by
:func:`fgraph.models.logistic.binary.predictive_log_probabilities`
(quadrature to ~1e-13, or the probit approximation if asked). The
probabilities sum to one exactly (E[σ(ψ)] + E[σ(−ψ)] = 1 for each stick, so
the classes telescope), and no point estimate is plugged in.

Stick-breaking is not symmetric in the classes: the prior N(0, σ²I) on
every stick puts prior mass ½ on class 0, ¼ on class 1, … (at ψ = 0), and
the posterior depends (a little, with enough data) on the order of the
classes; the estimator uses the sorted order of ``classes_``.

``likelihood=`` one of the Gaussian likelihood approximations (``"laplace"``,
``"variational"``, ``"moment"``, ``"moment-original"``) fits the *softmax*
model instead, ψ_k = β_kᵀx̃ for all K classes
(:func:`fgraph.nodes.softmax.Softmax`): each label becomes K Gaussian
pseudo-observations of the logits (the log-basis Gaussians of
Gamma(α_ε + c_k, 1), :mod:`fgraph.families.basis_matching`), so the fit is K
independent Bayesian linear regressions, exact in one sweep; the predictive
E[softmax(ψ)] over the independent Gaussian logits has no closed form and is
estimated by Monte Carlo (``predictive_samples`` common draws; standard error
at most 1/(2√S) per probability). :meth:`~MultinomialLogisticRegression.partial_fit`
learns online as the binary estimator does: conjugate updates for the
approximations (streaming equals one fit), a VMP fit per batch from the carried
posteriors for ``"polya-gamma"``.
"""
from __future__ import annotations


import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

import fgraph as fg
from fgraph.families import basis_matching
from fgraph.models.estimators import encoded_classes, validate_data
from fgraph.models.logistic.binary import (
    check_likelihood,
    check_parameters,
    partial_fit_batch,
    predictive_log_probabilities,
    run_variational,
)
from fgraph.models.logistic.conjugate import observe_linear
from fgraph.nodes.mvnormal import MvNormal
from fgraph.nodes.softmax import Softmax, predictive_probabilities
from fgraph.nodes.stick_breaking_logistic import StickBreakingLogistic

__all__ = ["MultinomialLogisticRegression", "stick_breaking_log_probabilities"]


def stick_breaking_log_probabilities(means, stds, method: str = "quadrature") -> np.ndarray:
    """``log p(y = j)`` for j = 0..K−1 under independent logits ψ_k ~ N(means[..., k], stds[..., k]²), k = 0..K−2.

    ``means`` and ``stds`` have shape ``(..., K−1)``; the result ``(..., K)``:
    ``log E[σ(ψ_j)] + Σ_{k<j} log E[σ(−ψ_k)]`` (the last class: the sum over every stick).
    """
    means, stds = np.broadcast_arrays(np.asarray(means, dtype=float), np.asarray(stds, dtype=float))
    log_break, log_pass = predictive_log_probabilities(means, stds, method=method)
    zero = np.zeros(means.shape[:-1] + (1,))
    passed_before = np.concatenate([zero, np.cumsum(log_pass, axis=-1)], axis=-1)
    return passed_before + np.concatenate([log_break, zero], axis=-1)


class MultinomialLogisticRegression(ClassifierMixin, BaseEstimator):
    """Bayesian multinomial logistic regression (stick-breaking logits, Gaussian priors), fitted by Pólya-Gamma VMP.

    Parameters
    ----------
    prior_var : float, default 25.0
        Variance σ² of the independent N(0, σ²) prior on every coefficient of
        every stick (the intercepts included); σ = 5 by default.
    max_iter : int, default 1000
        Most VMP sweeps.
    tol : float, default 1e-6
        Stop when the ELBO per sample changes by less than ``tol`` nats between sweeps (scikit-learn's
        convention: ``tol · n_samples`` nats of the whole ELBO, :func:`fgraph.models.logistic.binary.run_variational`);
        a run that does not is reported by a scikit-learn ``ConvergenceWarning`` naming ``max_iter``.
    fit_intercept : bool, default True
        Whether ψ_k = w_kᵀx + b_k (a bias with the same prior) or ψ_k = w_kᵀx.
    predictive : {"quadrature", "probit"}, default "quadrature"
        How :meth:`predict_proba` integrates each σ(±ψ_k) over the posterior
        (:func:`stick_breaking_log_probabilities`; Pólya-Gamma only).
    likelihood : {"polya-gamma", "laplace", "variational", "moment", "moment-original"}, default "polya-gamma"
        Stick-breaking Pólya-Gamma VMP in the exact model, or a Gaussian likelihood approximation of the softmax
        model (module docstring).
    alpha_epsilon : float or "elbo", default 0.1
        The Dirichlet prior's concentration of the approximations (unused by ``"polya-gamma"``); ``"elbo"`` chooses
        it in :meth:`fit` by the softmax model's exact bound (Appendix B;
        :func:`fgraph.models.logistic.bound.choose_softmax_epsilon`), kept as ``alpha_epsilon_``.
    predictive_samples : int, default 4000
        Monte Carlo draws of the softmax predictive under an approximation.

    Attributes
    ----------
    classes_ : ndarray (K,)
        The labels, sorted; class ``classes_[j]`` is stick-breaking class j.
    coef_ : ndarray (K − 1, n_features)
        Posterior means of the sticks' slopes w_k.
    intercept_ : ndarray (K − 1,)
        Posterior means of the sticks' biases b_k (zeros without an intercept).
    posterior_means_ : ndarray (K − 1, D), posterior_covs_ : ndarray (K − 1, D, D)
        q(β_k) = N(μ_k, Σ_k) per stick, β_k = [w_k; b_k] (D = n_features + 1), or w_k without an intercept;
        under an approximation per class, (K, D) and (K, D, D) (and ``coef_``, ``intercept_`` likewise).
    n_samples_seen_ : int
    elbo_ : ndarray (n_iter_,)
        The evidence lower bound −F after every sweep (non-decreasing).
    lower_bound_ : float or None
        The ELBO after the last sweep (``elbo_[-1]``); None after a closed-form (conjugate) update.
    n_iter_ : int
    converged_ : bool
    n_features_in_ : int
    """

    def __init__(self, prior_var=25.0, max_iter=1000, tol=1e-6, fit_intercept=True, predictive="quadrature",
                 likelihood="polya-gamma", alpha_epsilon=0.1, predictive_samples=4000):
        self.prior_var = prior_var
        self.max_iter = max_iter
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.predictive = predictive
        self.likelihood = likelihood
        self.alpha_epsilon = alpha_epsilon
        self.predictive_samples = predictive_samples

    def _check(self):
        check_parameters(self)
        check_likelihood(self)
        samples = self.predictive_samples
        if not isinstance(samples, (int, np.integer)) or isinstance(samples, bool) or samples < 1:
            raise ValueError(f"predictive_samples must be an integer >= 1, got {samples!r}")

    def _prior(self, n_features: int) -> tuple:
        """The prior means (L, D) and covariances (L, D, D): L = K − 1 sticks, or K classes under an approximation."""
        dimension = n_features + bool(self.fit_intercept)
        count = len(self.classes_) - (self.likelihood == "polya-gamma")
        return np.zeros((count, dimension)), np.broadcast_to(float(self.prior_var) * np.eye(dimension),
                                                             (count, dimension, dimension)).copy()

    def fit(self, X, y):
        """Fit q(β_k) for every stick (or class) to features ``X`` (n_samples, n_features) and labels ``y``
        (K ≥ 2 classes)."""
        self._check()
        X, y = validate_data(self, X, y)
        labels = encoded_classes(self, y)
        self.alpha_epsilon_ = self.alpha_epsilon
        if self.alpha_epsilon == "elbo" and self.likelihood != "polya-gamma":
            from fgraph.models.logistic.bound import choose_softmax_epsilon
            rows = np.column_stack([X, np.ones(len(X))]) if self.fit_intercept else X
            self.alpha_epsilon_ = choose_softmax_epsilon(rows, labels, len(self.classes_), float(self.prior_var),
                                                         self.likelihood).alpha_epsilon
        self._fit_batch(X, labels, *self._prior(X.shape[1]), by_engine=True)
        self.n_samples_seen_ = X.shape[0]
        return self

    def partial_fit(self, X, y, classes=None):
        """Learn from one more batch, the posterior so far being its prior (``classes``, every label, required
        on the first call); see the module for what it equals."""
        if not hasattr(self, "posterior_means_"):
            self._check()
            if self.alpha_epsilon == "elbo" and self.likelihood != "polya-gamma":
                raise ValueError(f"{type(self).__name__}.partial_fit: alpha_epsilon='elbo' chooses α_ε from the "
                                 "whole data: use fit, or give a number")
            self.alpha_epsilon_ = self.alpha_epsilon
        X, y, first, classes = partial_fit_batch(self, X, y, classes, "posterior_means_", binary=False)
        if first:
            self.classes_ = classes
            self.n_samples_seen_ = 0
            means, covs = self._prior(X.shape[1])
        else:
            means, covs = self.posterior_means_, self.posterior_covs_
        labels = np.searchsorted(self.classes_, y)
        self._fit_batch(X, labels, means, covs, by_engine=self.likelihood == "polya-gamma")
        self.n_samples_seen_ += X.shape[0]
        return self

    def _fit_batch(self, X, labels, prior_means, prior_covs, by_engine: bool):
        """q(β) from the priors N(prior_means[l], prior_covs[l]) (sticks or classes) and one batch of class
        indices; by the engine (the graph run by VMP) or, under an approximation, by the conjugate update."""
        intercept = bool(self.fit_intercept)
        count = prior_means.shape[0]
        if by_engine:
            with fg.Model() as model:
                betas = [MvNormal(f"beta{k}", mean=prior_means[k], cov=prior_covs[k]) for k in range(count)]
                if self.likelihood == "polya-gamma":
                    StickBreakingLogistic("y", betas, X, observed=labels, intercept=intercept)
                else:
                    Softmax("y", betas, X, observed=labels, intercept=intercept, operator=self.likelihood,
                            alpha_epsilon=self.alpha_epsilon_)
            result = run_variational(self, model, X.shape[0])
            posteriors = [result.marginal(f"beta{k}") for k in range(count)]
            means = np.array([q.mean for q in posteriors])
            covs = np.array([q.cov for q in posteriors])
        else:
            targets, variances = basis_matching.softmax_pseudo_observations(labels, count, self.alpha_epsilon_,
                                                                            self.likelihood)
            rows = np.column_stack([X, np.ones(len(X))]) if intercept else X
            updated = [observe_linear(prior_means[k], prior_covs[k], rows, targets[:, k], variances[:, k])
                       for k in range(count)]
            means, covs = np.array([u[0] for u in updated]), np.array([u[1] for u in updated])
            self.elbo_, self.n_iter_, self.converged_, self.lower_bound_ = np.array([]), 1, True, None
        self.posterior_means_, self.posterior_covs_ = means, covs
        self.coef_ = means[:, :X.shape[1]]
        self.intercept_ = means[:, -1] if intercept else np.zeros(count)

    def _logit_moments(self, X):
        """Means and standard deviations of ψ_k* = β_kᵀx̃ under q(β_k), shape (n_samples, K − 1) each (K under an
        approximation)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        rows = np.column_stack([X, np.ones(len(X))]) if self.fit_intercept else X
        means = rows @ self.posterior_means_.T
        variances = np.einsum("ni,kij,nj->nk", rows, self.posterior_covs_, rows)
        return means, np.sqrt(np.maximum(variances, 0.0))

    def predict_log_proba(self, X):
        """``log p(y = classes_[j] | x)`` per row, integrated over q(β) (see the module)."""
        means, stds = self._logit_moments(X)
        if self.likelihood == "polya-gamma":
            return stick_breaking_log_probabilities(means, stds, method=self.predictive)
        probabilities = predictive_probabilities(means, stds ** 2, n_samples=self.predictive_samples)
        with np.errstate(divide="ignore"):
            return np.log(probabilities)

    def predict_proba(self, X):
        """``p(y = classes_[j] | x)`` per row, integrated over q(β); rows sum to one."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        """The class of highest predictive probability."""
        best = np.argmax(self.predict_log_proba(X), axis=1)  # checks that the estimator is fitted first
        return self.classes_[best]

    def to_arviz(self, X=None, y=None, draws=1000, seed=None):
        """An ``arviz.InferenceData`` (:mod:`fgraph.models.arviz`): ``draws`` draws of the independent
        q(β_k) = N(posterior_means_[k], posterior_covs_[k]) as ``coef`` (draw, K′, n_features) and ``intercept``
        (draw, K′), K′ the sticks (K − 1) or, under an approximation, the K classes; given ``X`` and ``y``, the
        pointwise ``log p(y_i | x_i, β_s)`` of the stick-breaking (``"polya-gamma"``) or softmax model for
        ``arviz.waic`` / ``arviz.loo``."""
        from scipy.special import log_softmax

        from fgraph.models.arviz import export
        from fgraph.models.logistic.bound import stick_breaking_log_probabilities_at

        features = self.n_features_in_

        def draw(count, rng):
            beta = np.stack([rng.multivariate_normal(mean, cov, size=count, method="cholesky")
                             for mean, cov in zip(self.posterior_means_, self.posterior_covs_)], axis=1)
            return {"coef": beta[..., :features], **({"intercept": beta[..., features]} if self.fit_intercept else {})}

        def log_likelihood(parameters, X, labels, rng):
            psi = np.einsum("skd,nd->snk", parameters["coef"], X)
            if self.fit_intercept:
                psi = psi + parameters["intercept"][:, None, :]
            logs = stick_breaking_log_probabilities_at(psi) if self.likelihood == "polya-gamma" else log_softmax(psi, axis=-1)
            return np.take_along_axis(logs, np.broadcast_to(labels[None, :, None], logs.shape[:2] + (1,)), axis=-1)[..., 0]

        return export(self, X, y, draws, seed, draw, log_likelihood)
