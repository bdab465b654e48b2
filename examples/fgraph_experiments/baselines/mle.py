"""Maximum likelihood for the CMN: full-batch AdaBelief on the negative log-likelihood (paper §4).

The network is read as in the authors' MLE code: the gated-mean forward pass
x1 = Σ_k p(z = k | x0, β0) A_k x̃0 and y ~ stick-breaking logistic(β1ᵀ[x1; 1])
(:func:`~fgraph_experiments.baselines.network.gated_mean_log_probabilities`), so the latent x1 is replaced
by the gate-weighted mean of the experts' predictions and the expert noise precisions Λ_k drop out of
the objective (the paper lists Σ_k⁻¹ among the estimated parameters; its code has none). The loss is
−Σ_n log p(y_n | x0_n) over the whole training set at every step (deterministic, not stochastic,
gradient descent), minimised by ``optax.adabelief(learning_rate)`` with its defaults (β1 = 0.9,
β2 = 0.999), 20,000 steps in the paper.

Initialisation (per restart, from its key, as in the authors' code): the weights of every stick in β0
and β1 uniform in ±1/sqrt(fan-in) with zero biases; A uniform in ±1/sqrt(D).

Restarts are a vmapped batch: one compiled program runs all of them; restart r with key k_r gives
the same numbers as a single fit with that key.
"""
from __future__ import annotations

import time

import numpy as np
import optax

from fgraph.errors import ModelError

from .network import (
    jax, jnp, gated_mean_log_probabilities, prediction_inputs, prepare_data,
)
from .result import BaselineFit, restart_keys, to_numpy

__all__ = ["fit_mle", "initial_parameters", "negative_log_likelihood"]


def _stick_coefficients(key, n_sticks: int, fan_in: int):
    """(n_sticks, fan_in + 1): weights uniform in ±1/sqrt(fan_in), zero bias."""
    bound = 1.0 / np.sqrt(fan_in)
    weights = jax.random.uniform(key, (n_sticks, fan_in), minval=-bound, maxval=bound)
    return jnp.concatenate([weights, jnp.zeros((n_sticks, 1))], axis=1)


def initial_parameters(key, d: int, n_experts: int, n_classes: int) -> dict:
    """Point estimates to start from: ``beta0`` (K−1, d+1), ``A`` (K, h, d+1), ``beta1`` (L−1, h+1)."""
    h, D = n_classes - 1, d + 1
    k0, kA, k1 = jax.random.split(key, 3)
    bound = 1.0 / np.sqrt(D)
    return {
        "beta0": _stick_coefficients(k0, n_experts - 1, d),
        "A": jax.random.uniform(kA, (n_experts, h, D), minval=-bound, maxval=bound),
        "beta1": _stick_coefficients(k1, n_classes - 1, h),
    }


def negative_log_likelihood(params, x0t, y):
    """−Σ_n log p(y_n | x0_n) of the gated-mean network."""
    log_probabilities = gated_mean_log_probabilities(params, x0t)
    return -jnp.sum(jnp.take_along_axis(log_probabilities, y[:, None], axis=1))


def fit_mle(x0, y, n_experts: int, n_classes: int | None = None, *, steps: int = 20000,
            n_restarts: int = 1, seed: int = 0, learning_rate: float = 1e-3, x_test=None,
            keys=None) -> BaselineFit:
    """Fit the CMN by maximum likelihood, ``n_restarts`` random restarts in one vmapped program.

    ``x0`` (N, d), ``y`` (N,) labels 0..L−1; ``x_test`` (N*, d) for the predictive probabilities
    (default: the training inputs). ``keys`` (R, 2) JAX keys override ``seed`` and
    ``n_restarts``. Returns a :class:`~fgraph_experiments.baselines.result.BaselineFit` with the loss
    trace (R, steps) (the loss at the parameters before each step), the probabilities (R, N*, L) and
    the training log-likelihoods (R, 1, N) at the final parameters.
    """
    data = prepare_data(x0, y, n_experts, n_classes)
    if not isinstance(steps, (int, np.integer)) or steps < 1:
        raise ModelError(f"steps must be a whole number ≥ 1, got {steps!r}")
    keys = restart_keys(seed, n_restarts, keys)
    x0t, labels = jnp.asarray(data.x0t), jnp.asarray(data.y)
    x_new = jnp.asarray(prediction_inputs(x_test, data.x0t))
    d = data.x0t.shape[1] - 1
    optimiser = optax.adabelief(learning_rate)
    loss_and_gradient = jax.value_and_grad(negative_log_likelihood)

    def fit_one(key):
        params = initial_parameters(key, d, data.n_experts, data.n_classes)

        def step(carry, _):
            params, state = carry
            loss, gradient = loss_and_gradient(params, x0t, labels)
            updates, state = optimiser.update(gradient, state, params)
            return (optax.apply_updates(params, updates), state), loss

        (params, _), losses = jax.lax.scan(step, (params, optimiser.init(params)), None, length=steps)
        return params, losses

    started = time.perf_counter()
    compiled = jax.jit(jax.vmap(fit_one)).lower(keys).compile()
    compile_seconds = time.perf_counter() - started
    started = time.perf_counter()
    params, losses = jax.block_until_ready(compiled(keys))
    run_seconds = time.perf_counter() - started

    predict = jax.jit(jax.vmap(gated_mean_log_probabilities, in_axes=(0, None)))
    probabilities = jnp.exp(predict(params, x_new))
    train_log = predict(params, x0t)  # (R, N, L)
    log_likelihood = jnp.take_along_axis(train_log, jnp.broadcast_to(labels[None, :, None], train_log.shape[:2] + (1,)),
                                         axis=2)[..., 0][:, None, :]
    return BaselineFit(
        method="mle", params=to_numpy(params), trace=np.asarray(losses), probabilities=np.asarray(probabilities),
        log_likelihood=np.asarray(log_likelihood), inference_data=None,
        seconds_per_step=run_seconds / steps, compile_seconds=compile_seconds, run_seconds=run_seconds,
        extra={},
    )
