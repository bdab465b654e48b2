"""The conditional mixture network (CAVI-CMN) as a scikit-learn classifier.

:class:`CMNClassifier` fits the network of :mod:`fgraph.models.cmn` — a stick-breaking logistic gate
over K linear experts x1 = A_k[x0; 1] + noise, and a stick-breaking logistic output on x1 — by the
engine's VMP (coordinate-ascent VI with Pólya-Gamma augmentation), R random restarts as copies of one
graph, and predicts with the posterior predictive of :mod:`fgraph.models.cmn.predictive` (exact over
the gate's and the output's coefficients, Monte Carlo over x1 only).

The paper z-scores the features; the estimator does not scale its input (the priors of eq. (4) assume
features of order one). Put a ``StandardScaler`` in front::

    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from fgraph.models import CMNClassifier

    model = make_pipeline(StandardScaler(), CMNClassifier(n_experts=20, n_restarts=4, random_state=0))
    model.fit(X_train, y_train).score(X_test, y_test)

The defaults are the authors' choices where they depart from eq. (4) and make the better model held out: the
sticks' prior means (:class:`~fgraph.models.cmn.priors.CMNPriors`) and the initial state at the prior means;
their eight E-step passes a sweep change no held-out number and cost eight times the E-step, so the default
makes one. :meth:`CMNClassifier.with_authors_settings` adds those passes and their 200 sweeps
(``docs/cmn-experiments.md``, "Table 1" and "Held-out: which setting is the better model"); eq. (4) as written is
``CMNClassifier(priors=CMNPriors(stick_bias=False), initial="draws")``.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from fgraph.errors import ConvergenceWarning as FgraphConvergenceWarning
from fgraph.errors import NumericalError
from fgraph.models.cmn.graph import INITIAL_STATES, build_cmn, fit_cmn
from fgraph.models.cmn.predictive import predictive_log_proba
from fgraph.models.cmn.priors import CMNPriors
from fgraph.models.estimators import (bound_tolerance, check_integer, check_random_state, encoded_classes,
                                      report_convergence, validate_data)
from fgraph.nodes.softmax import APPROXIMATIONS

__all__ = ["CMNClassifier"]

#: what seeds the restarts' initial states (``numpy.random.default_rng`` takes each, and a non-negative integer)
RANDOM_STATES = (np.random.Generator, np.random.RandomState, np.random.SeedSequence, np.random.BitGenerator)
#: a column of X whose standard deviation exceeds this is not "of order one", the scale the priors of eq. (4) assume
ORDER_ONE = 10.0


class CMNClassifier(ClassifierMixin, BaseEstimator):
    """Conditional mixture network classifier (Heins et al., CAVI-CMN), fitted by Pólya-Gamma VMP.

    Parameters
    ----------
    n_experts : int, default 20
        K linear experts (the paper's K = 20; 10 on pinwheels). K = 1 is one linear-Gaussian layer
        under a logistic output (no gate).
    latent_dim : int or None, default None
        h, the dimension of x1; None is L − 1 for L classes (the paper's choice).
    n_restarts : int, default 1
        R random restarts, copies of one compiled graph run together (not a loop); each starts from its
        own random state drawn from ``random_state`` (:func:`fgraph.models.cmn.graph.initial_state`).
    max_iter : int, default 500
        Most VMP sweeps (one sweep updates every factor of q once, in the schedule of
        :func:`fgraph.models.cmn.graph.cmn_schedule`); 500 is the paper's budget (its Appendix E). The ELBO
        can creep up for hundreds of sweeps, each ~10–40 ms for a few hundred points and K = 20.
    tol : float, default 1e-4
        Stop when every restart's ELBO per sample changed by less than ``tol`` nats in the last sweep
        (scikit-learn's convention for a lower bound: ``tol · n_samples`` nats of the whole ELBO, judged per
        restart; :func:`fgraph.models.estimators.bound_tolerance`). On breast cancer (z-scored, K = 20) the
        change of the whole ELBO shrinks like 1/t — 0.29 nats at sweep 100, 0.05 at 200, 0.010 at 500 —, out
        of reach of an absolute 1e-4 nats within any budget (every fold of a 5-fold cross-validation stopped at
        500 sweeps); 1e-4 per sample (0.046 nats on 455 training points) is met in 173–187 sweeps. A run
        stopped by ``max_iter`` instead is reported by a scikit-learn ``ConvergenceWarning`` naming
        ``max_iter`` and its value.
    priors : CMNPriors or None, default None
        ``CMNPriors()`` when None: eq. (4) (v0 = 10, a0 = 2, b0 = 1, σ0 = σ1 = 5) with the sticks' intercept
        means −log(J − j) of the authors' code; ``CMNPriors(stick_bias=False)`` for eq. (4)'s zero means.
    random_state : int >= 0, numpy Generator (or RandomState, SeedSequence, BitGenerator) or None, default None
        Seeds the initial states of the restarts. The predictive's quasi-Monte Carlo points use
        ``random_state`` when it is an integer and the seed 0 otherwise, so predictions of a fitted
        model are deterministic.
    n_predictive_samples : int, default 32
        Points of x1 per (restart, expert) in :meth:`predict_proba`, scrambled Sobol points
        (:func:`fgraph.models.cmn.predictive.predictive_log_proba`: unbiased, and far closer than as many
        plain Monte Carlo draws; powers of 2 balance best).
    restart : "best", "all" or int, default "best"
        Which fit predicts: the restart of highest final ELBO (``best_restart_``), the equal-weight
        average of every restart's predictive, or one restart by index.
    e_step_passes : int, default 1
        E-steps per sweep (q(x1 | z) q(z) with their tilts) before the M-step: the paper's local
        iterations (:func:`fgraph.models.cmn.graph.cmn_schedule`); its code makes 8.
    n_jobs : int or None, default None
        Worker processes the restarts are split over (−1: one per CPU; None: this process), each
        block of restarts a graph of its own (:func:`fgraph.models.cmn.graph.fit_cmn`); the predictive of
        ``restart="all"`` too.
    output : str, default "stick-breaking"
        The output layer: stick-breaking Pólya-Gamma VMP, or a softmax output under a Gaussian likelihood
        approximation (``"laplace"``, ``"variational"``, ``"moment"``, ``"moment-original"``: Gaussian regression on
        x1; :func:`fgraph.models.cmn.graph.build_cmn`), its predictive E[softmax] by Monte Carlo.
    alpha_epsilon : float, default 0.1
        The approximation's Dirichlet concentration α_ε (unused by the stick-breaking output).
    initial : "prior-mean" or "draws", default "prior-mean"
        The restarts' initial states (:func:`fgraph.models.cmn.graph.initial_state`): the authors' — every
        coefficient at its prior mean with covariance I/100, the experts' means uniform in ±3/√D (the restarts
        differ in these draws only) —, or coefficient means drawn around zero with covariance I.

    Attributes
    ----------
    classes_ : ndarray (L,)
        The labels, sorted; ``classes_[j]`` is stick-breaking class j of the output.
    elbo_ : ndarray (n_iter_, R)
        The ELBO −F after every sweep, per restart (non-decreasing in each column).
    lower_bound_ : float
        The final ELBO of the best restart, ``elbo_[-1, best_restart_]`` (scikit-learn's name).
    n_iter_ : int
        Sweeps run.
    converged_ : bool
        Whether every restart's ELBO per sample settled within ``tol`` before ``max_iter``.
    best_restart_ : int
        argmax of the final ELBO over the restarts.
    posteriors_ : dict
        q per restart, the restart axis first (:func:`fgraph.models.cmn.graph.posteriors`).
    n_features_in_ : int

    The features are used as given: z-score them first (a ``StandardScaler`` in a pipeline).
    """

    def __init__(self, n_experts=20, latent_dim=None, n_restarts=1, max_iter=500, tol=1e-4, priors=None,
                 random_state=None, n_predictive_samples=32, restart="best", e_step_passes=1, n_jobs=None,
                 output="stick-breaking", alpha_epsilon=0.1, initial="prior-mean"):
        self.n_experts = n_experts
        self.latent_dim = latent_dim
        self.n_restarts = n_restarts
        self.max_iter = max_iter
        self.tol = tol
        self.priors = priors
        self.random_state = random_state
        self.n_predictive_samples = n_predictive_samples
        self.restart = restart
        self.e_step_passes = e_step_passes
        self.n_jobs = n_jobs
        self.output = output
        self.alpha_epsilon = alpha_epsilon
        self.initial = initial

    @classmethod
    def with_authors_settings(cls, **parameters) -> "CMNClassifier":
        """The estimator with the choices of the authors' code where it departs from eq. (4): the sticks' prior
        bias (``CMNPriors(stick_bias=True)``), the initial state at the prior means (``initial="prior-mean"``),
        eight E-step passes a sweep and 200 sweeps at most; ``parameters`` set the others (or override these)."""
        chosen = dict(priors=CMNPriors(), initial="prior-mean", e_step_passes=8, max_iter=200)
        chosen.update(parameters)
        return cls(**chosen)

    def _check_parameters(self) -> None:
        check_integer("n_experts", self.n_experts, 1)
        check_integer("latent_dim", self.latent_dim, 1, allow_none=True)
        check_integer("n_restarts", self.n_restarts, 1)
        check_integer("max_iter", self.max_iter, 1)
        check_integer("n_predictive_samples", self.n_predictive_samples, 1)
        check_integer("e_step_passes", self.e_step_passes, 1)
        if self.n_jobs is not None and self.n_jobs != -1:
            check_integer("n_jobs", self.n_jobs, 1)
        tol = self.tol
        if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not np.isfinite(tol) or tol <= 0:
            raise ValueError(f"tol must be a positive number (nats per sample), got {tol!r}")
        if self.output != "stick-breaking" and self.output not in APPROXIMATIONS:
            raise ValueError(f"output must be 'stick-breaking' or one of {APPROXIMATIONS}, got {self.output!r}")
        alpha = self.alpha_epsilon
        if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not np.isfinite(alpha) or alpha <= 0:
            raise ValueError(f"alpha_epsilon must be a positive number, got {alpha!r}")
        if self.initial not in INITIAL_STATES:
            raise ValueError(f"initial must be one of {INITIAL_STATES}, got {self.initial!r}")
        if self.priors is not None and not isinstance(self.priors, CMNPriors):
            raise ValueError(f"priors must be a CMNPriors or None, got {type(self.priors).__name__}")
        check_random_state(self, self.random_state, kinds=RANDOM_STATES)
        restart = self.restart
        if not (restart in ("best", "all") if isinstance(restart, str)
                else isinstance(restart, numbers.Integral) and not isinstance(restart, bool)
                and 0 <= restart < self.n_restarts):
            raise ValueError(f"restart must be 'best', 'all' or an integer in 0..n_restarts − 1 = "
                             f"{self.n_restarts - 1}, got {restart!r}")

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Fit q to features ``X`` (n_samples, n_features) and labels ``y`` (at least 2 classes)."""
        self._check_parameters()
        X, y = validate_data(self, X, y)
        labels = encoded_classes(self, y)
        priors = CMNPriors() if self.priors is None else self.priors
        network = build_cmn(X, labels, self.n_experts, latent_dim=self.latent_dim,
                            n_restarts=self.n_restarts, n_classes=len(self.classes_), priors=priors,
                            output=self.output, alpha_epsilon=float(self.alpha_epsilon))
        with warnings.catch_warnings():  # said below in scikit-learn's terms
            warnings.simplefilter("ignore", FgraphConvergenceWarning)
            try:
                fit = fit_cmn(network, iterations=int(self.max_iter), tol=bound_tolerance(self, len(X)),
                              seed=self.random_state,
                              n_jobs=self.n_jobs, e_step_passes=int(self.e_step_passes), initial=self.initial)
            except NumericalError as error:
                named = self._unscaled(X, error)
                if named is None:
                    raise
                raise named from error
        self.elbo_ = fit.elbo
        self.best_restart_ = fit.best_restart
        self.posteriors_ = {key: np.array(value) for key, value in fit.posteriors().items()}
        report_convergence(self, fit.elbo, fit.converged, fit.iterations, len(X), best=fit.best_restart)
        return self

    def _unscaled(self, X, error: NumericalError):
        """The error to raise when the fit broke down on features far from order one, the scale its priors assume
        (features of order 1e4 are enough): it names the column and the fix, where the engine's message names only
        a node. None when every column is of order one (the breakdown has another cause)."""
        spread = X.std(axis=0)
        widest = int(np.argmax(spread))
        if not spread[widest] > ORDER_ONE:
            return None
        return NumericalError(f"{type(self).__name__}: the fit broke down ({error}); the priors assume features of "
                              f"order one, but column {widest} of X has standard deviation {spread[widest]:.3g}: "
                              "standardise X first (e.g. a StandardScaler in a pipeline)")

    # -------------------------------------------------------------- predict
    def _restarts(self) -> list:
        if self.restart == "best":
            return [self.best_restart_]
        if self.restart == "all":
            return list(range(len(self.elbo_[0])))
        restarts = len(self.elbo_[0])
        if not isinstance(self.restart, numbers.Integral) or isinstance(self.restart, bool) \
                or not 0 <= self.restart < restarts:
            raise ValueError(f"restart must be 'best', 'all' or an integer in 0..{restarts - 1} (the fitted "
                             f"restarts), got {self.restart!r}")
        return [int(self.restart)]

    def predict_log_proba(self, X):
        """``log p(y = classes_[j] | x, data)`` per row (n_samples, L), by the posterior predictive of the chosen
        restart(s) (``restart``; :func:`fgraph.models.cmn.predictive.predictive_log_proba`)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        chosen = self._restarts()
        posteriors = {key: value[chosen] for key, value in self.posteriors_.items()
                      if key not in ("x1_mean", "x1_cov", "gamma")}
        seed = self.random_state if isinstance(self.random_state, numbers.Integral) else 0
        logs = predictive_log_proba(posteriors, X, n_samples=int(self.n_predictive_samples), random_state=seed,
                                    n_jobs=self.n_jobs, output=self.output)
        return np.logaddexp.reduce(logs, axis=0) - np.log(len(chosen))

    def predict_proba(self, X):
        """``p(y = classes_[j] | x, data)`` per row (n_samples, L); rows sum to one."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        """The class of highest predictive probability."""
        best = np.argmax(self.predict_log_proba(X), axis=1)  # checks that the estimator is fitted first
        return self.classes_[best]

    def to_arviz(self, X=None, y=None, draws=1000, seed=None):
        """An ``arviz.InferenceData`` (:mod:`fgraph.models.arviz`) of one restart (``restart``: ``"best"`` or an
        index; restarts are separate fits, not chains of one posterior): ``draws`` draws of θ ~ q —
        ``beta0``, ``A``, ``lam``, ``beta1`` (:func:`fgraph.models.cmn.predictive.posterior_draws`); given ``X``
        and ``y``, the pointwise ``log p(y_i | x_i, θ_s)`` with z summed exactly and x1 integrated by Monte Carlo
        over ``n_predictive_samples`` standard-normal draws per (point, expert)
        (:func:`fgraph.models.cmn.predictive.log_likelihood_given_draws`), for ``arviz.waic`` / ``arviz.loo``."""
        from fgraph.models.arviz import export
        from fgraph.models.cmn.predictive import log_likelihood_given_draws, posterior_draws

        check_is_fitted(self)
        if self.restart == "all":
            raise ValueError(f"{type(self).__name__}.to_arviz exports one restart; set restart='best' or an index "
                             f"in 0..{len(self.elbo_[0]) - 1}")
        chosen = self._restarts()
        posteriors = {key: value[chosen] for key, value in self.posteriors_.items()
                      if key not in ("x1_mean", "x1_cov", "gamma")}

        def draw(count, rng):
            return {key: value[0] for key, value in posterior_draws(posteriors, count, rng).items()}

        def log_likelihood(parameters, X, labels, rng):
            K, h = parameters["lam"].shape[-2:]
            noise = rng.standard_normal((int(self.n_predictive_samples), len(X), K, h))
            return log_likelihood_given_draws(parameters, X, labels, noise, self.output)

        return export(self, X, y, draws, seed, draw, log_likelihood)
