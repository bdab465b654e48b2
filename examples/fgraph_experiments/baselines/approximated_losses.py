"""Classification losses from Gaussian likelihood approximations of class labels, in JAX, for any JAX model
(Bui, "Likelihood approximations via Gaussian approximate inference", §3.2, eq. (3), Fig. 2 and Appendix C.1).

Every loss is a pure function of the model's outputs ``logits`` f (N, K) and the integer ``labels`` y (N,) in
``0 … K−1`` (or of per-point targets and variances), averaged over the N points, so it can be differentiated,
jitted and vmapped with the model that makes the logits.

The losses
----------
``"exact"`` — softmax cross-entropy, the negative log of the softmax likelihood:

    L = (1/N) Σ_n −log softmax(f_n)_{y_n} = (1/N) Σ_n [logsumexp_k f_nk − f_{n y_n}].

``"gauss"`` — one-hot label regression ("least squares for classification"), the mean squared error of the
logits to the one-hot labels c_n, averaged over all N·K entries:

    L = (1/(N K)) Σ_{n,k} (f_nk − c_nk)².

It is the Gaussian negative log likelihood below with targets ỹ = c and the homoscedastic variance ṽ = K/2,
constants dropped (:func:`loss_tables` builds it that way).

``"laplace"``, ``"variational"``, ``"moment"``, ``"moment-original"`` — heteroscedastic Gaussian regression on
pseudo-observations of the logits. A label y with one-hot c turns the Dirichlet prior Dir(α_ε) over the class
probabilities into Dir(α_ε + c), which is the softmax of independent log ω_k, ω_k ~ Gamma(α_ε,k + c_k, 1); each
log ω_k is approximated by a Gaussian N(ỹ_nk, ṽ_nk) (Laplace, variational, moment matching in the log basis, or
the log-normal moment match in the original basis), and the softmax likelihood by Π_k N(f_nk; ỹ_nk, ṽ_nk). The
loss is the negative log of that product, averaged over the points:

    L = (1/N) Σ_n Σ_k (f_nk − ỹ_nk)² / (2 ṽ_nk)   [ + (1/N) Σ_n Σ_k ½ log(2π ṽ_nk) ].

The bracketed term does not depend on the model (ỹ, ṽ depend on the labels and α_ε only), so it changes no
gradient; it is left out unless ``constant=True`` (then L is the exact Gaussian negative log density). The
gradient is ∂L/∂f_nk = (f_nk − ỹ_nk) / (N ṽ_nk): it vanishes exactly at f = ỹ, and classes whose pseudo-observation
is vague (large ṽ, the classes not observed when α_ε is small) pull their logits only weakly.

The pseudo-observations are those of :func:`fgraph.families.basis_matching.softmax_pseudo_observations` — this
module does not re-derive them. Because ỹ_n and ṽ_n depend on the label y_n only, the K possible rows are computed
once (:func:`pseudo_observation_table`: row y is ``softmax_pseudo_observations(y, K, α_ε, method)``) and indexed
by the labels inside the loss, so that a loss with traced labels can be jitted.

Class probabilities
-------------------
Trained by eq. (3), the network gives a point estimate of the logits, and the paper predicts by warping it through
the softmax (§3.2, "compute ψ based on the point estimate of θ in eq. (3) … and warp them through the softmax
function"): :func:`class_probabilities` is ``softmax(f)`` for every loss. The variances ṽ are the noise of the
approximate *likelihood* of a training label, not an uncertainty about a new point's logits, so they do not enter
the prediction; Monte Carlo over logits belongs to a posterior over the model's parameters (a Bayesian last layer,
eq. (4)), not to this point estimate. For ``"gauss"`` the softmax of outputs regressed onto {0, 1} is a known
under-confident convention; :func:`clipped_probabilities` gives the other common one (outputs clipped to
[floor, 1], renormalised per row).

Shapes: ``logits`` (N, K) floats; ``labels`` (N,) integers; ``targets``, ``variances`` (N, K), variances > 0;
tables (K, K). Every loss returns a scalar.
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax.nn import log_softmax, one_hot, softmax

from fgraph.families.basis_matching import METHODS, softmax_pseudo_observations

__all__ = [
    "APPROXIMATIONS",
    "GAUSSIAN_LOSSES",
    "LOSSES",
    "approximation_loss",
    "class_probabilities",
    "clipped_probabilities",
    "gaussian_nll",
    "loss_tables",
    "make_loss",
    "one_hot_regression",
    "pseudo_observation_table",
    "softmax_cross_entropy",
]

#: The four Gaussian approximations of :mod:`fgraph.families.basis_matching`.
APPROXIMATIONS = METHODS
#: The losses that are Gaussian negative log likelihoods of the logits (one-hot targets or pseudo-observations).
GAUSSIAN_LOSSES = ("gauss",) + APPROXIMATIONS
#: Every loss of this module: the exact softmax cross-entropy first.
LOSSES = ("exact",) + GAUSSIAN_LOSSES


def softmax_cross_entropy(logits, labels):
    """``(1/N) Σ_n −log softmax(f_n)_{y_n}`` for logits (N, K) and labels (N,): the exact softmax likelihood."""
    log_p = log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(log_p, labels[:, None], axis=-1))


def one_hot_regression(logits, labels):
    """``(1/(N K)) Σ_{n,k} (f_nk − c_nk)²``, the mean squared error of logits (N, K) to the one-hot labels (the
    paper's "gauss")."""
    return jnp.mean((logits - one_hot(labels, logits.shape[-1], dtype=logits.dtype)) ** 2)


def gaussian_nll(logits, targets, variances, constant: bool = False):
    """``(1/N) Σ_n Σ_k (f_nk − ỹ_nk)² / (2 ṽ_nk)``, plus ``(1/N) Σ_n Σ_k ½ log(2π ṽ_nk)`` if ``constant``: the
    negative log of ``Π_k N(f_nk; ỹ_nk, ṽ_nk)`` averaged over the points. All arrays (N, K), variances > 0."""
    per_point = jnp.sum((logits - targets) ** 2 / (2.0 * variances), axis=-1)
    if constant:
        per_point = per_point + 0.5 * jnp.sum(jnp.log(2.0 * jnp.pi * variances), axis=-1)
    return jnp.mean(per_point)


def pseudo_observation_table(n_classes: int, alpha_epsilon=0.1, method: str = "moment") -> tuple:
    """The pseudo-observations of every label: ``(targets, variances)``, numpy arrays (K, K) whose row y is
    ``softmax_pseudo_observations(y, K, alpha_epsilon, method)`` (ỹ and ṽ of a point depend on its label only).
    ``alpha_epsilon`` a scalar or (K,) (> 0); ``method`` one of :data:`APPROXIMATIONS`."""
    return softmax_pseudo_observations(np.arange(n_classes), n_classes, alpha_epsilon, method)


def loss_tables(name: str, n_classes: int, alpha_epsilon=0.1) -> tuple:
    """``(targets, variances)`` (K, K) for a Gaussian loss of :data:`GAUSSIAN_LOSSES`, row y for label y:
    the pseudo-observation table of an approximation, or for ``"gauss"`` the identity (the one-hot labels) with
    every variance K/2, which makes :func:`gaussian_nll` the mean squared error :func:`one_hot_regression`
    (``alpha_epsilon`` is not used)."""
    if name == "gauss":
        return np.eye(n_classes), np.full((n_classes, n_classes), n_classes / 2.0)
    if name not in APPROXIMATIONS:
        raise ValueError(f"unknown Gaussian loss {name!r}; choose from {', '.join(GAUSSIAN_LOSSES)}")
    return pseudo_observation_table(n_classes, alpha_epsilon, name)


def approximation_loss(logits, labels, targets_table, variances_table, constant: bool = False):
    """:func:`gaussian_nll` of logits (N, K) at the rows of the tables (K, K) picked by ``labels`` (N,): the loss of
    eq. (3) without the prior, jittable in the labels."""
    return gaussian_nll(logits, targets_table[labels], variances_table[labels], constant)


def make_loss(name: str, n_classes: int, alpha_epsilon=0.1, constant: bool = False):
    """The loss ``name`` (one of :data:`LOSSES`) as a function ``loss(logits (N, K), labels (N,)) -> scalar``.
    ``alpha_epsilon`` (scalar or (K,), > 0) is used by the four approximations only; ``constant`` adds the
    Gaussian normalising constant to the approximations' loss."""
    if name == "exact":
        return softmax_cross_entropy
    if name == "gauss":
        return one_hot_regression
    if name not in APPROXIMATIONS:
        raise ValueError(f"unknown loss {name!r}; choose from {', '.join(LOSSES)}")
    targets, variances = (jnp.asarray(table) for table in pseudo_observation_table(n_classes, alpha_epsilon, name))

    def loss(logits, labels):
        return approximation_loss(logits, labels, targets, variances, constant)

    loss.__name__ = f"{name.replace('-', '_')}_loss"
    return loss


def class_probabilities(logits):
    """``softmax(f)`` (N, K): the predictive class probabilities of a point estimate, for every loss."""
    return softmax(logits, axis=-1)


def clipped_probabilities(outputs, floor: float = 1e-6):
    """Regression outputs (N, K) read as probabilities by clipping to ``[floor, 1]`` and renormalising each row:
    the other convention for ``"gauss"``."""
    clipped = jnp.clip(outputs, floor, 1.0)
    return clipped / jnp.sum(clipped, axis=-1, keepdims=True)
