"""Softmax (multinomial logistic) factor node under Gaussian likelihood approximations.

Over K classes k = 0..K−1, with K logits ψ_k = β_kᵀ x̃, x̃ = [x; 1] (x itself
with ``intercept=False``),

    f(out, coefficients1 … coefficientsK, input) = Π_k softmax(ψ)_k^{out_k},   softmax(ψ)_k = e^{ψ_k} / Σ_j e^{ψ_j},

``out`` the class as a one-hot vector of length K (observed integer labels are
made one-hot by the constructor). ``coefficients1 … coefficientsK`` are the K
class coefficient vectors β_0 … β_{K−1} (dimension d + 1, the bias last), one
variable each (a variadic group: rules see ``q_coefficients`` as a tuple in
class order, see :mod:`fgraph.nodes.stick_breaking_logistic` for why one variable per
class); ``input`` is x (dimension d), known (an array ``(N, d)`` makes a plate)
or latent (a multivariate normal: the rules read only E[x̃] and E[x̃x̃ᵀ]).

**Gaussian likelihood approximations** (Bui, "Likelihood approximations via
Gaussian approximate inference", §3.2; Milios et al. 2018). The softmax
likelihood is not Gaussian in ψ; instead, an observed label y with one-hot c
turns a prior Dir(α_ε) over the class probabilities into Dir(α_ε + c), the
softmax of independent log ω_k, ω_k ~ Gamma(α_ε,k + c_k, 1). A Gaussian
N(m_k, v_k) approximating each log ω_k
(:func:`fgraph.families.basis_matching.softmax_pseudo_observations`) is a
*pseudo-observation* of logit k, and the node's factor becomes

    f̃(ψ) = Π_k N(ψ_k; m_k, v_k),

K independent Gaussian likelihoods of the logits. How (m_k, v_k) are made is
the node's **operator**, one of :data:`APPROXIMATIONS` (``"laplace"``,
``"variational"``, ``"moment"`` (default), ``"moment-original"``), chosen with
``operator=`` or ``constraints={"operator": {name: ...}}``; ``alpha_epsilon``
(> 0, a number or one per class, 0.1 by default) is the Dirichlet prior. The
pseudo-observations are computed once per run and kept on the labels' point
mass. Since they replace the labels, the labels must be observed.

There is **no Pólya-Gamma rule** (no operator-free rule set) for this node: the
softmax has no Pólya-Gamma augmentation with independent tilts. For VMP in the
exact multinomial model use :class:`~fgraph.nodes.stick_breaking_logistic.StickBreakingLogistic`.
The node has no ``xi`` interface.

**Messages** (mean-field; per class, each the logistic node's Gaussian message with the
weight of ψ_k → m_k/v_k and the weight of ψ_k²/2 → 1/v_k, see :mod:`fgraph.rules.logistic.approximations`):

* to ``coefficients<k+1>``: ``exp((m_k/v_k) E[x̃]ᵀβ_k − ½ (1/v_k) β_kᵀE[x̃x̃ᵀ]β_k)``; over a plate of known
  inputs it carries the sums ``X̃ᵀ(m_{·k}/v_{·k})`` and ``X̃ᵀ diag(1/v_{·k}) X̃``. It reads no other class's
  coefficients (``messages_independent_of``): with known inputs and Gaussian priors one sweep is the exact
  posterior of K independent Bayesian linear regressions of the targets m_{·k} on x̃ with noise variances v_{·k};
* to ``input``, with β_k = [w_k; β_k0]: the product over k,
  ``exp(Σ_k ((m_k/v_k) E[w_k] − E[w_k β_k0]/v_k)ᵀx − ½ xᵀ(Σ_k E[w_kw_kᵀ]/v_k)x)``;
* to ``out``: none (the labels are observed).

**Average energy** (per plate element): ``U = −E[log f̃] = Σ_k [½ log 2πv_k + (m_k² − 2m_k E[ψ_k] +
E[ψ_k²]) / (2v_k)]``, E[ψ_k] = E[β_k]ᵀE[x̃], E[ψ_k²] = tr(E[β_kβ_kᵀ] E[x̃x̃ᵀ]).

**Predictions.** A Gaussian q(ψ) of the logits gives class probabilities E[softmax(ψ)], which has no closed
form; :func:`predictive_probabilities` estimates it by Monte Carlo.

The node is variational only (``variational_only``): its messages carry no log-scales, so under
``algorithm="bp"`` it stays mean-field and its free-energy term is the average energy above, as under VMP.
"""
from __future__ import annotations

