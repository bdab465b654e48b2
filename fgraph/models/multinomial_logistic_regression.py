"""Multinomial Bayesian logistic regression by stick-breaking Pólya-Gamma VMP.

    β_k ~ N(0, σ² I) (k = 0..K−2),   y_n ~ StickBreaking(σ(β_kᵀ[x_n; 1])),   n = 1..N,

built from K − 1 ``MvNormal`` priors and a
:func:`nodes.stick_breaking_logistic.StickBreakingLogistic` plate and run by
the engine. The posterior factorises over the sticks, q(β_k) = N(μ_k, Σ_k),
so for a new x the logits ψ_k* = β_kᵀx̃ are *independent* Gaussians
N(m_k, s_k²), m_k = μ_kᵀx̃, s_k² = x̃ᵀΣ_kx̃, and the predictive class
probabilities are products of one-dimensional integrals,

    p(y = j | x, data) ≈ E[σ(ψ_j)] Π_{k<j} E[σ(−ψ_k)]   (j < K − 1),      Π_{k<K−1} E[σ(−ψ_k)]   (j = K − 1),

each E[σ(±ψ_k)] computed by
:func:`fgraph.models.logistic_regression.predictive_log_probabilities`
(quadrature to ~1e-13, or the probit approximation if asked). The
probabilities sum to one exactly (E[σ(ψ)] + E[σ(−ψ)] = 1 for each stick, so
the classes telescope), and no point estimate is plugged in.

Stick-breaking is not symmetric in the classes: the prior N(0, σ²I) on
every stick puts prior mass ½ on class 0, ¼ on class 1, … (at ψ = 0), and
the posterior depends (a little, with enough data) on the order of the
classes; the estimator uses the sorted order of ``classes_``.
"""
from __future__ import annotations


import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

import fgraph as fg
from fgraph.models.logistic_regression import (
    _validate_data,
    check_parameters,
    encoded_classes,
    predictive_log_probabilities,
    run_variational,
)
from nodes.mvnormal import MvNormal
from nodes.stick_breaking_logistic import StickBreakingLogistic

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
        Stop when the free energy changes by less than ``tol`` nats between sweeps;
        a run that does not is reported by a scikit-learn ``ConvergenceWarning``.
    fit_intercept : bool, default True
        Whether ψ_k = w_kᵀx + b_k (a bias with the same prior) or ψ_k = w_kᵀx.
    predictive : {"quadrature", "probit"}, default "quadrature"
        How :meth:`predict_proba` integrates each σ(±ψ_k) over the posterior
        (:func:`stick_breaking_log_probabilities`).

    Attributes
    ----------
    classes_ : ndarray (K,)
        The labels, sorted; class ``classes_[j]`` is stick-breaking class j.
    coef_ : ndarray (K − 1, n_features)
        Posterior means of the sticks' slopes w_k.
    intercept_ : ndarray (K − 1,)
        Posterior means of the sticks' biases b_k (zeros without an intercept).
    posterior_means_ : ndarray (K − 1, D), posterior_covs_ : ndarray (K − 1, D, D)
        q(β_k) = N(μ_k, Σ_k) per stick, β_k = [w_k; b_k] (D = n_features + 1), or w_k without an intercept.
    elbo_ : ndarray (n_iter_,)
        The evidence lower bound −F after every sweep (non-decreasing).
    n_iter_ : int
    converged_ : bool
    n_features_in_ : int
    """

    def __init__(self, prior_var=25.0, max_iter=1000, tol=1e-6, fit_intercept=True, predictive="quadrature"):
        self.prior_var = prior_var
        self.max_iter = max_iter
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.predictive = predictive

    def fit(self, X, y):
        """Fit q(β_k) for every stick to features ``X`` (n_samples, n_features) and labels ``y`` (K ≥ 2 classes)."""
        check_parameters(self)
        X, y = _validate_data(self, X, y)
        labels = encoded_classes(self, y)
        intercept = bool(self.fit_intercept)
        dimension = X.shape[1] + intercept
        sticks = len(self.classes_) - 1
        with fg.Model() as model:
            betas = [MvNormal(f"beta{k}", mean=np.zeros(dimension), cov=float(self.prior_var) * np.eye(dimension))
                     for k in range(sticks)]
            StickBreakingLogistic("y", betas, X, observed=labels, intercept=intercept)
        result = run_variational(self, model)
        posteriors = [result.marginal(f"beta{k}") for k in range(sticks)]
        self.posterior_means_ = np.array([q.mean for q in posteriors])
        self.posterior_covs_ = np.array([q.cov for q in posteriors])
        self.coef_ = self.posterior_means_[:, :X.shape[1]]
        self.intercept_ = self.posterior_means_[:, -1] if intercept else np.zeros(sticks)
        return self

    def _logit_moments(self, X):
        """Means and standard deviations of ψ_k* = β_kᵀx̃ under q(β_k), shape (n_samples, K − 1) each."""
        check_is_fitted(self)
        X = _validate_data(self, X, reset=False)
        rows = np.column_stack([X, np.ones(len(X))]) if self.fit_intercept else X
        means = rows @ self.posterior_means_.T
        variances = np.einsum("ni,kij,nj->nk", rows, self.posterior_covs_, rows)
        return means, np.sqrt(np.maximum(variances, 0.0))

    def predict_log_proba(self, X):
        """``log p(y = classes_[j] | x)`` per row, integrated over q(β) (see the module)."""
        return stick_breaking_log_probabilities(*self._logit_moments(X), method=self.predictive)

    def predict_proba(self, X):
        """``p(y = classes_[j] | x)`` per row, integrated over q(β); rows sum to one."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        """The class of highest predictive probability."""
        best = np.argmax(self.predict_log_proba(X), axis=1)  # checks that the estimator is fitted first
        return self.classes_[best]
