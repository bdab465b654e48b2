"""Black-box variational inference for the CMN: NumPyro SVI, ``Trace_ELBO(num_particles)``, AdaBelief.

The model is :func:`~fgraph_experiments.baselines.network.numpyro_model` (eq. 4's priors, z summed out,
x1 a latent site per point). The variational family follows CAVI's factorisation over the parameters
(the paper: "the same CMN model and variational distributions as we use for CAVI-CMN"):

    q(β0_j) = N(m0_j, T0_j T0_jᵀ)                  full covariance per stick (K − 1 of them)
    q(β1_l) = N(m1_l, T1_l T1_lᵀ)                  full covariance per stick (L − 1)
    q(λ_ki) = Gamma(α_ki, rate ρ_ki)               per expert and output dimension
    q(A_ki | λ_ki) = N(M_ki, T_k T_kᵀ / λ_ki)      rows of A_k share a column factor T_k (CAVI's V_k)
    q(x1_n) = N(μ_n, diag(s_n²))                   per point (the authors' BBVI guide)

CAVI keeps q(x1 | z) q(z) per point; here z is summed out in the model and x1 has one Gaussian factor
per point, as in the authors' BBVI code (which uses a matrix-normal factor on a standardised A with an
inverse-gamma on the noise variances instead of the conditional form above). CAVI's shape α_k is
shared by the h dimensions of an expert; here each has its own (a richer family, one more parameter
per dimension). Scales are kept positive by NumPyro's softplus constraints.

Initialisation per restart (from its key): stick weights uniform in ±1/sqrt(fan-in) with zero bias
(as for maximum likelihood), M uniform in (−1, 1) and μ_n uniform in (−1, 1) (the authors' choice),
T0 = T1 = T_k = I/10, s_n = 1/10, and q(λ) = Gamma(a0, b0), the prior (CAVI's initial q(λ) too).

Optimisation: ``optax.adabelief(5e-3)`` on the ``Trace_ELBO(num_particles=8)`` estimate, 20,000 steps
in the paper; restarts are a vmapped batch of SVI runs in one compiled program.

Predictions and WAIC: M draws of the parameters from q per restart; per draw the class probabilities
of the marginal network by Monte Carlo over x1 with S noise draws
(:func:`~fgraph_experiments.baselines.network.log_class_probabilities`); probabilities averaged over draws;
pointwise log-likelihoods (R, M, N) in an ``arviz.InferenceData`` (chain = restart).
"""
from __future__ import annotations

import time
from functools import partial

import numpy as np
import numpyro
import numpyro.distributions as dist
import optax
from numpyro.infer import SVI, Predictive, Trace_ELBO

from fgraph.errors import ModelError

from .network import (
    CMNPriors, jax, jnp, numpyro_model, pointwise_log_likelihood, predictive_probabilities, prediction_inputs,
    prepare_data,
)
from .result import BaselineFit, restart_keys, to_numpy

__all__ = ["fit_bbvi", "guide"]

PARAMETER_SITES = ("beta0", "lam", "A", "beta1")


def _stick_location(n_sticks: int, fan_in: int):
    def init(key):
        bound = 1.0 / np.sqrt(fan_in)
        weights = jax.random.uniform(key, (n_sticks, fan_in), minval=-bound, maxval=bound)
        return jnp.concatenate([weights, jnp.zeros((n_sticks, 1))], axis=1)
    return init


def guide(x0t, y=None, *, n_experts: int, n_classes: int, priors: CMNPriors = CMNPriors()):
    """The variational family of the module docstring, for :func:`numpyro_model`'s sites."""
    N, D = x0t.shape
    K, L = n_experts, n_classes
    h, H = L - 1, L
    lower_cholesky = dist.constraints.softplus_lower_cholesky
    positive = dist.constraints.softplus_positive
    if K > 1:
        loc0 = numpyro.param("beta0_loc", _stick_location(K - 1, D - 1))
        tril0 = numpyro.param("beta0_scale_tril", jnp.broadcast_to(jnp.eye(D) / 10, (K - 1, D, D)),
                              constraint=lower_cholesky)
        numpyro.sample("beta0", dist.MultivariateNormal(loc0, scale_tril=tril0).to_event(1))
    concentration = numpyro.param("lam_concentration", jnp.full((K, h), priors.a0), constraint=positive)
    rate = numpyro.param("lam_rate", jnp.full((K, h), priors.b0), constraint=positive)
    lam = numpyro.sample("lam", dist.Gamma(concentration, rate).to_event(2))
    M = numpyro.param("A_loc", lambda key: jax.random.uniform(key, (K, h, D), minval=-1.0, maxval=1.0))
    column = numpyro.param("A_column_scale_tril", jnp.broadcast_to(jnp.eye(D) / 10, (K, D, D)),
                           constraint=lower_cholesky)
    row_tril = column[:, None] / jnp.sqrt(lam)[..., None, None]  # (K, h, D, D)
    numpyro.sample("A", dist.MultivariateNormal(M, scale_tril=row_tril).to_event(2))
    loc1 = numpyro.param("beta1_loc", _stick_location(L - 1, h))
    tril1 = numpyro.param("beta1_scale_tril", jnp.broadcast_to(jnp.eye(H) / 10, (L - 1, H, H)),
                          constraint=lower_cholesky)
    numpyro.sample("beta1", dist.MultivariateNormal(loc1, scale_tril=tril1).to_event(1))
    x1_loc = numpyro.param("x1_loc", lambda key: jax.random.uniform(key, (N, h), minval=-1.0, maxval=1.0))
    x1_scale = numpyro.param("x1_scale", jnp.full((N, h), 0.1), constraint=positive)
    with numpyro.plate("data", N):
        numpyro.sample("x1", dist.Normal(x1_loc, x1_scale).to_event(1))