import numpy as np

from fgraph.errors import ModelError
from fgraph.families import Distribution, PointMass, basis_matching
from fgraph.model import random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy
from fgraph.support import ONE_HOT
from fgraph.nodes.categorical import one_hot_observations
from fgraph.nodes.logistic import has_intercept, vector_dimension
from fgraph.nodes.stick_breaking_logistic import coefficient_list, expected_logits, expected_squared_logits

__all__ = ["Softmax", "SoftmaxNode", "predictive_probabilities"]

#: The Gaussian likelihood approximations the node offers, one operator each (there is no default rule set).
APPROXIMATIONS = basis_matching.METHODS

#: The Dirichlet prior's concentration α_ε of the approximations when the node is given none.
DEFAULT_EPSILON = 0.1

#: The operator of a node constructed without one.
DEFAULT_OPERATOR = "moment"


class SoftmaxNode(FactorNode):
    """``out ~ Cat(softmax(β_kᵀ[x; 1]))`` under a Gaussian likelihood approximation: the class one-hot on ``out``
    (event ``(K,)``), x on ``input`` (``(d,)``), β_k on ``coefficients<k+1>`` (``(d+1,)``), k = 0..K−1."""

    interfaces = ("out", "input")
    variadic = ("coefficients", "coefficients")
    event_ndims = {"out": 1, "input": 1, "coefficients": 1}
    support = {"out": ONE_HOT}
    default_factorization = "mf"
    variational_only = True  # mean-field messages without log-scales: mean-field under "bp" too
    #: the approximate factor is a product over the classes: class k's message reads no other class's coefficients
    messages_independent_of = {"coefficients": ("coefficients",)}

    def check_event_shapes(self, event_shapes: dict) -> None:
        classes = [event_shapes[i] for i in self.interfaces if i.startswith("coefficients")]
        if len(classes) < 2:
            raise ValueError(f"a softmax node needs K >= 2 classes (one coefficients vector each), got {len(classes)}")
        if event_shapes["out"] != (len(classes),):
            raise ValueError(f"out has event shape {event_shapes['out']}, but {len(classes)} coefficient vectors make "
                             f"{len(classes)} classes (one-hot vectors of length {len(classes)})")
        dimension = event_shapes["input"][0] + has_intercept(self)
        wrong = [(k, s) for k, s in enumerate(classes, 1) if s != (dimension,)]
        if wrong:
            k, shape = wrong[0]
            raise ValueError(f"coefficients{k} has event shape {shape}; with an input of dimension "
                             f"{event_shapes['input'][0]} expected ({dimension},)"
                             + (" (the last entry is the bias)" if has_intercept(self) else ""))


