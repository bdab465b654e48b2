"""Bayesian logistic regression by variational message passing, as a scikit-learn classifier.

    β ~ N(0, σ² I),   y_n ~ Bernoulli(σ(βᵀ[x_n; 1])),   n = 1..N,

built from an ``MvNormal`` prior and a :func:`fgraph.nodes.logistic.Logistic` plate
and run by the engine (VMP with Pólya-Gamma augmentation, the free energy an
upper bound on −log p(y) that never increases). The posterior q(β) = N(μ, Σ)
gives, for a new x, the logit ψ* = βᵀ[x; 1] ~ N(m, s²) with m = μᵀx̃,
s² = x̃ᵀΣx̃, and the predictive probability

    p(y = 1 | x, data) ≈ E[σ(ψ*)] = ∫ σ(ψ) N(ψ; m, s²) dψ,

integrated numerically (not σ(m), a point estimate; see
:func:`predictive_log_probabilities`), or by the probit approximation
σ(m / sqrt(1 + πs²/8)) if asked (MacKay 1992).

``likelihood=`` replaces the Pólya-Gamma VMP of the exact model by a Gaussian
likelihood approximation (``"laplace"``, ``"variational"``, ``"moment"``,
``"moment-original"``: :mod:`fgraph.families.basis_matching`, the node's
operators in :mod:`fgraph.nodes.logistic`): each label becomes a Gaussian
pseudo-observation of its logit and the fit is Bayesian linear regression, exact
in one sweep. :meth:`~BayesianLogisticRegression.partial_fit` learns online: the
posterior so far is the prior of the next batch — for the approximations a
conjugate update (:mod:`fgraph.models.logistic.conjugate`; streaming equals
the batch fit), for Pólya-Gamma a VMP fit of the batch (assumed-density
filtering: it depends on how the data are batched).
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy.special import log_expit, log_ndtr, logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted

import fgraph as fg
from fgraph.errors import ConvergenceWarning as FgraphConvergenceWarning
from fgraph.errors import DataError
from fgraph.families import basis_matching
from fgraph.models.estimators import bound_tolerance, report_convergence, validate_data
from fgraph.models.logistic.conjugate import observe_linear
from fgraph.nodes.logistic import APPROXIMATIONS, Logistic
from fgraph.nodes.mvnormal import MvNormal

__all__ = ["BayesianLogisticRegression", "predictive_log_probabilities", "LIKELIHOODS"]

PREDICTIVE_METHODS = ("quadrature", "probit")
#: The likelihood choices of the logistic estimators: the exact model by Pólya-Gamma VMP, or an approximation.
LIKELIHOODS = ("polya-gamma",) + tuple(APPROXIMATIONS)

#: Gauss–Hermite nodes for E[σ(m + sZ)] when s ≤ 1: the integrand is analytic in a strip of half-width
#: π/s ≥ π around the real axis, and 32 nodes give it to ~1e-13 (measured against adaptive quadrature).
_HERMITE_NODES, _HERMITE_WEIGHTS = np.polynomial.hermite.hermgauss(32)
_LOG_HERMITE_WEIGHTS = np.log(_HERMITE_WEIGHTS) - 0.5 * np.log(np.pi)
#: For s > 1 the trapezoid rule on ∫ σ'(t) Φ((m − t)/s) dt in steps of 1/4 over ±40 around the integrand's
#: mode: the integrand is analytic in the strip |Im t| < π (the poles of σ'), so the error falls like
#: exp(−2π·a/h) (a ≈ 2.5: ~1e-27, times a bound on Φ in the strip below e^{a²/2s²} < 25); it is log-concave
#: and falls at least like e^{−|t − mode|} (the tail of σ'), so ±40 leaves out less than 1e-17 of it.
_STEP = 0.25
_OFFSETS = np.arange(-40.0, 40.0 + _STEP / 2, _STEP)


def _log_trapezoid(mean, std):
    """``log ∫ σ'(t) Φ((m − t)/s) dt`` (= log E[σ(ψ)], ψ ~ N(m, s²)) for arrays ``mean``, ``std`` (s > 0)."""
    # the mode solves d/dt log(...) = −tanh(t/2) − R((m − t)/s)/s = 0 (R = φ/Φ); the slope falls with t
    # (log-concave), from +1 far left to below −1 far right: bisection from a bracket that holds both
    low, high = np.minimum(mean, 0.0) - 50.0, np.maximum(mean, 0.0) + 50.0
    for _ in range(40):  # to 1e-10 of the bracket; the window only needs the mode to within a few units
        middle = 0.5 * (low + high)
        u = (mean - middle) / std
        slope = -np.tanh(0.5 * middle) - np.exp(-0.5 * u * u - 0.5 * np.log(2.0 * np.pi) - log_ndtr(u)) / std
        low, high = np.where(slope > 0, middle, low), np.where(slope > 0, high, middle)
    nodes = 0.5 * (low + high)[:, None] + _OFFSETS
    log_weights = np.log(_STEP) + log_expit(nodes) + log_expit(-nodes)
    return logsumexp(log_weights + log_ndtr((mean[:, None] - nodes) / std[:, None]), axis=-1)