def fit_bbvi(x0, y, n_experts: int, n_classes: int | None = None, *, steps: int = 20000, n_restarts: int = 1,
             seed: int = 0, learning_rate: float = 5e-3, num_particles: int = 8, posterior_draws: int = 64,
             x1_draws: int = 16, x_test=None, priors: CMNPriors = CMNPriors(), keys=None) -> BaselineFit:
    """Fit the CMN by black-box VI, ``n_restarts`` restarts in one vmapped program.

    ``x0`` (N, d), ``y`` (N,) labels; ``x_test`` (N*, d) for the predictive probabilities (default:
    the training inputs); ``posterior_draws`` M parameter draws from q per restart and ``x1_draws`` S
    noise draws per point and expert for predictions and log-likelihoods. ``keys`` (R, 2)
    JAX keys override ``seed`` and ``n_restarts``. The trace is the ELBO estimate (R, steps) before
    each step (the negative of NumPyro's loss).
    """
    data = prepare_data(x0, y, n_experts, n_classes)
    if not isinstance(steps, (int, np.integer)) or steps < 1:
        raise ModelError(f"steps must be a whole number ≥ 1, got {steps!r}")
    keys = restart_keys(seed, n_restarts, keys)
    x0t, labels = jnp.asarray(data.x0t), jnp.asarray(data.y)
    x_new = jnp.asarray(prediction_inputs(x_test, data.x0t))
    sizes = {"n_experts": data.n_experts, "n_classes": data.n_classes, "priors": priors}
    model, family = partial(numpyro_model, **sizes), partial(guide, **sizes)
    svi = SVI(model, family, optax.adabelief(learning_rate), Trace_ELBO(num_particles=num_particles))

    def fit_one(key):
        init_key, predict_key = jax.random.split(key)
        state = svi.init(init_key, x0t, labels)

        def step(state, _):
            return svi.update(state, x0t, labels)

        state, losses = jax.lax.scan(step, state, None, length=steps)
        return svi.get_params(state), -losses, predict_key

    started = time.perf_counter()
    compiled = jax.jit(jax.vmap(fit_one)).lower(keys).compile()
    compile_seconds = time.perf_counter() - started
    started = time.perf_counter()
    params, elbo, predict_keys = jax.block_until_ready(compiled(keys))
    run_seconds = time.perf_counter() - started

    h = data.latent_dim

    @jax.jit
    def summarise(restart_params, key):
        draw_key, train_key, test_key = jax.random.split(key, 3)
        draws = Predictive(family, params=restart_params, num_samples=posterior_draws,
                           return_sites=list(PARAMETER_SITES))(draw_key, x0t)
        if data.n_experts == 1:
            draws["beta0"] = jnp.zeros((posterior_draws, 0, x0t.shape[1]))
        train_noise = jax.random.normal(train_key, (x1_draws, x0t.shape[0], data.n_experts, h))
        test_noise = jax.random.normal(test_key, (x1_draws, x_new.shape[0], data.n_experts, h))
        return (predictive_probabilities(draws, x_new, test_noise),
                pointwise_log_likelihood(draws, x0t, labels, train_noise))

    probabilities, log_likelihood = [], []
    for r in range(keys.shape[0]):
        restart_params = jax.tree_util.tree_map(lambda a: a[r], params)
        p, ll = summarise(restart_params, predict_keys[r])
        probabilities.append(np.asarray(p))
        log_likelihood.append(np.asarray(ll))
    log_likelihood = np.stack(log_likelihood)
    import arviz

    return BaselineFit(
        method="bbvi", params=to_numpy(params), trace=np.asarray(elbo), probabilities=np.stack(probabilities),
        log_likelihood=log_likelihood,
        inference_data=arviz.from_dict(log_likelihood={"y": log_likelihood}),
        seconds_per_step=run_seconds / steps, compile_seconds=compile_seconds, run_seconds=run_seconds,
        extra={},
    )