def Softmax(name, coefficients, input, observed=None, batch_shape=None, power=1.0, intercept=True,
            operator=DEFAULT_OPERATOR, alpha_epsilon=DEFAULT_EPSILON):
    """The observed class ``name`` ∈ {0..K−1} (one-hot, event ``(K,)``) of a softmax regression, each label
    replaced by K Gaussian pseudo-observations of the logits (see the module).

    ``coefficients`` lists the K class coefficient vectors, each a vector
    variable of dimension d + 1 (e.g. an ``MvNormal`` prior; the last entry
    multiplies the appended 1, the bias) or a known vector; a known array of
    shape ``(K, d+1)`` is split into its rows. ``input`` is a known array of
    shape ``(d,)`` or ``(N, d)`` (one factor per row: a plate of N) or a latent
    vector variable of dimension d. ``observed`` (required) binds the classes as
    integer labels in 0..K−1 (shape of the plate) or one-hot rows (plate +
    ``(K,)``), or is ``True`` to bind them later (then give ``batch_shape``
    and bind one-hot rows: data bound later is not converted). ``intercept=False`` drops the
    appended 1 (β_k of dimension d). ``operator`` is one of :data:`APPROXIMATIONS`
    (default ``"moment"``); ``alpha_epsilon`` (> 0, a number or an array of
    shape ``(K,)``) the Dirichlet prior of the pseudo-observations. There is no
    Pólya-Gamma (operator-free) rule set: for VMP in the exact model use
    :class:`~fgraph.nodes.stick_breaking_logistic.StickBreakingLogistic`.
    """
    where = f"Softmax {name!r}"
    if observed is None or observed is False:
        raise ModelError(f"{where}: observed= (the labels) is required: the Gaussian likelihood approximations replace "
                         "observed labels by pseudo-observations of the logits; for latent classes use "
                         "StickBreakingLogistic")
    if operator is None:
        raise ModelError(f"{where}: operator must be one of {', '.join(APPROXIMATIONS)}; the softmax node has no "
                         "Pólya-Gamma rule set (use StickBreakingLogistic for VMP in the exact model)")
    if not isinstance(operator, str) or operator not in APPROXIMATIONS:
        raise ModelError(f"{where}: unknown operator {operator!r}; operators: {', '.join(APPROXIMATIONS)}")
    classes = _classes(coefficients, name)
    alpha = _alpha_epsilon(alpha_epsilon, len(classes), where)
    dimensions = {vector_dimension(beta, f"coefficients{k}", where) for k, beta in enumerate(classes, 1)}
    if len(dimensions) > 1:
        raise ModelError(f"{where}: the class coefficient vectors have different dimensions {sorted(dimensions)}; "
                         "give every class d + 1 coefficients")
    dimension = dimensions.pop()
    input_dimension = vector_dimension(input, "input", where)
    intercept = bool(intercept)
    if input_dimension + intercept != dimension:
        bias = " (the last coefficient is the bias)" if intercept else " (no intercept)"
        raise ModelError(f"{where}: input has dimension {input_dimension}, but the coefficients have dimension "
                         f"{dimension}{bias}; give input a last axis of length {dimension - intercept}")
    if observed is not True:
        observed = one_hot_observations(name, observed, len(classes))
    parameters = {"input": input}
    parameters.update({f"coefficients{k}": beta for k, beta in enumerate(classes, 1)})
    return random_variable(SoftmaxNode, name, parameters, observed, batch_shape, power, event_shape=(len(classes),),
                           intercept=intercept, operator=operator, alpha_epsilon=alpha)


def _classes(coefficients, name: str) -> list:
    """The K class coefficients: a list/tuple as given, or the rows of a known array ``(K, D)``."""
    return coefficient_list(coefficients, f"Softmax {name!r}", "class", "K", 2, "at least two coefficient vectors")


def _alpha_epsilon(value, classes: int, where: str):
    """α_ε as a float (one for every class) or a tuple of K floats (hashable: it names the kept pseudo-observations)."""
    if isinstance(value, (bool, np.bool_, str, bytes)):
        raise ModelError(f"{where}: alpha_epsilon must be a positive number or {classes} of them, got {value!r}")
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"{where}: alpha_epsilon must be a positive number or {classes} of them, "
                         f"got {value!r}") from None
    if array.ndim not in (0, 1) or (array.ndim == 1 and array.shape[0] != classes):
        raise ModelError(f"{where}: alpha_epsilon must be a positive number or an array of shape ({classes},) "
                         f"(one per class), got shape {array.shape}")
    if not np.all(np.isfinite(array)) or np.any(array <= 0):
        raise ModelError(f"{where}: alpha_epsilon must be a positive number or {classes} of them, got {value!r}")
    return float(array) if array.ndim == 0 else tuple(float(a) for a in array)


# ----------------------------------------------------------------- pseudo-observations


def pseudo_observations(q_out: PointMass, node, method: str) -> tuple:
    """``(m/v, 1/v, m, v)`` of the labels' K Gaussian pseudo-observations ``N(ψ_k; m_k, v_k)`` by ``method`` (one of
    :data:`APPROXIMATIONS`) with the node's α_ε, each of shape ``labels + (K,)``; kept on the labels' point mass
    (data: once per run)."""
    alpha = getattr(node, "alpha_epsilon", DEFAULT_EPSILON)

    def compute(one_hot):
        one_hot = np.asarray(one_hot)
        labels = np.argmax(one_hot, axis=-1)
        mean, variance = basis_matching.softmax_pseudo_observations(labels, one_hot.shape[-1], np.asarray(alpha),
                                                                    method)
        mean, variance = np.asarray(mean, dtype=float), np.asarray(variance, dtype=float)
        return mean / variance, 1.0 / variance, mean, variance

    return q_out._kept(f"_softmax_pseudo_observations_{method}_{alpha!r}", compute)