def check_parameters(estimator) -> None:
    """Raise ``ValueError`` for a hyper-parameter of a logistic estimator outside its domain, naming it."""
    prior_var, max_iter, tol = estimator.prior_var, estimator.max_iter, estimator.tol
    if not isinstance(prior_var, numbers.Real) or not np.isfinite(prior_var) or prior_var <= 0:
        raise ValueError(f"prior_var must be a positive number, got {prior_var!r}")
    if not isinstance(max_iter, numbers.Integral) or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1, got {max_iter!r}")
    if not isinstance(tol, numbers.Real) or not np.isfinite(tol) or tol <= 0:
        raise ValueError(f"tol must be a positive number, got {tol!r}")
    if estimator.predictive not in PREDICTIVE_METHODS:
        raise ValueError(f"predictive must be one of {PREDICTIVE_METHODS}, got {estimator.predictive!r}")


def check_likelihood(estimator) -> None:
    """Raise ``ValueError`` for a ``likelihood``, ``alpha_epsilon`` or ``beta_epsilon`` outside its domain."""
    if estimator.likelihood not in LIKELIHOODS:
        raise ValueError(f"likelihood must be one of {LIKELIHOODS}, got {estimator.likelihood!r}")
    for name in ("alpha_epsilon", "beta_epsilon"):
        value = getattr(estimator, name, None)
        if (value is None and name == "beta_epsilon") or (value == "elbo" and name == "alpha_epsilon"):
            continue
        if not isinstance(value, numbers.Real) or isinstance(value, bool) or not np.isfinite(value) or value <= 0:
            raise ValueError(f"{name} must be a positive number, got {value!r}")


def run_variational(estimator, model: fg.Model, n_samples: int):
    """Run VMP on ``model`` of ``n_samples`` labels for an estimator: ``max_iter`` sweeps at most, stopping when
    the ELBO per sample changes by less than ``tol`` (scikit-learn's convention for a lower bound: the
    tolerance is ``tol · n_samples`` nats of the whole ELBO).

    The Pólya-Gamma coordinate ascent converges linearly and slowly on nearly separable data (on breast
    cancer, z-scored, the change of the ELBO shrinks by a factor of about 0.986 per sweep once the
    coefficients are large), so an absolute tolerance of 1e-6 nats on an ELBO of ~80 nats asked for 820–1150
    sweeps in the folds of a 5-fold cross-validation; 1e-6 nats per sample is met in 390–545 (and in
    200–240 on the raw features), the ELBO then within ~0.03 nats of its limit.
    Sets ``elbo_`` (per sweep), ``lower_bound_`` (the last), ``n_iter_`` and ``converged_`` on the
    estimator and says a run that stopped unconverged in scikit-learn's terms (its ``ConvergenceWarning``,
    naming the estimator, ``max_iter=`` and the last change): :func:`fgraph.models.estimators.bound_tolerance` and
    :func:`fgraph.models.estimators.report_convergence`, the convention every VMP estimator shares. Returns the
    engine's result.
    """
    with warnings.catch_warnings():  # said below in scikit-learn's terms
        warnings.simplefilter("ignore", FgraphConvergenceWarning)
        result = fg.infer(model, algorithm="vmp", iterations=estimator.max_iter,
                          tol=bound_tolerance(estimator, n_samples))
    estimator.elbo_ = -np.asarray(result.free_energy, dtype=float)
    report_convergence(estimator, estimator.elbo_, result.converged, result.iterations, n_samples, stacklevel=3)
    return result


