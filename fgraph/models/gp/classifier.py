"""Gaussian-process classification as heteroscedastic GP regression on the labels' Gaussian pseudo-observations
(§3.2–3.3 and §4.2 of Bui, "Likelihood approximations via Gaussian approximate inference"; Milios et al. 2018).

A label is not Gaussian, but the posterior of a Dirichlet (or Beta) over the class probabilities, written in the
log (or logit) basis, nearly is: :mod:`fgraph.families.basis_matching` turns each label into a pseudo-observation
``(ỹ_n, ṽ_n)`` of the latent functions. Classification then *is* regression with a known noise variance per point,
solved exactly on the graph (:mod:`fgraph.models.gp.regression`): posterior, evidence and their gradients in
closed form, no iterative approximate inference.

* **Two classes**: one latent logit ``f`` with a GP prior; label y ∈ {0, 1} (``classes_[1]`` is 1) gives
  the logit-basis Gaussian of ``Beta(α_ε + y, β_ε + 1 − y)`` (``β_ε = α_ε``).
* **K ≥ 3 classes**: K independent latent functions ``f_k`` sharing one kernel; the one-hot label ``c`` gives the
  log-basis Gaussian of ``Gamma(α_ε + c_k, 1)`` for each ``f_k`` (the softmax of the log-Gammas is
  ``Dir(α_ε + c)``).

Each function has a constant prior mean ``m_b`` (learnt; it starts at the mean of its pseudo-observations, far
below zero for the classes a point is not in when α_ε is small). Predictions integrate the likelihood over the
latent predictive ``N(μ*, σ*²)``: ``E[σ(f*)]`` by quadrature for two classes, ``E[softmax(f*)]`` over a fixed
quasi-Monte Carlo set for K (deterministic).

Fitting (``optimizer``): ``"evidence"`` maximises the approximate model's log evidence over the kernel's
hyperparameters and the means, with analytic gradients (:mod:`fgraph.models.gp.hyperparameters`); ``"elbo"``
maximises the exact model's evidence lower bound of Appendix B (:mod:`fgraph.models.gp.variational`) instead,
by L-BFGS on finite-difference gradients; ``None`` keeps the kernel as given. ``alpha_epsilon="elbo"`` chooses
α_ε by that bound too: jointly under ``optimizer="elbo"``, otherwise by a bounded scalar search over log α_ε in
which every trial α_ε gets its own hyperparameters from ``optimizer``. The approximate evidence cannot choose α_ε: it
rises with α_ε up to any bound on every data set tried (the pseudo-observations flatten towards a constant of
small variance), so there is no ``alpha_epsilon="evidence"``.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy.optimize import minimize, minimize_scalar
from scipy.special import log_expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from fgraph.errors import ModelError
from fgraph.families.basis_matching import METHODS, logistic_pseudo_observations, softmax_pseudo_observations
from fgraph.families.kernels import ExponentiatedQuadratic, Kernel
from fgraph.models.estimators import check_random_state, encoded_classes, validate_data
from fgraph.models.gp.hyperparameters import LOG_BOUNDS, maximise_evidence
from fgraph.models.gp.regression import gp_posterior
from fgraph.models.gp.sparse import kmeans_inducing_inputs, sparse_gp_posterior
from fgraph.models.gp.variational import classification_bound
from fgraph.models.logistic.binary import PREDICTIVE_METHODS, predictive_log_probabilities
from fgraph.models.logistic.bound import EPSILON_BOUNDS, SOFTMAX_DRAWS, expected_softmax

__all__ = ["GPClassifier", "pseudo_observations", "pseudo_observation_derivatives", "OPTIMIZERS"]

#: beyond this many training points ``inducing_points="auto"`` fits the sparse GP, with :data:`AUTO_INDUCING` inputs
EXACT_LIMIT = 5000
AUTO_INDUCING = 500

#: what :class:`GPClassifier` may maximise to learn the kernel's hyperparameters (``None``: keep them)
OPTIMIZERS = ("evidence", "elbo")


#: the relative step of the central differences of the pseudo-observations in log α_ε
LOG_ALPHA_STEP = 1e-5


def pseudo_observation_derivatives(labels, n_classes: int, method: str, alpha_epsilon: float) -> tuple:
    """``(ỹ, ṽ, ∂ỹ/∂log α_ε, ∂ṽ/∂log α_ε)``, each (B, N): the derivatives by central differences in log α_ε of the
    closed forms (elementwise and smooth in α_ε; the ``variational`` logit basis solves a Newton iteration to
    rounding, so its differences are accurate to about 1e-6 relative)."""
    targets, variances = pseudo_observations(labels, n_classes, method, alpha_epsilon)
    up = pseudo_observations(labels, n_classes, method, alpha_epsilon * np.exp(LOG_ALPHA_STEP))
    down = pseudo_observations(labels, n_classes, method, alpha_epsilon * np.exp(-LOG_ALPHA_STEP))
    return (targets, variances, (up[0] - down[0]) / (2 * LOG_ALPHA_STEP), (up[1] - down[1]) / (2 * LOG_ALPHA_STEP))


def pseudo_observations(labels, n_classes: int, method: str, alpha_epsilon: float) -> tuple:
    """``(targets, variances)`` of shape (B, N) for class indices ``labels`` (N,): B = 1 latent logit for two
    classes (the logit basis), B = K latent functions otherwise (the log basis)."""
    if n_classes == 2:
        targets, variances = logistic_pseudo_observations(labels, alpha_epsilon, None, method)
        return np.asarray(targets, dtype=float)[None, :], np.asarray(variances, dtype=float)[None, :]
    targets, variances = softmax_pseudo_observations(labels, n_classes, alpha_epsilon, method)
    return targets.T.copy(), variances.T.copy()


class GPClassifier(ClassifierMixin, BaseEstimator):
    """Gaussian-process classifier fitted as GP regression on the labels' pseudo-observations (module docstring).

    Parameters
    ----------
    kernel : Kernel or None, default None
        The covariance function (:mod:`fgraph.families.kernels`), shared by the latent functions; its
        hyperparameters are the optimiser's starting point. ``None``: ``ExponentiatedQuadratic(1.0, 1.0)``
        (standardise the features, e.g. a ``StandardScaler`` in a pipeline).
    method : {"moment", "moment-original", "laplace", "variational"}, default "moment"
        The Gaussian approximation of the labels (:data:`fgraph.families.basis_matching.METHODS`).
    alpha_epsilon : float or "elbo", default 0.1
        The Dirichlet (Beta) prior's concentration α_ε > 0, or ``"elbo"``: chosen by the exact model's bound.
    optimizer : {"evidence", "elbo"} or None, default "evidence"
        What the kernel's hyperparameters (and the means) maximise (module docstring).
    learn_mean : bool, default True
        Learn one constant prior mean per latent function (else keep the pseudo-observations' mean).
    n_restarts_optimizer : int, default 0
        Extra starts of the optimiser from random hyperparameters (``"evidence"`` only).
    predictive : {"quadrature", "probit"}, default "quadrature"
        How two-class probabilities integrate σ over the latent predictive
        (:func:`fgraph.models.logistic.predictive_log_probabilities`); K classes average the softmax over
        ``n_draws`` quasi-Monte Carlo points.
    n_draws : int, default 2048
        Points of the K-class predictive average and of the softmax bound's expectation.
    jitter : "auto" or float, default "auto"
        The diagonal jitter of the kernel factorisations (:func:`fgraph.families.gaussian_process.kernel_cholesky`).
    max_iter : int, default 200
        Most iterations of each L-BFGS run.
    inducing_points : "auto", None, int or array (M, d), default "auto"
        ``None``: the exact GP (O(N³)); an integer M: Titsias' sparse GP (:mod:`fgraph.models.gp.sparse`) with M
        inducing inputs placed by k-means on the training inputs; an array: those inducing inputs. ``"auto"``:
        exact up to N = 5,000 training points, else 500 k-means inducing inputs. The sparse GP learns its
        hyperparameters by its bound on the evidence (``optimizer="evidence"`` or ``None``; ``"elbo"`` needs the
        exact GP).
    learn_inducing : bool, default False
        Learn the sparse GP's inducing inputs with the hyperparameters (by the bound, from the k-means or given
        ones; ``optimizer="evidence"``).
    random_state : None or int, default None
        Seeds the restarts and the k-means placement of inducing inputs.

    Attributes
    ----------
    classes_ : ndarray (K,)
    kernel_ : Kernel
        The kernel with the fitted hyperparameters.
    means_ : ndarray (B,)
        The fitted constant prior means (B = 1 for two classes, K otherwise).
    alpha_epsilon_ : float
    log_marginal_likelihood_value_ : float
        The approximate model's log evidence at the fit, ``Σ_b log N(ỹ_b | m_b, K + diag(ṽ_b))``.
    elbo_ : float or None
        The exact model's bound at the fit, when ``optimizer`` or ``alpha_epsilon`` is ``"elbo"``.
    inducing_inputs_ : ndarray (M, d) or None
        The inducing inputs of a sparse fit, learnt ones if ``learn_inducing`` (None for the exact GP).
    lower_bound_ : float or None
        The exact model's evidence lower bound at the fit (``elbo_``, scikit-learn's name), or None when it is
        not computed (``optimizer`` and ``alpha_epsilon`` other than ``"elbo"``: the fit maximised
        ``log_marginal_likelihood_value_``).
    n_iter_ : int
        L-BFGS iterations of the hyperparameters' fit (of the chosen α_ε; 0 with ``optimizer=None``).
    converged_ : bool
        Whether that L-BFGS run met its tolerance before ``max_iter`` (and the search over α_ε its own); True with
        ``optimizer=None``. A run that did not is reported by a scikit-learn ``ConvergenceWarning`` naming
        ``max_iter`` and its value.
    posterior_ : GPPosterior
        The regression behind the fit (:class:`fgraph.models.gp.regression.GPPosterior`).
    n_features_in_ : int
    """

    def __init__(self, kernel=None, method="moment", alpha_epsilon=0.1, optimizer="evidence", learn_mean=True,
                 n_restarts_optimizer=0, predictive="quadrature", n_draws=SOFTMAX_DRAWS, jitter="auto",
                 max_iter=200, inducing_points="auto", learn_inducing=False, random_state=None):
        self.kernel = kernel
        self.method = method
        self.alpha_epsilon = alpha_epsilon
        self.optimizer = optimizer
        self.learn_mean = learn_mean
        self.n_restarts_optimizer = n_restarts_optimizer
        self.predictive = predictive
        self.n_draws = n_draws
        self.jitter = jitter
        self.max_iter = max_iter
        self.inducing_points = inducing_points
        self.learn_inducing = learn_inducing
        self.random_state = random_state

    # ------------------------------------------------------------------ checks
    def _check_parameters(self) -> None:
        name = type(self).__name__
        if self.kernel is not None and not isinstance(self.kernel, Kernel):
            raise ModelError(f"{name}: kernel must be None or a kernel of fgraph.families.kernels, "
                             f"got {type(self.kernel).__name__}")
        if self.method not in METHODS:
            raise ModelError(f"{name}: method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if not (self.alpha_epsilon == "elbo" or (isinstance(self.alpha_epsilon, numbers.Real)
                                                 and not isinstance(self.alpha_epsilon, bool)
                                                 and np.isfinite(self.alpha_epsilon) and self.alpha_epsilon > 0)):
            raise ModelError(f"{name}: alpha_epsilon must be a positive number or 'elbo', got {self.alpha_epsilon!r}")
        if self.optimizer is not None and self.optimizer not in OPTIMIZERS:
            raise ModelError(f"{name}: optimizer must be one of {', '.join(OPTIMIZERS)} or None, "
                             f"got {self.optimizer!r}")
        if self.predictive not in PREDICTIVE_METHODS:
            raise ModelError(f"{name}: predictive must be one of {', '.join(PREDICTIVE_METHODS)}, "
                             f"got {self.predictive!r}")
        for parameter, least in (("n_restarts_optimizer", 0), ("n_draws", 1), ("max_iter", 1)):
            value = getattr(self, parameter)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
                raise ModelError(f"{name}: {parameter} must be an integer ≥ {least}, got {value!r}")
        check_random_state(self, self.random_state, kinds=(), upper=2**32)  # numpy's and scikit-learn's seeds
        for parameter in ("learn_mean", "learn_inducing"):
            if not isinstance(getattr(self, parameter), (bool, np.bool_)):
                raise ModelError(f"{name}: {parameter} must be True or False, got {getattr(self, parameter)!r}")

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Fit the latent functions to features ``X`` (N, d) and labels ``y`` (N,) of at least two classes."""
        self._check_parameters()
        X, y = validate_data(self, X, y)
        labels = encoded_classes(self, y)
        n_classes = len(self.classes_)
        kernel = self.kernel if self.kernel is not None else ExponentiatedQuadratic(1.0, 1.0)
        if kernel.input_dimension is not None and kernel.input_dimension != X.shape[1]:
            raise ModelError(f"{type(self).__name__}: the kernel has {kernel.input_dimension} ARD lengthscales "
                             f"but X has {X.shape[1]} features")
        self.inducing_inputs_ = self._inducing_inputs(X)
        if self.inducing_inputs_ is not None and "elbo" in (self.optimizer, self.alpha_epsilon):
            raise ModelError(f"{type(self).__name__}: the exact model's bound ('elbo') needs the exact GP; use "
                             "inducing_points=None, or optimizer='evidence' and a number for alpha_epsilon")
        if self.alpha_epsilon == "elbo" and self.optimizer != "elbo":
            fitted = self._choose_alpha_epsilon(X, labels, n_classes, kernel)
        else:
            alpha = 0.1 if self.alpha_epsilon == "elbo" else float(self.alpha_epsilon)
            fitted = self._fit_at(X, labels, n_classes, kernel, alpha)
        posterior, alpha, bound, iterations, converged = fitted
        self.kernel_ = posterior.kernel
        if self.inducing_inputs_ is not None:
            self.inducing_inputs_ = posterior.inducing
        self.means_ = posterior.means.copy()
        self.alpha_epsilon_ = alpha
        self.posterior_ = posterior
        self.log_marginal_likelihood_value_ = posterior.log_evidence
        self.elbo_ = bound
        self.lower_bound_ = bound
        self.n_iter_ = iterations
        self.converged_ = converged
        if not converged:
            warnings.warn(f"{type(self).__name__} did not converge: L-BFGS stopped its fit of the hyperparameters "
                          f"after {iterations} iterations (max_iter={self.max_iter}) without meeting its tolerance; "
                          f"increase max_iter (now {self.max_iter}) or standardise X", ConvergenceWarning,
                          stacklevel=2)
        return self

    def _inducing_inputs(self, X):
        """The inducing inputs (M, d) of a sparse fit, or None for the exact GP (``inducing_points``)."""
        choice = self.inducing_points
        if isinstance(choice, str):
            if choice != "auto":
                raise ModelError(f"{type(self).__name__}: inducing_points must be 'auto', None, a whole number or "
                                 f"an array of inputs, got {choice!r}")
            if X.shape[0] <= EXACT_LIMIT:
                return None
            return kmeans_inducing_inputs(X, AUTO_INDUCING, self.random_state)
        if choice is None:
            return None
        if isinstance(choice, numbers.Integral) and not isinstance(choice, bool):
            return kmeans_inducing_inputs(X, int(choice), self.random_state)
        inputs = np.asarray(choice, dtype=float)
        if inputs.ndim != 2 or inputs.shape[1] != X.shape[1]:
            raise ModelError(f"{type(self).__name__}: inducing_points must have shape (M, {X.shape[1]}), "
                             f"got {inputs.shape}")
        if inputs.shape[0] > X.shape[0]:
            raise ModelError(f"{type(self).__name__}: {inputs.shape[0]} inducing inputs for {X.shape[0]} training "
                             "points; use at most N")
        return inputs

    def _regression(self, X, targets, variances, kernel: Kernel, means):
        if self.inducing_inputs_ is None:
            return gp_posterior(X, targets, variances, kernel, means, self.jitter)
        return sparse_gp_posterior(X, targets, variances, kernel, self.inducing_inputs_, means, self.jitter)

    def _fit_at(self, X, labels, n_classes: int, kernel: Kernel, alpha: float) -> tuple:
        """``(posterior, α_ε, bound or None, iterations, converged)`` at one α_ε (optimised jointly when optimizer
        and α_ε are "elbo"); ``converged``: L-BFGS met its tolerance (True without an optimizer)."""
        targets, variances = pseudo_observations(labels, n_classes, self.method, alpha)
        means = targets.mean(axis=1)
        if self.optimizer == "evidence":
            fit = maximise_evidence(X, targets, variances, kernel, means, learn_mean=bool(self.learn_mean),
                                    n_restarts=int(self.n_restarts_optimizer), random_state=self.random_state,
                                    jitter=self.jitter, max_iterations=int(self.max_iter),
                                    inducing=self.inducing_inputs_,
                                    learn_inducing=bool(self.learn_inducing) and self.inducing_inputs_ is not None)
            return fit.posterior, alpha, None, fit.iterations, fit.converged
        if self.optimizer == "elbo":
            return self._maximise_bound(X, labels, n_classes, kernel, means, alpha)
        return self._regression(X, targets, variances, kernel, means), alpha, None, 0, True

    def _maximise_bound(self, X, labels, n_classes: int, kernel: Kernel, means, alpha: float) -> tuple:
        size = kernel.log_parameters.size
        joint_alpha = self.alpha_epsilon == "elbo"
        learn_mean = bool(self.learn_mean)

        def unpack(point):
            trial_alpha = float(np.exp(point[-1])) if joint_alpha else alpha
            offset = size + (len(means) if learn_mean else 0)
            trial_means = point[size:offset] if learn_mean else None
            return kernel.with_log_parameters(point[:size]), trial_means, trial_alpha

        def posterior_at(point):
            trial_kernel, trial_means, trial_alpha = unpack(point)
            targets, variances = pseudo_observations(labels, n_classes, self.method, trial_alpha)
            start = targets.mean(axis=1) if trial_means is None else trial_means
            return gp_posterior(X, targets, variances, trial_kernel, start, self.jitter), trial_alpha

        def negative_bound(point):
            posterior, _ = posterior_at(point)
            return -classification_bound(posterior, labels, int(self.n_draws))

        parts = [kernel.log_parameters] + ([means] if learn_mean else []) + ([[np.log(alpha)]] if joint_alpha else [])
        bounds = ([LOG_BOUNDS] * size + [(None, None)] * (len(means) if learn_mean else 0)
                  + ([tuple(np.log(EPSILON_BOUNDS))] if joint_alpha else []))
        result = minimize(negative_bound, np.concatenate(parts), method="L-BFGS-B", bounds=bounds,
                          options={"maxiter": int(self.max_iter)})
        posterior, fitted_alpha = posterior_at(result.x)
        return posterior, fitted_alpha, -float(result.fun), int(result.nit), bool(result.success)

    def _choose_alpha_epsilon(self, X, labels, n_classes: int, kernel: Kernel) -> tuple:
        """α_ε maximising the exact model's bound, each trial with its own hyperparameters (module docstring)."""
        best: list = []  # the best trial so far only: each posterior holds B matrices of N × N

        def negative_bound(log_alpha):
            posterior, alpha, _, iterations, converged = self._fit_at(X, labels, n_classes, kernel,
                                                                      float(np.exp(log_alpha)))
            bound = classification_bound(posterior, labels, int(self.n_draws))
            if not best or bound > best[2]:
                best[:] = [posterior, alpha, bound, iterations, converged]
            return -bound

        low, high = np.log(EPSILON_BOUNDS)
        search = minimize_scalar(negative_bound, bounds=(low, high), method="bounded", options={"xatol": 1e-2})
        return tuple(best[:4]) + (best[4] and bool(search.success),)

    # ------------------------------------------------------------------ predict
    def latent_predictive(self, X) -> tuple:
        """The latent predictive ``N(f* | μ*, σ*²)`` at ``X`` (M, d): means and variances, each (M, B)."""
        check_is_fitted(self, "posterior_")
        X = validate_data(self, X, reset=False)
        mean, variance = self.posterior_.predict(X)
        return mean.T, variance.T

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities (M, K), the likelihood integrated over the latent predictive (module docstring)."""
        mean, variance = self.latent_predictive(X)
        std = np.sqrt(variance)
        if len(self.classes_) == 2:
            log_one, log_zero = predictive_log_probabilities(mean[:, 0], std[:, 0], self.predictive)
            return np.column_stack([np.exp(log_zero), np.exp(log_one)])
        return expected_softmax(mean, std, int(self.n_draws))

    def predict(self, X) -> np.ndarray:
        """The most probable class of each row of ``X``."""
        probabilities = self.predict_proba(X)  # checks the fit first
        return self.classes_[np.argmax(probabilities, axis=1)]

    # ------------------------------------------------------------------ export
    def to_arviz(self, X=None, y=None, draws=1000, seed=None):
        """An ``arviz.InferenceData`` of the fitted latent functions (one chain of ``draws`` draws).

        ``posterior``: one variable per latent function, ``f`` for two classes, ``f_k`` for the function of
        ``classes_[k]`` otherwise, each (chain, draw, P): joint draws from the posterior ``q(f_b) = N(μ_b, Σ_b)``
        of the regression on the pseudo-observations, ``μ_b, Σ_b = posterior_.predict(Z, full_cov=True)``, at the
        training inputs (dim ``training_point``, P = N) — or, for a sparse fit, at the inducing inputs
        ``inducing_inputs_`` (dim ``inducing_point``, P = M): there ``q(u)`` is the whole posterior, and the
        training inputs would cost the O(N³) the sparse GP avoids. The functions are independent under q.
        Each draw is ``μ_b + U_b diag(√λ_b) z`` with ``Σ_b = U_b diag(λ_b) U_bᵀ`` (eigenvalues below zero by
        rounding set to zero), so a nearly singular Σ_b needs no jitter. The exact fit costs O(B N³) here.

        Given ``X`` (n, d) and ``y`` (n,): ``log_likelihood["y"]`` (chain, draw, n), dim ``point``, holds
        ``log p(y_i | f_s(x_i))`` under the exact likelihood behind the basis — ``log σ(±f)`` for two classes
        (``classes_[1]`` positive), ``log softmax(f)_{y_i}`` for K — at latent values drawn from the latent
        predictive :meth:`latent_predictive` per point and function, ``f_s(x_i)_b ~ N(μ*_ib, σ*_ib²)``, stored
        in ``posterior`` as ``f_X`` (``f_k_X``), dim ``point``. They are independent across points and of the
        draws at the training inputs, which suffices for the pointwise ``arviz.waic`` / ``arviz.loo``; their
        average ``exp`` of the log-likelihood estimates ``predict_proba(X)`` at the observed classes.
        ``observed_data["y"]`` holds ``y``. ``X`` without ``y`` (or ``y`` without ``X``) is a DataError.
        """
        from scipy.special import log_softmax

        from fgraph.models.arviz import export

        binary = len(self.classes_) == 2
        names = ["f"] if binary else [f"f_{k}" for k in range(len(self.classes_))]
        sparse = getattr(self, "inducing_inputs_", None) is not None
        dims = {name: ["inducing_point" if sparse else "training_point"] for name in names}
        dims.update({f"{name}_X": ["point"] for name in names}, y=["point"])

        def draw(count, rng):
            inputs = self.inducing_inputs_ if sparse else self.posterior_.inputs
            mean, cov = self.posterior_.predict(inputs, full_cov=True)  # (B, P), (B, P, P)
            values, vectors = np.linalg.eigh(cov)
            roots = vectors * np.sqrt(np.maximum(values, 0.0))[:, None, :]  # Σ_b = R_b R_bᵀ
            noise = rng.standard_normal((count,) + mean.shape)  # (S, B, P)
            return {name: mean[b] + noise[:, b] @ roots[b].T for b, name in enumerate(names)}

        def log_likelihood(parameters, X, labels, rng):
            point_mean, point_variance = self.latent_predictive(X)  # (n, B)
            count = len(parameters[names[0]])
            latent = point_mean + np.sqrt(point_variance) * rng.standard_normal((count,) + point_mean.shape)
            if binary:
                values = log_expit(np.where(labels == 1, latent[..., 0], -latent[..., 0]))
            else:
                values = np.take_along_axis(log_softmax(latent, axis=-1), labels[None, :, None], axis=-1)[..., 0]
            return values, {f"{name}_X": latent[..., b] for b, name in enumerate(names)}

        return export(self, X, y, draws, seed, draw, log_likelihood, dims=dims)
