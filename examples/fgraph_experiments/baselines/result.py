"""What a baseline fit returns (:class:`BaselineFit`) and the restart keys they share."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fgraph.errors import ModelError

from .network import jax


@dataclass
class BaselineFit:
    """One baseline fit of the CMN, all arrays numpy.

    ``method``        "mle", "bbvi" or "nuts".
    ``params``        the fitted parameters, a dict of arrays with a leading axis R (restarts; for
                      NUTS the posterior draws, (chains, draws, …)). MLE: point estimates ``beta0``,
                      ``A``, ``beta1``; BBVI: the variational parameters (NumPyro's names); NUTS: samples.
    ``trace``         (R, steps) objective per step: MLE the negative log-likelihood (the loss), BBVI
                      the ELBO estimate (num_particles draws); NUTS ``None``.
    ``probabilities`` (R, N*, L) predictive class probabilities at the test inputs (the training
                      inputs if none were given); for BBVI and NUTS averaged over posterior draws
                      (NUTS: R = 1, all chains pooled into one posterior).
    ``log_likelihood`` (R, M, N) log p(y_n | x0_n, θ_m) of the training points: MLE M = 1 (the point
                      estimate, gated-mean network); BBVI M draws from q per restart; NUTS
                      (chains, draws, N).
    ``inference_data`` ``arviz.InferenceData`` with a ``log_likelihood`` group (variable ``y``) for
                      BBVI and NUTS (chains = restarts for BBVI: select one restart before WAIC, since
                      ArviZ pools the chains), ``None`` for MLE.
    ``seconds_per_step`` wall time per optimiser step over all restarts at once (compiled, after a
                      warm-up compile; MLE, BBVI), or per NUTS step (warm-up and sampling, compile
                      included) for NUTS.
    ``compile_seconds``, ``run_seconds``: the compile and the run measured separately (NUTS: compile
                      inside the run, ``compile_seconds`` NaN).
    ``extra``         method-specific diagnostics (e.g. NUTS divergences per chain).
    """

    method: str
    params: dict
    trace: np.ndarray | None
    probabilities: np.ndarray
    log_likelihood: np.ndarray
    inference_data: Any
    seconds_per_step: float
    compile_seconds: float
    run_seconds: float
    extra: dict


def restart_keys(seed, n_restarts: int, keys=None):
    """(R, 2) JAX keys: ``keys`` as given, else jax.random.split(PRNGKey(seed), n_restarts)."""
    if keys is not None:
        keys = jax.numpy.asarray(keys)
        if keys.ndim != 2 or keys.shape[1] != 2:
            raise ModelError(f"keys must be (R, 2) JAX keys (jax.random.split), got shape {keys.shape}")
        return keys
    if not isinstance(n_restarts, (int, np.integer)) or n_restarts < 1:
        raise ModelError(f"n_restarts must be a whole number ≥ 1, got {n_restarts!r}")
    return jax.random.split(jax.random.PRNGKey(seed), n_restarts)


def to_numpy(tree):
    """A pytree of JAX arrays as a pytree of numpy arrays."""
    return jax.tree_util.tree_map(np.asarray, tree)