def predictive_log_probabilities(mean, std, method: str = "quadrature") -> tuple:
    """``(log p(y = 1), log p(y = 0))`` for a logit ψ ~ N(mean, std²), integrating σ(ψ) over ψ.

    ``method="quadrature"`` computes ``E[σ(ψ)] = ∫ σ(m + sz) φ(z) dz`` to ~1e-13
    for every m and s: by 32-point Gauss–Hermite quadrature when s ≤ 1 and,
    when s > 1 (σ is then sharp on the scale of the Gaussian, and Gauss–Hermite
    converges slowly), in the equivalent form ``E[σ(ψ)] = P(T < ψ) =
    ∫ σ'(t) Φ((m − t)/s) dt`` (T logistic, independent of ψ) by the trapezoid
    rule around the integrand's mode, which converges geometrically for an
    integrand analytic in a strip.
    Both probabilities are sums of positive terms, each computed in logs, so
    neither loses digits when the other is near 1.
    ``method="probit"`` is MacKay's approximation σ(m / sqrt(1 + πs²/8)),
    within about 0.02 of the integral.

    ``mean`` and ``std`` broadcast; the results have their shape.
    """
    mean, std = np.broadcast_arrays(np.asarray(mean, dtype=float), np.asarray(std, dtype=float))
    if method == "probit":
        scaled = mean / np.sqrt(1.0 + np.pi * std**2 / 8.0)
        return log_expit(scaled), log_expit(-scaled)
    if method != "quadrature":
        raise ValueError(f"method must be one of {PREDICTIVE_METHODS}, got {method!r}")
    log_one, log_zero = np.empty(mean.shape), np.empty(mean.shape)
    narrow = std <= 1.0
    m, s = mean[narrow][:, None], std[narrow][:, None]
    logits = m + np.sqrt(2.0) * s * _HERMITE_NODES
    log_one[narrow] = logsumexp(_LOG_HERMITE_WEIGHTS + log_expit(logits), axis=-1)
    log_zero[narrow] = logsumexp(_LOG_HERMITE_WEIGHTS + log_expit(-logits), axis=-1)
    m, s = mean[~narrow], std[~narrow]
    log_one[~narrow] = _log_trapezoid(m, s)
    log_zero[~narrow] = _log_trapezoid(-m, s)  # P(y = 0) = E[σ(−ψ)], −ψ ~ N(−m, s²)
    return log_one, log_zero


def partial_fit_batch(estimator, X, y, classes, fitted_attribute: str, binary: bool) -> tuple:
    """``partial_fit``'s checks of one batch: ``(X, y, first, classes)``, ``first`` whether the estimator has not
    learnt yet (no ``fitted_attribute``). The first call needs ``classes`` (exactly two labels if ``binary``, at
    least two otherwise); later ones may repeat them; every label of ``y`` must be one of them."""
    name = type(estimator).__name__
    first = not hasattr(estimator, fitted_attribute)
    if first:
        if classes is None:
            raise ValueError(f"{name}.partial_fit: classes must be passed on the first call "
                             f"({'the two labels' if binary else 'every label'})")
        classes = np.unique(np.asarray(classes))
        if (binary and len(classes) != 2) or len(classes) < 2:
            raise DataError(f"{name}.partial_fit: classes must hold {'exactly' if binary else 'at least'} 2 labels, "
                            f"got {classes.tolist()}")
    else:
        if classes is not None and not np.array_equal(np.unique(np.asarray(classes)), estimator.classes_):
            raise DataError(f"{name}.partial_fit: classes {np.unique(classes).tolist()} differ from those of the "
                            f"first call, {estimator.classes_.tolist()}")
        classes = estimator.classes_
    X, y = validate_data(estimator, X, y, reset=first)
    check_classification_targets(y)
    unknown = ~np.isin(y, classes)
    if np.any(unknown):
        raise DataError(f"{name}.partial_fit: label {y[np.argmax(unknown)].item()!r} at index "
                        f"{int(np.argmax(unknown))} is not one of the classes {classes.tolist()}")
    return X, y, first, classes


