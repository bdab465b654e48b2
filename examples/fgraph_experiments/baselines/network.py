"""The conditional mixture network in JAX: densities, predictive probabilities and the NumPyro model.

The model is the one of the numpy CAVI reference (``fgraph/testing/cmn_reference.py``). For N points
x0 (d inputs, x̃0 = [x0; 1], D = d + 1), labels y ∈ {0..L−1}, K experts, h = L − 1 (H = h + 1):

    z  | x0      ~ stick-breaking logistic, K − 1 sticks ψ0_j = β0_jᵀ x̃0          (the gate)
    x1 | z = k   ~ N(A_k x̃0, Λ_k⁻¹),  Λ_k = diag(λ_k1..λ_kh)                     (the experts)
    y  | x1      ~ stick-breaking logistic, L − 1 sticks ψ1_l = β1_lᵀ x̃1           (the output)
    β0_j ~ N(0, σ0² I_D),  β1_l ~ N(0, σ1² I_H),  row i of A_k | λ_ki ~ N(0, v0 I_D / λ_ki),
    λ_ki ~ Gamma(a0, rate b0),      eq. (4): v0 = 10, a0 = 2, b0 = 1, σ0 = σ1 = 5.

Stick-breaking, 0-based: p(c | ψ) = σ(ψ_c) Π_{j<c} σ(−ψ_j), the last class taking all sticks'
σ(−ψ_j). (The authors' code shifts stick j's logit by −log(C − j) so that zero logits give equal
class probabilities; the paper's model and the reference have no shift, and neither has this one.)

Parameters are a dict of arrays (a pytree): ``beta0`` (K−1, D), ``A`` (K, h, D), ``lam`` (K, h)
precisions, ``beta1`` (L−1, H); a batch of them (posterior draws, restarts) has leading axes.

Two ways of reading the network:

* **Marginal** (the Bayesian fits): p(y | x0, θ) = Σ_k p(z = k | x0, β0) ∫ N(x1; A_k x̃0, Λ_k⁻¹)
  p(y | x1, β1) dx1. The integral over x1 has no closed form (logistic output); it is estimated by
  Monte Carlo with S fixed standard-normal draws ε_s per point and expert, x1 = A_k x̃0 + Λ_k^{−½} ε_s
  (:func:`log_class_probabilities`). The probabilities are unbiased; their logarithm (pointwise
  log-likelihoods for WAIC) is biased low by about Var/(2p²), which S controls.
* **Gated mean** (maximum likelihood, as in the authors' MLE code): x1 = Σ_k p(z = k | x0, β0) A_k x̃0,
  a deterministic mixture-of-experts forward pass, and p(y | x0) = p(y | x1, β1)
  (:func:`gated_mean_log_probabilities`). The expert noise Λ does not enter it.

The NumPyro model (:func:`numpyro_model`) keeps x1 as a latent site per point (z summed out
exactly: x1's prior is the K-component mixture), as the authors' NumPyro model does; NUTS samples
it and black-box VI gives it a Gaussian factor.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import numpyro  # noqa: E402
import numpyro.distributions as dist  # noqa: E402
from jax.scipy.special import logsumexp  # noqa: E402

from fgraph.errors import DataError, ModelError  # noqa: E402
from fgraph.models.cmn.priors import CMNPriors  # noqa: E402

__all__ = [
    "CMNPriors", "CMNData", "prepare_data", "prediction_inputs", "stick_log_probabilities", "gate_log_probabilities",
    "expert_means", "output_log_probabilities", "gated_mean_log_probabilities", "log_class_probabilities",
    "predictive_probabilities", "pointwise_log_likelihood", "numpyro_model", "PARAMETER_NAMES",
]

PARAMETER_NAMES = ("beta0", "A", "lam", "beta1")


@dataclass(frozen=True)
class CMNData:
    """Checked training data: ``x0t`` (N, D) = [x0, 1], ``y`` (N,) int labels, sizes K, L, h = L − 1."""

    x0t: np.ndarray
    y: np.ndarray
    n_experts: int
    n_classes: int

    @property
    def latent_dim(self) -> int:
        return self.n_classes - 1


def with_bias(x0, name: str = "x0") -> np.ndarray:
    """[x0, 1] for x0 (N, d) finite floats, checked; (N, d + 1)."""
    x = np.asarray(x0, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] == 0:
        raise DataError(f"{name} must be a non-empty (N, d) array, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise DataError(f"{name} has NaN or infinite values; impute or drop them before fitting")
    return np.concatenate([x, np.ones((x.shape[0], 1))], axis=1)


def prediction_inputs(x_test, x0t) -> np.ndarray:
    """[x_test, 1] (N*, D) checked against the training inputs x̃0 (N, D); ``x0t`` itself if ``x_test`` is None."""
    if x_test is None:
        return np.asarray(x0t)
    x_new = with_bias(x_test, "x_test")
    if x_new.shape[1] != np.shape(x0t)[1]:
        raise DataError(f"x_test has {x_new.shape[1] - 1} features, the training data {np.shape(x0t)[1] - 1}")
    return x_new


def prepare_data(x0, y, n_experts, n_classes=None) -> CMNData:
    """Check the training data and sizes; ``n_classes`` defaults to max(y) + 1 (at least 2)."""
    x0t = with_bias(x0)
    labels = np.asarray(y)
    if labels.shape != (x0t.shape[0],):
        raise DataError(f"y must be (N,) = ({x0t.shape[0]},) labels, got shape {labels.shape}")
    if not np.issubdtype(labels.dtype, np.integer):
        if not np.all(np.isfinite(labels)) or np.any(labels != np.round(labels)):
            raise DataError("y must hold whole-number class labels 0..L−1")
        labels = labels.astype(np.int64)
    if not isinstance(n_experts, numbers.Integral) or n_experts < 1:
        raise ModelError(f"n_experts must be a whole number ≥ 1, got {n_experts!r}")
    L = int(labels.max()) + 1 if n_classes is None else n_classes
    if not isinstance(L, numbers.Integral) or L < 2:
        raise ModelError(f"n_classes must be a whole number ≥ 2, got {n_classes!r}")
    if labels.min() < 0 or labels.max() >= L:
        raise DataError(f"y has labels outside 0..{L - 1}")
    return CMNData(x0t, labels.astype(np.int64), int(n_experts), int(L))


# ----------------------------------------------------------------------------- densities
def stick_log_probabilities(psi):
    """log p(class | ψ) for stick logits ψ (…, C−1) → (…, C) (C − 1 = 0 sticks gives log 1 = 0)."""
    log_on, log_off = jax.nn.log_sigmoid(psi), jax.nn.log_sigmoid(-psi)
    pad = jnp.zeros(psi.shape[:-1] + (1,), psi.dtype)
    return jnp.concatenate([pad, jnp.cumsum(log_off, -1)], -1) + jnp.concatenate([log_on, pad], -1)


def gate_log_probabilities(beta0, x0t):
    """log p(z = k | x0, β0) for β0 (K−1, D), x̃0 (N, D) → (N, K)."""
    return stick_log_probabilities(x0t @ beta0.T)


def expert_means(A, x0t):
    """A_k x̃0 for A (K, h, D), x̃0 (N, D) → (N, K, h)."""
    return jnp.einsum("kid,nd->nki", A, x0t)


def output_log_probabilities(beta1, x1):
    """log p(y | x1, β1) for β1 (L−1, H), x1 (…, h) → (…, L); ψ1 = W x1 + bias (β1 = [W, bias])."""
    return stick_log_probabilities(x1 @ beta1[:, :-1].T + beta1[:, -1])


def gated_mean_log_probabilities(params, x0t):
    """log p(y | x0) of the gated-mean network (maximum likelihood): x1 = Σ_k π_k A_k x̃0, (N, L).

    ``params`` needs ``beta0``, ``A``, ``beta1`` (``lam`` is not used)."""
    gate = jnp.exp(gate_log_probabilities(params["beta0"], x0t))  # (N, K)
    x1 = jnp.einsum("nk,nki->ni", gate, expert_means(params["A"], x0t))
    return output_log_probabilities(params["beta1"], x1)


def log_class_probabilities(params, x0t, noise):
    """log p(y = c | x0, θ) of the marginal network, (N, L), by Monte Carlo over x1 (module doc).

    ``noise`` (S, N, K, h) standard-normal draws ε: x1_nks = A_k x̃0_n + ε_snk / sqrt(λ_k);
    the result is log[(1/S) Σ_s Σ_k p(z = k | x0_n) p(c | x1_nks)] (exact in z, Monte Carlo in x1).
    """
    log_gate = gate_log_probabilities(params["beta0"], x0t)  # (N, K)
    x1 = expert_means(params["A"], x0t) + noise / jnp.sqrt(params["lam"])  # (S, N, K, h)
    log_out = output_log_probabilities(params["beta1"], x1)  # (S, N, K, L)
    return logsumexp(log_gate[..., None] + log_out, axis=(0, 2)) - jnp.log(noise.shape[0])


def _over_draws(function, draws, batch_size: int):
    """``function`` mapped over the leading axis of the pytree ``draws``, ``batch_size`` at a time."""
    return jax.lax.map(function, draws, batch_size=batch_size)


def predictive_probabilities(draws, x0t, noise, batch_size: int = 16):
    """p(y | x0, data) ≈ (1/M) Σ_m p(y | x0, θ_m) over M parameter draws (leading axis of each array
    in ``draws``), (N, L); each term by :func:`log_class_probabilities` with the same ``noise``."""
    logs = _over_draws(lambda theta: log_class_probabilities(theta, x0t, noise), draws, batch_size)
    return jnp.exp(logsumexp(logs, axis=0) - jnp.log(logs.shape[0]))


def pointwise_log_likelihood(draws, x0t, y, noise, batch_size: int = 16):
    """log p(y_n | x0_n, θ_m) per draw and point, (M, N), for WAIC (marginal network, Monte Carlo in x1)."""
    def one(theta):
        return jnp.take_along_axis(log_class_probabilities(theta, x0t, noise), y[:, None], axis=1)[:, 0]
    return _over_draws(one, draws, batch_size)


# ----------------------------------------------------------------------------- NumPyro model
def numpyro_model(x0t, y=None, *, n_experts: int, n_classes: int, priors: CMNPriors = CMNPriors()):
    """The CMN as a NumPyro model with sites ``beta0`` (K−1, D; absent when K = 1), ``lam`` (K, h),
    ``A`` (K, h, D), ``beta1`` (L−1, H), the latent ``x1`` (N, h) in a plate ``data`` with its
    mixture prior Σ_k p(z = k | x0) N(A_k x̃0, Λ_k⁻¹) (z summed out), and the observed ``y``."""
    N, D = x0t.shape
    K, L = n_experts, n_classes
    h = L - 1
    if K > 1:
        gate_means = jnp.asarray(priors.stick_prior_means(K - 1, D))  # (zeros unless the sticks' prior bias)
        beta0 = numpyro.sample("beta0", dist.Normal(gate_means, priors.sigma0).to_event(2))
    else:
        beta0 = jnp.zeros((0, D))
    lam = numpyro.sample("lam", dist.Gamma(priors.a0, priors.b0).expand([K, h]).to_event(2))
    row_scale = jnp.sqrt(priors.v0 / lam)[..., None] * jnp.ones(D)  # (K, h, D)
    A = numpyro.sample("A", dist.Normal(0.0, row_scale).to_event(3))
    out_means = jnp.asarray(priors.stick_prior_means(L - 1, h + 1))
    beta1 = numpyro.sample("beta1", dist.Normal(out_means, priors.sigma1).to_event(2))
    log_gate = gate_log_probabilities(beta0, x0t)  # (N, K)
    experts = dist.Normal(expert_means(A, x0t), 1.0 / jnp.sqrt(lam)).to_event(1)  # batch (N, K), event h
    with numpyro.plate("data", N):
        x1 = numpyro.sample("x1", dist.MixtureSameFamily(dist.Categorical(logits=log_gate), experts))
        numpyro.sample("y", dist.Categorical(logits=output_log_probabilities(beta1, x1)), obs=y)
