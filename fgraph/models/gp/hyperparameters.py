"""Kernel hyperparameters and constant prior means by maximising the log evidence of the graph.

The objective is ``𝓛(θ, m) = Σ_b log N(ỹ_b | m_b 1, K_θ + diag(ṽ_b))``, read off the belief by
:func:`~fgraph.models.gp.regression.gp_posterior`, with its analytic gradient
(:func:`~fgraph.models.gp.regression.log_evidence_gradients`); with inducing inputs, Titsias' collapsed bound on it
and its gradient (:mod:`fgraph.models.gp.sparse`). scipy's L-BFGS-B maximises it over the kernel's
log hyperparameters θ (bounded to ``[log 1e-5, log 1e5]``, as scikit-learn does, so that a flat direction
cannot run off to a degenerate kernel) and, when asked, one constant mean per function.

The pseudo-observations of class labels depend on the Dirichlet (Beta) concentration α_ε; given as a function
``observations(α_ε) → (ỹ, ṽ, ∂ỹ/∂log α_ε, ∂ṽ/∂log α_ε)``, log α_ε is optimised with the rest, its gradient
``Σ (∂𝓛/∂ỹ · ∂ỹ/∂log α_ε + ∂𝓛/∂ṽ · ∂ṽ/∂log α_ε)`` from the evidence's gradients in the observations. (The
approximate evidence is a density of the pseudo-observations, which move with α_ε: it compares α_ε values as the
approximate model sees them, not as the exact model does — :mod:`fgraph.models.gp.variational` has that bound.
On class labels it rises with α_ε up to any bound: the pseudo-observations flatten towards a constant of small
variance, which the approximate model explains best. It is here for objectives whose observations move with a
parameter; it does not choose α_ε.)

Restarts draw θ uniformly in log space within ``[θ₀ − 2, θ₀ + 2]`` (a factor e² ≈ 7 either way of the
initial kernel); the best of the starts is kept.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from fgraph.errors import ModelError
from fgraph.families.kernels import Kernel
from fgraph.models.gp.regression import GPPosterior, gp_posterior, log_evidence_gradients
from fgraph.models.gp.sparse import SparseGPPosterior, sparse_gp_posterior, sparse_log_evidence_gradients

__all__ = ["EvidenceFit", "maximise_evidence", "LOG_BOUNDS"]

#: the bounds of every log hyperparameter during optimisation
LOG_BOUNDS = (np.log(1e-5), np.log(1e5))


@dataclass(frozen=True)
class EvidenceFit:
    """The result of :func:`maximise_evidence`: the fitted posterior (its kernel and means are the optimum),
    α_ε when it was learnt too, the log evidence of every start, the L-BFGS iterations of the best start and the
    objective evaluations of all."""

    posterior: GPPosterior | SparseGPPosterior
    alpha_epsilon: float | None
    start_log_evidences: tuple
    iterations: int
    evaluations: int
    converged: bool


def maximise_evidence(X, targets, variances, kernel: Kernel, mean=0.0, learn_mean: bool = True,
                      n_restarts: int = 0, random_state=None, jitter="auto", max_iterations: int = 200,
                      inducing=None, learn_inducing: bool = False, observations=None, alpha_epsilon: float = 0.1,
                      alpha_bounds: tuple = (1e-3, 1e3)) -> EvidenceFit:
    """Maximise the log evidence over ``kernel``'s log hyperparameters (and the constant means, if ``learn_mean``).

    ``targets``, ``variances``: (N,) or (B, N); ``mean``: the initial means, a number or (B,). Returns an
    :class:`EvidenceFit`. ``n_restarts`` extra starts from random hyperparameters (module docstring).
    ``inducing`` (M, d): maximise the sparse bound with these inducing inputs instead, kept fixed or, with
    ``learn_inducing``, learnt with the rest (M d more variables, unbounded).
    ``observations``: learn α_ε too, from ``alpha_epsilon`` within ``alpha_bounds`` (module docstring);
    ``targets`` and ``variances`` are then not read.
    """
    if learn_inducing and inducing is None:
        raise ModelError("learn_inducing learns the inducing inputs of the sparse GP: "
                         "give the initial ones (inducing=)")
    if inducing is None:
        def regression(trial_kernel, means, targets, variances, inputs):
            posterior = gp_posterior(X, targets, variances, trial_kernel, means, jitter)
            return posterior, log_evidence_gradients(posterior)
    else:
        inducing = np.asarray(inducing, dtype=float)

        def regression(trial_kernel, means, targets, variances, inputs):
            posterior = sparse_gp_posterior(X, targets, variances, trial_kernel, inputs, means, jitter)
            return posterior, sparse_log_evidence_gradients(posterior, inducing=learn_inducing)

    def fit_at(trial_kernel, means, alpha, inputs):
        """The posterior and the gradient in (θ, m, log α_ε, Z) at one point (the last two when learnt)."""
        if not learn_alpha:
            posterior, gradients = regression(trial_kernel, means, targets, variances, inputs)
            extra = ()
        else:
            trial_targets, trial_variances, d_targets, d_variances = observations(alpha)
            posterior, gradients = regression(trial_kernel, means, trial_targets, trial_variances, inputs)
            extra = (np.sum(gradients.targets * d_targets) + np.sum(gradients.variances * d_variances),)
        if learn_inducing:
            extra = extra + tuple(gradients.inducing.ravel())
        return posterior, gradients, extra

    if not isinstance(kernel, Kernel):
        raise ModelError(f"kernel must be a kernel of fgraph.families.kernels, got {type(kernel).__name__}")
    if not isinstance(n_restarts, (int, np.integer)) or n_restarts < 0:
        raise ModelError(f"n_restarts must be a whole number ≥ 0, got {n_restarts!r}")
    learn_alpha = observations is not None
    if learn_alpha:
        targets, variances, _, _ = observations(alpha_epsilon)
    count = np.atleast_2d(np.asarray(targets)).shape[0]
    initial_means = np.broadcast_to(np.asarray(mean, dtype=float), (count,)).copy()
    theta0 = kernel.log_parameters
    size = theta0.size
    evaluations = 0
    last: dict = {}  # the most recent evaluation only: each posterior holds N × N matrices

    inducing_size = inducing.size if learn_inducing else 0

    def unpack(point):
        means = point[size:size + count] if learn_mean else initial_means
        end = len(point) - inducing_size
        alpha = float(np.exp(point[end - 1])) if learn_alpha else None
        inputs = point[end:].reshape(inducing.shape) if learn_inducing else inducing
        return kernel.with_log_parameters(point[:size]), means, alpha, inputs

    def objective(point):
        nonlocal evaluations
        evaluations += 1
        posterior, gradients, extra = fit_at(*unpack(point))
        gradient = np.concatenate([gradients.kernel, gradients.means if learn_mean else [], extra])
        last.clear()
        last[point.tobytes()] = posterior
        return -posterior.log_evidence, -gradient

    rng = np.random.default_rng(random_state)
    starts = [theta0] + [theta0 + rng.uniform(-2.0, 2.0, size) for _ in range(n_restarts)]
    bounds = ([LOG_BOUNDS] * size + ([(None, None)] * count if learn_mean else [])
              + ([tuple(np.log(alpha_bounds))] if learn_alpha else []) + [(None, None)] * inducing_size)
    best, results = None, []
    for start in starts:
        point = np.clip(start, *LOG_BOUNDS)
        if learn_mean:
            point = np.concatenate([point, initial_means])
        if learn_alpha:
            point = np.concatenate([point, [np.log(alpha_epsilon)]])
        if learn_inducing:
            point = np.concatenate([point, inducing.ravel()])
        result = minimize(objective, point, jac=True, method="L-BFGS-B", bounds=bounds,
                          options={"maxiter": max_iterations})
        results.append(-float(result.fun))
        if best is None or result.fun < best.fun:
            best = result
    posterior = last.get(best.x.tobytes())
    if posterior is None:  # the optimiser's last evaluation was not at its reported optimum
        posterior, _, _ = fit_at(*unpack(best.x))
    alpha = unpack(best.x)[2]
    return EvidenceFit(posterior, alpha, tuple(results), int(best.nit), evaluations, bool(best.success))