def _pseudo_observation_energy(method: str):
    def energy(q_out: PointMass, q_input: Distribution, q_coefficients: Distribution, node):
        """``Σ_k [½ log 2πv_k + (m_k² − 2m_k E[ψ_k] + E[ψ_k²]) / (2v_k)]`` (see the module)."""
        _, precision, mean, variance = pseudo_observations(q_out, node, method)
        intercept = has_intercept(node)
        squared_error = (mean * mean - 2.0 * mean * expected_logits(q_coefficients, q_input, intercept)
                         + expected_squared_logits(q_coefficients, q_input, intercept))
        return np.sum(0.5 * np.log(2.0 * np.pi * variance) + 0.5 * squared_error * precision, axis=-1)

    energy.__name__ = energy.__qualname__ = f"softmax_pseudo_observation_energy[{method}]"
    return energy


for _method in APPROXIMATIONS:
    average_energy(SoftmaxNode, operator=_method)(_pseudo_observation_energy(_method))


# ----------------------------------------------------------------- predictions


def predictive_probabilities(means, variances, n_samples: int = 100_000, seed: int = 0,
                             return_standard_error: bool = False, chunk: int = 10_000):
    """``E[softmax(ψ)]`` for independent ``ψ_k ~ N(means_k, variances_k)``, by Monte Carlo.

    ``means`` and ``variances`` (≥ 0) broadcast to ``batch + (K,)``; the
    result has that shape and sums to 1 along the last axis. The estimate is
    the average of softmax(μ + σ ⊙ z_s) over ``n_samples`` standard normal
    draws z_s ∈ R^K from ``numpy.random.default_rng(seed)``: common random
    numbers, the same draws for every batch element and every call with the
    same seed and ``n_samples`` (deterministic, and smooth in the means and
    variances, so differences between inputs are estimated with less noise
    than the values). The draws are taken ``chunk`` at a time (memory
    ``chunk × batch × K``) without changing them.

    **Error.** The estimate is unbiased; its standard error for class k is
    ``sd(softmax(ψ)_k) / sqrt(n_samples) <= 1 / (2 sqrt(n_samples))`` (a
    variable in [0, 1] has variance at most 1/4): at most 1.6e-3 for the
    default 10⁵ draws, 5e-4 for 10⁶; smaller where the variances are small
    (exact, zero error, where they are all 0). ``return_standard_error=True``
    also returns the estimated standard errors (sample sd / sqrt(n_samples)),
    same shape.
    """
    means, variances = np.broadcast_arrays(np.asarray(means, dtype=float), np.asarray(variances, dtype=float))
    if means.ndim < 1 or means.shape[-1] < 1:
        raise ValueError(f"means and variances need a last (class) axis, got shape {means.shape}")
    if not (np.all(np.isfinite(means)) and np.all(np.isfinite(variances))) or np.any(variances < 0):
        raise ValueError("means must be finite and variances finite and >= 0")
    if int(n_samples) < 1:
        raise ValueError(f"n_samples must be at least 1, got {n_samples!r}")
    n_samples, chunk = int(n_samples), max(int(chunk), 1)
    classes = means.shape[-1]
    scales = np.sqrt(variances)
    rng = np.random.default_rng(seed)
    total = np.zeros(means.shape)
    squares = np.zeros(means.shape)
    done = 0
    while done < n_samples:
        size = min(chunk, n_samples - done)
        z = rng.standard_normal((size, classes)).reshape((size,) + (1,) * (means.ndim - 1) + (classes,))
        logits = means + scales * z
        logits = logits - np.max(logits, axis=-1, keepdims=True)
        weights = np.exp(logits)
        probabilities = weights / np.sum(weights, axis=-1, keepdims=True)
        total += np.sum(probabilities, axis=0)
        if return_standard_error:
            squares += np.sum(probabilities * probabilities, axis=0)
        done += size
    estimate = total / n_samples
    if not return_standard_error:
        return estimate
    variance = np.maximum(squares / n_samples - estimate * estimate, 0.0) * n_samples / max(n_samples - 1, 1)
    return estimate, np.sqrt(variance / n_samples)
