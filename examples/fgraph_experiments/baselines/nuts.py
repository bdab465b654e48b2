"""The NUTS sampler for the CMN (NumPyro), the gold-standard posterior of the small data sets (paper §4).

The model is :func:`~fgraph_experiments.baselines.network.numpyro_model`: eq. (4)'s priors, z summed out
exactly, the latent x1 sampled per point (as in the authors' NumPyro model). The expert matrices are
sampled non-centred (A = sqrt(v0/λ) · Ã with Ã ~ N(0, 1), NumPyro's ``LocScaleReparam``), which
removes the funnel between A and its precisions λ; the draws are reported in A.

Paper settings: 800 warm-up steps, 16 chains, 64 draws per chain; the chains run vectorised in one
program (``chain_method="vectorized"``), which suits a machine with few cores.

Predictions and WAIC use the marginal network (x1 integrated by Monte Carlo with S noise draws per
point and expert, :func:`~fgraph_experiments.baselines.network.log_class_probabilities`) at every draw of
the parameters (not the sampled x1 of the training points, which would condition on them): the
predictive probabilities average over all chains' draws, the pointwise log-likelihoods
(chains, draws, N) form the ``log_likelihood`` group of the returned ``arviz.InferenceData`` (its
``posterior`` group holds the parameter draws and the sample statistics the divergences).
"""
from __future__ import annotations

import time
from functools import partial

import numpy as np
from numpyro.handlers import reparam
from numpyro.infer import MCMC, NUTS
from numpyro.infer.reparam import LocScaleReparam

from .network import (
    CMNPriors, PARAMETER_NAMES, jax, jnp, numpyro_model, pointwise_log_likelihood, predictive_probabilities,
    prediction_inputs, prepare_data,
)
from .result import BaselineFit, to_numpy

__all__ = ["fit_nuts"]


def fit_nuts(x0, y, n_experts: int, n_classes: int | None = None, *, num_warmup: int = 800, num_samples: int = 64,
             num_chains: int = 16, seed: int = 0, x1_draws: int = 16, x_test=None,
             priors: CMNPriors = CMNPriors(), chain_method: str = "vectorized") -> BaselineFit:
    """Sample the CMN's posterior by NUTS: ``num_chains`` chains of ``num_warmup`` + ``num_samples`` steps.

    ``x0`` (N, d), ``y`` (N,) labels; ``x_test`` (N*, d) for the predictive probabilities (default:
    the training inputs); ``x1_draws`` S noise draws per point and expert for the probabilities and
    log-likelihoods. Returns a :class:`~fgraph_experiments.baselines.result.BaselineFit` with ``params``
    the draws (chains, draws, …) of ``beta0``, ``A``, ``lam``, ``beta1``, probabilities (1, N*, L)
    and log-likelihoods (chains, draws, N); ``extra["divergences"]`` per chain.
    """
    data = prepare_data(x0, y, n_experts, n_classes)
    x0t, labels = jnp.asarray(data.x0t), jnp.asarray(data.y)
    x_new = jnp.asarray(prediction_inputs(x_test, data.x0t))
    model = reparam(partial(numpyro_model, n_experts=data.n_experts, n_classes=data.n_classes, priors=priors),
                    config={"A": LocScaleReparam(centered=0)})
    sampler = MCMC(NUTS(model), num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains,
                   chain_method=chain_method, progress_bar=False)
    run_key, train_key, test_key = jax.random.split(jax.random.PRNGKey(seed), 3)
    started = time.perf_counter()
    sampler.run(run_key, x0t, labels, extra_fields=("diverging",))
    samples = jax.block_until_ready(sampler.get_samples(group_by_chain=True))
    run_seconds = time.perf_counter() - started

    C, S = num_chains, num_samples
    draws = {name: samples[name] for name in PARAMETER_NAMES if name in samples}
    if data.n_experts == 1:
        draws["beta0"] = jnp.zeros((C, S, 0, x0t.shape[1]))
    flat = jax.tree_util.tree_map(lambda a: a.reshape((C * S,) + a.shape[2:]), draws)
    K, h = data.n_experts, data.latent_dim
    train_noise = jax.random.normal(train_key, (x1_draws, x0t.shape[0], K, h))
    test_noise = jax.random.normal(test_key, (x1_draws, x_new.shape[0], K, h))
    probabilities = jax.jit(predictive_probabilities)(flat, x_new, test_noise)
    log_likelihood = np.asarray(jax.jit(pointwise_log_likelihood)(flat, x0t, labels, train_noise)).reshape(C, S, -1)
    divergences = np.asarray(sampler.get_extra_fields(group_by_chain=True)["diverging"]).sum(1)
    import arviz

    posterior = {name: np.asarray(value) for name, value in draws.items() if name != "beta0" or K > 1}
    inference_data = arviz.from_dict(posterior=posterior, log_likelihood={"y": log_likelihood},
                                     sample_stats={"diverging": np.asarray(
                                         sampler.get_extra_fields(group_by_chain=True)["diverging"])})
    return BaselineFit(
        method="nuts", params=to_numpy(draws), trace=None, probabilities=np.asarray(probabilities)[None],
        log_likelihood=log_likelihood, inference_data=inference_data,
        seconds_per_step=run_seconds / (num_warmup + num_samples), compile_seconds=float("nan"),
        run_seconds=run_seconds, extra={"divergences": divergences},
    )