class BayesianLogisticRegression(ClassifierMixin, BaseEstimator):
    """Binary Bayesian logistic regression with a Gaussian prior, fitted by Pólya-Gamma VMP.

    Parameters
    ----------
    prior_var : float, default 25.0
        Variance σ² of the independent N(0, σ²) prior on every coefficient
        (the intercept included); σ = 5 by default.
    max_iter : int, default 1000
        Most VMP sweeps. Nearly separable data converge slowly (the coefficients
        grow towards the prior's scale a little per sweep): breast cancer (30
        z-scored features) takes about 400–550 sweeps to ``tol=1e-6``, ~1 ms each.
    tol : float, default 1e-6
        Stop when the ELBO per sample changes by less than ``tol`` nats between sweeps (scikit-learn's
        convention: ``tol · n_samples`` nats of the whole ELBO, :func:`fgraph.models.logistic.binary.run_variational`);
        a run that does not is reported by a scikit-learn ``ConvergenceWarning`` naming ``max_iter``.
    fit_intercept : bool, default True
        Whether ψ = wᵀx + b (a bias with the same prior) or ψ = wᵀx.
    predictive : {"quadrature", "probit"}, default "quadrature"
        How :meth:`predict_proba` integrates σ(ψ) over the posterior of the
        logit (:func:`predictive_log_probabilities`).
    likelihood : {"polya-gamma", "laplace", "variational", "moment", "moment-original"}, default "polya-gamma"
        The exact model by Pólya-Gamma VMP, or a Gaussian likelihood
        approximation (module docstring): labels become pseudo-observations of
        the logit from the logit-basis Gaussian of Beta(α_ε + y, β_ε + 1 − y).
    alpha_epsilon, beta_epsilon : float, default 0.1 and None (= alpha_epsilon)
        The Beta prior's shapes of the approximations (unused by ``"polya-gamma"``). ``alpha_epsilon="elbo"``
        chooses α_ε = β_ε in :meth:`fit` by the exact model's evidence lower bound of the approximate posterior
        (Appendix B; :func:`fgraph.models.logistic.bound.choose_epsilon`); the choice is ``alpha_epsilon_``.

    Attributes
    ----------
    classes_ : ndarray (2,)
        The two labels; ``classes_[1]`` is the one modelled as y = 1.
    coef_ : ndarray (1, n_features)
        Posterior mean of w.
    intercept_ : ndarray (1,)
        Posterior mean of b (0 without an intercept).
    posterior_mean_ : ndarray (D,), posterior_cov_ : ndarray (D, D)
        q(β) = N(μ, Σ), β = [w; b] (D = n_features + 1), or β = w without an intercept.
    elbo_ : ndarray (n_iter_,)
        The evidence lower bound −F after every sweep (non-decreasing).
    lower_bound_ : float or None
        The ELBO after the last sweep (``elbo_[-1]``); None after a closed-form (conjugate) update.
    n_iter_ : int
        Sweeps run (by the last :meth:`partial_fit` call, that of its batch).
    converged_ : bool
        Whether the free energy settled within ``tol`` before ``max_iter``.
    n_samples_seen_ : int
        Samples the posterior has learnt from (:meth:`fit`: all; :meth:`partial_fit`: so far).
    n_features_in_ : int
    """

    def __init__(self, prior_var=25.0, max_iter=1000, tol=1e-6, fit_intercept=True, predictive="quadrature",
                 likelihood="polya-gamma", alpha_epsilon=0.1, beta_epsilon=None):
        self.prior_var = prior_var
        self.max_iter = max_iter
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.predictive = predictive
        self.likelihood = likelihood
        self.alpha_epsilon = alpha_epsilon
        self.beta_epsilon = beta_epsilon

    # ------------------------------------------------------------------ tags
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False  # binary only: fit raises "Only binary classification ..."
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"binary_only": True}

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Fit q(β) to features ``X`` (n_samples, n_features) and two-class labels ``y``."""
        check_parameters(self)
        check_likelihood(self)
        X, y = validate_data(self, X, y)
        check_classification_targets(y)
        classes = np.unique(y)
        if len(classes) < 2:
            raise DataError(f"{type(self).__name__} needs samples of 2 classes, but the data contain only one "
                            f"class: {classes[0]!r}")
        target_type = type_of_target(y, input_name="y", raise_unknown=True)
        if target_type != "binary":
            raise DataError(f"Only binary classification is supported. The type of the target is {target_type}.")
        self.classes_ = classes
        dimension = X.shape[1] + bool(self.fit_intercept)
        labels = (y == classes[1]).astype(float)
        self.alpha_epsilon_, self.beta_epsilon_ = self.alpha_epsilon, self.beta_epsilon
        if self.alpha_epsilon == "elbo" and self.likelihood != "polya-gamma":
            from fgraph.models.logistic.bound import choose_epsilon
            rows = np.column_stack([X, np.ones(len(X))]) if self.fit_intercept else X
            choice = choose_epsilon(rows, labels, float(self.prior_var), self.likelihood)
            self.alpha_epsilon_, self.beta_epsilon_ = choice.alpha_epsilon, choice.beta_epsilon
        self._fit_batch(X, labels, np.zeros(dimension), float(self.prior_var) * np.eye(dimension), by_engine=True)
        self.n_samples_seen_ = X.shape[0]
        return self

    def partial_fit(self, X, y, classes=None):
        """Learn from one more batch: the posterior so far (after :meth:`fit` or earlier calls; the prior before)
        is the prior of ``X``, ``y``. ``classes`` (the two labels) is required on the first call.

        With a Gaussian likelihood approximation the update is conjugate and exact: any batching of the same
        data gives the posterior of one :meth:`fit` (to rounding); one observation costs a few O(D²) products.
        With ``"polya-gamma"`` each batch is fitted by VMP from the carried Gaussian prior.
        """
        if not hasattr(self, "posterior_mean_"):
            check_parameters(self)
            check_likelihood(self)
            if self.alpha_epsilon == "elbo" and self.likelihood != "polya-gamma":
                raise ValueError(f"{type(self).__name__}.partial_fit: alpha_epsilon='elbo' chooses α_ε from the "
                                 "whole data: use fit, or give a number")
            self.alpha_epsilon_, self.beta_epsilon_ = self.alpha_epsilon, self.beta_epsilon
        X, y, first, classes = partial_fit_batch(self, X, y, classes, "posterior_mean_", binary=True)
        if first:
            self.classes_ = classes
            dimension = X.shape[1] + bool(self.fit_intercept)
            mean, cov = np.zeros(dimension), float(self.prior_var) * np.eye(dimension)
            self.n_samples_seen_ = 0
        else:
            mean, cov = self.posterior_mean_, self.posterior_cov_
        self._fit_batch(X, (y == self.classes_[1]).astype(float), mean, cov, by_engine=self.likelihood == "polya-gamma")
        self.n_samples_seen_ += X.shape[0]
        return self

    def _fit_batch(self, X, labels, prior_mean, prior_cov, by_engine: bool):
        """q(β) from the prior N(prior_mean, prior_cov) and one batch of 0/1 ``labels``; sets the fitted attributes.

        ``by_engine``: the graph run by VMP (the Pólya-Gamma node, or the node with the approximation as its
        operator: one sweep is exact, the free energy the approximate model's −log evidence); otherwise (an
        approximation only) the conjugate update in closed form, the fast path of :meth:`partial_fit`.
        """
        intercept = bool(self.fit_intercept)
        if by_engine:
            approximation = ({} if self.likelihood == "polya-gamma" else
                             {"operator": self.likelihood, "alpha_epsilon": self.alpha_epsilon_,
                              "beta_epsilon": self.beta_epsilon_})
            with fg.Model() as model:
                beta = MvNormal("beta", mean=prior_mean, cov=prior_cov)
                Logistic("y", beta, X, observed=labels, intercept=intercept, **approximation)
            posterior = run_variational(self, model, X.shape[0]).marginal("beta")
            mean, cov = np.array(posterior.mean), np.array(posterior.cov)
        else:
            targets, variances = basis_matching.logistic_pseudo_observations(
                labels, self.alpha_epsilon_, self.beta_epsilon_, self.likelihood)
            rows = np.column_stack([X, np.ones(len(X))]) if intercept else X
            mean, cov = observe_linear(prior_mean, prior_cov, rows, targets, variances)
            self.elbo_, self.n_iter_, self.converged_, self.lower_bound_ = np.array([]), 1, True, None
        self.posterior_mean_, self.posterior_cov_ = mean, cov
        self.coef_ = mean[None, :X.shape[1]]
        self.intercept_ = mean[-1:] if intercept else np.zeros(1)

    # -------------------------------------------------------------- predict
    def _logit_moments(self, X):
        """Mean and standard deviation of ψ* = βᵀx̃ under q(β) for every row of ``X``."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        rows = np.column_stack([X, np.ones(len(X))]) if self.fit_intercept else X
        variance = np.einsum("ni,ij,nj->n", rows, self.posterior_cov_, rows)
        return rows @ self.posterior_mean_, np.sqrt(np.maximum(variance, 0.0))

    def _log_probabilities(self, X):
        return predictive_log_probabilities(*self._logit_moments(X), method=self.predictive)

    def predict_proba(self, X):
        """``[p(y = classes_[0] | x), p(y = classes_[1] | x)]`` per row, integrated over q(β)."""
        log_one, log_zero = self._log_probabilities(X)
        return np.column_stack([np.exp(log_zero), np.exp(log_one)])

    def predict_log_proba(self, X):
        log_one, log_zero = self._log_probabilities(X)
        return np.column_stack([log_zero, log_one])

    def decision_function(self, X):
        """The log-odds of :meth:`predict_proba`, ``log p(classes_[1] | x) − log p(classes_[0] | x)``.

        Positive exactly where :meth:`predict` says ``classes_[1]`` (the
        predictive of a Gaussian logit is above ½ exactly where its mean is
        positive), and monotone in the predictive probability. The posterior
        mean logit itself is ``X @ coef_.T + intercept_``.
        """
        log_one, log_zero = self._log_probabilities(X)
        return log_one - log_zero

    def predict(self, X):
        """The label of higher predictive probability (``classes_[1]`` where :meth:`decision_function` > 0)."""
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]

    def to_arviz(self, X=None, y=None, draws=1000, seed=None):
        """An ``arviz.InferenceData`` (:mod:`fgraph.models.arviz`): ``draws`` draws of β ~ q(β) = N(posterior_mean_,
        posterior_cov_) as ``coef`` (draw, n_features) and ``intercept`` (draw,); given ``X`` and ``y``, the
        pointwise ``log p(y_i | x_i, β_s) = log σ(±β_sᵀx̃_i)`` of the logistic model (whatever ``likelihood``
        approximated it in the fit) for ``arviz.waic`` / ``arviz.loo``."""
        from fgraph.models.arviz import export

        features = self.n_features_in_

        def draw(count, rng):
            beta = rng.multivariate_normal(self.posterior_mean_, self.posterior_cov_, size=count, method="cholesky")
            return {"coef": beta[:, :features], **({"intercept": beta[:, features]} if self.fit_intercept else {})}

        def log_likelihood(parameters, X, labels, rng):
            psi = parameters["coef"] @ X.T + (parameters["intercept"][:, None] if self.fit_intercept else 0.0)
            return log_expit(np.where(labels == 1, psi, -psi))

        return export(self, X, y, draws, seed, draw, log_likelihood)
