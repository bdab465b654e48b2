"""Logistic (Bernoulli-logit) factor node, Pólya-Gamma augmented for VMP.

    f(out, coefficients, input) = σ(ψ)^out (1 − σ(ψ))^(1 − out),   ψ = βᵀ x̃,   x̃ = [x; 1],

with ``out`` ∈ {0, 1}, ``coefficients`` β a vector of dimension d + 1 (the
last entry is the bias: the node appends the 1 to the input) and ``input``
x a vector of dimension d: known (an array of shape ``(N, d)`` makes a plate
of N factors, one per row) or latent (e.g. a multivariate normal).

**Augmentation.** With b = 1, κ = out − ½ (Polson, Scott and Windle 2013),

    f = e^{out·ψ} / (1 + e^ψ) = ½ e^{κψ} E_{PG(ω|1,0)}[e^{−ωψ²/2}],

Gaussian in ψ given ω. With q(ω) = PG(1, ξ) (an exponential tilt of the
prior, :mod:`fgraph.families.polya_gamma`), averaging the augmented
log-factor and subtracting KL(PG(1, ξ) ‖ PG(1, 0)) = −E[ω]ξ²/2 + log cosh(ξ/2)
gives, with E[ω] = tanh(ξ/2)/(2ξ),

    E_q[log f(·, ω)] − KL = κE[ψ] − log 2 − log cosh(ξ/2) − E[ω](E[ψ²] − ξ²)/2,

the Jaakkola–Jordan bound on log σ(±ψ) at ξ: a lower bound on
E_q[log f] for every ξ, tight in ξ at ξ = c = sqrt(E[ψ²]), E[ψ²] =
tr(E[ββᵀ] E[x̃x̃ᵀ]) over the full marginals of β and x (not plug-in means),
where it is ``κE[ψ] − log 2 − log cosh(c/2)``.

**The interface ``xi``.** The tilt ξ of q(ω) is the node's fourth
interface: a variable of its own (created by :func:`Logistic`, named
``<name>_xi``, batch of the plate) whose marginal is a point mass, updated
by its rule to the optimum c for the current marginals of β and x. A VMP
sweep is then coordinate descent on one free energy: the update of ξ is its
exact minimiser, the update of β (or x) the exact minimiser given q(ω).
So the free energy stays an upper bound on −log p(y) and never increases.
(The messages to β need E[ω] at the current q(β); the ξ variable carries
it from the previous update of ξ, which the sweep makes right after β's.)
The first sweep needs ξ before anything has computed it: the node declares
ξ = 0 as its initial value (``default_initial``), which starts q(ω) at its
prior PG(1, 0) (E[ω] = 1/4, Böhning's bound); ``init={"<name>_xi":
PointMass(c)}`` starts it elsewhere.

**Messages** (E[ω] = tanh(ξ/2)/(2ξ), mean-field):

* to ``coefficients``: ``exp(κ E[x̃]ᵀβ − ½ E[ω] βᵀE[x̃x̃ᵀ]β)``, natural
  parameters (κE[x̃], −½E[ω]E[x̃x̃ᵀ]) — rank one for a known input, so a
  :class:`~fgraph.families.mvnormal.GaussianLikelihood`; over a plate of known
  inputs it carries the sums ``X̃ᵀκ`` and ``X̃ᵀ diag(E[ω]) X̃`` that the
  reduction onto a global β reads, its N elements made only if asked
  (:class:`~fgraph.families.gaussian_plate.GaussianLikelihoodOnDemand`);
* to ``input``, with β = [w; β₀]: ψ² = xᵀwwᵀx + 2β₀wᵀx + β₀², so
  ``exp((κE[w] − E[ω]E[wβ₀])ᵀx − ½ E[ω] xᵀE[wwᵀ]x)``;
* to ``out``: only κ = out − ½ depends on out, so ``exp(out · E[ψ])`` up to a
  constant: Bernoulli with log-odds E[ψ] = E[β]ᵀE[x̃];
* to ``xi``: the point mass at ``c = sqrt(E[ψ²])``.

**Average energy** (per element): ``U = −(κE[ψ] − log 2 − log cosh(ξ/2) −
E[ω](E[ψ²] − ξ²)/2)`` with κ = E[out] − ½: the node's term of the free
energy, KL of q(ω) included (the point mass ξ has no entropy of its own).
After ξ's update it is ``−(κE[ψ] − log 2 − log cosh(c/2))``.

The node is variational only (no sum-product rule: the exact messages are
not Gaussian): ``variational_only`` keeps it mean-field under ``algorithm="bp"`` too.

**Gaussian likelihood approximations** (operators ``"laplace"``,
``"variational"``, ``"moment"``, ``"moment-original"``, chosen with
``operator=`` or ``constraints={"operator": {name: ...}}``): instead of the
augmentation, an observed label y is replaced by a Gaussian pseudo-observation
of the logit, the logit-basis Gaussian ``N(ψ; m, v)`` of the posterior
``Beta(α_ε + y, β_ε + 1 − y)``
(:func:`fgraph.families.basis_matching.logistic_pseudo_observations`; the
node's ``alpha_epsilon`` and ``beta_epsilon``, 0.1 and β_ε = α_ε by default).
The factor is then Gaussian in ψ = βᵀx̃: its messages are those above with
κ → m/v and E[ω] → 1/v, ``exp((m/v) E[x̃]ᵀβ − ½ (1/v) βᵀE[x̃x̃ᵀ]β)``, so
Bayesian logistic regression becomes Gaussian regression with heteroscedastic
noise v (exact after one sweep for a Gaussian prior on β and known inputs),
and its average energy is ``−E[log N(ψ; m, v)] = ½ log 2πv + (m² − 2m E[ψ] +
E[ψ²]) / (2v)``. The labels must be observed under these operators; ``xi``
is not read.
"""
from __future__ import annotations

import math

import numpy as np

from fgraph.errors import ModelError
from fgraph.families import Distribution, PointMass, basis_matching
from fgraph.families.base import compressed
from fgraph.families.linalg import quadratic_forms, quadratic_forms_of_rows, row_outer_products
from fgraph.families.polya_gamma import LOG_2, log_cosh_half
from fgraph.families.polya_gamma import mean as polya_gamma_mean
from fgraph.model import Model, PerCopy, Variable, plate_of, random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy
from fgraph.support import BINARY

__all__ = ["Logistic", "LogisticNode"]


class LogisticNode(FactorNode):
    """``out ~ Bernoulli(σ(βᵀ[x; 1]))``: β on ``coefficients`` (event ``(d+1,)``), x on ``input`` (``(d,)``),
    the tilt ξ of q(ω) = PG(1, ξ) on ``xi`` (scalar, per element)."""

    interfaces = ("out", "coefficients", "input", "xi")
    event_ndims = {"out": 0, "coefficients": 1, "input": 1, "xi": 0}
    support = {"out": BINARY}
    default_factorization = "mf"
    variational_only = True  # mean-field messages without log-scales: mean-field under "bp" too
    #: ξ = 0 before the first update: q(ω) starts at its prior PG(1, 0), E[ω] = 1/4 (Böhning's bound)
    default_initial = {"xi": PointMass(0.0)}


#: The Gaussian likelihood approximations the node offers as operators, next to Pólya-Gamma VMP (no operator).
APPROXIMATIONS = basis_matching.METHODS

#: The Beta prior's shapes α_ε = β_ε of the approximations when the node is given none.
DEFAULT_EPSILON = 0.1


def Logistic(name, coefficients, input, observed=None, batch_shape=None, power=1.0, intercept=True, operator=None,
             alpha_epsilon=DEFAULT_EPSILON, beta_epsilon=None):
    """The binary variable ``name ~ Bernoulli(σ(coefficientsᵀ [input; 1]))``.

    ``coefficients`` is a vector variable of dimension d + 1 (e.g. an
    ``MvNormal`` prior; the last entry multiplies the appended 1, the bias)
    or a known vector; ``input`` a known array of shape ``(d,)`` or ``(N, d)``
    (one factor per row: a plate of N) or a latent vector variable of
    dimension d. ``observed`` binds the labels (0/1 or booleans), shape the
    plate's. ``intercept=False`` drops the appended 1 (ψ = βᵀx, β of
    dimension d). Also creates the variable ``<name>_xi`` (the tilt of q(ω),
    see the module), which starts at 0 unless ``init={"<name>_xi": ...}`` says otherwise.
    ``operator`` one of :data:`APPROXIMATIONS` replaces the Pólya-Gamma
    augmentation by that Gaussian likelihood approximation, with the Beta
    prior's ``alpha_epsilon`` and ``beta_epsilon`` (> 0; β_ε = α_ε if None).
    """
    for label, value in (("alpha_epsilon", alpha_epsilon), ("beta_epsilon", beta_epsilon)):
        if value is not None and not (isinstance(value, (int, float, np.number)) and not isinstance(value, bool)
                                      and np.isfinite(value) and value > 0):
            raise ModelError(f"Logistic {name!r}: {label} must be a positive number, got {value!r}")
    if operator is not None and observed is None:
        raise ModelError(f"Logistic {name!r}: operator {operator!r} replaces observed labels by Gaussian "
                         "pseudo-observations; pass observed= (the labels), or use the Pólya-Gamma node (no operator) "
                         "for latent labels")
    dimension = vector_dimension(coefficients, "coefficients", f"Logistic {name!r}")
    input_dimension = vector_dimension(input, "input", f"Logistic {name!r}")
    intercept = bool(intercept)
    if intercept and input_dimension != dimension - 1:
        raise ModelError(
            f"Logistic {name!r}: input has dimension {input_dimension}, but coefficients has dimension "
            f"{dimension} = d + 1 (the last coefficient is the bias); give input a last axis of length {dimension - 1}"
        )
    if not intercept and input_dimension != dimension:
        raise ModelError(f"Logistic {name!r}: without an intercept input and coefficients need one dimension; "
                         f"got {input_dimension} and {dimension}")
    plates = [plate_of(coefficients, 1), plate_of(input, 1)]
    if observed is not None and observed is not True and observed is not False:
        plates.append(plate_of(observed, 0))
    xi = add_tilt_variable(name, f"Logistic {name!r}", plates, batch_shape, ())
    epsilon = {"alpha_epsilon": float(alpha_epsilon),
               "beta_epsilon": float(alpha_epsilon if beta_epsilon is None else beta_epsilon)}
    if operator is not None:
        epsilon["operator"] = operator
    return random_variable(LogisticNode, name, {"coefficients": coefficients, "input": input, "xi": xi}, observed,
                           batch_shape, power, event_shape=(), intercept=intercept, **epsilon)


def add_tilt_variable(name: str, where: str, plates: list, batch_shape, event_shape: tuple):
    """The variable ``<name>_xi`` of a Pólya-Gamma node's tilts, over the plate its arguments broadcast to.

    ``plates`` are the plates of the coefficients, the input and the labels;
    ``where`` names the node for the error when they do not broadcast.
    """
    shapes = list(plates) + ([tuple(batch_shape)] if batch_shape is not None else [])
    try:
        plate = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ModelError(f"{where}: the batch shapes of the coefficients, input, the labels and batch_shape "
                         f"{shapes} do not broadcast together") from None
    return Model.current().add_variable(f"{name}_xi", plate, event_shape)


def vector_dimension(value, interface: str, where: str) -> int:
    """The length k of a vector argument: a vector variable's event ``(k,)``, a value's last axis.

    ``where`` names the node for the error (``"Logistic 'y'"``).
    """
    if isinstance(value, Variable):
        if len(value.event_shape) != 1:
            raise ModelError(f"{where}: {interface} must be a vector variable (event shape (k,)), "
                             f"got {value.name!r} with event shape {value.event_shape}")
        return value.event_shape[0]
    shape = np.shape(value.value if isinstance(value, PerCopy) else value)
    if len(shape) < 1:
        raise ModelError(f"{where}: {interface} must be a vector or an array of rows (shape (..., k)), "
                         f"got a scalar")
    return shape[-1]


# ----------------------------------------------------------------- expectations


def has_intercept(node) -> bool:
    """Whether the node appends the 1 to its input (its ``intercept`` attribute, default yes)."""
    return getattr(node, "intercept", True)


def augmented_rows(q_input: PointMass, intercept: bool = True) -> np.ndarray:
    """``x̃ = [x; 1]`` for known inputs (x itself without an intercept), shape ``batch + (D,)``.

    Kept on the point mass (data: once per run); data broadcast over copies of a model stays one array.
    """
    if not intercept:
        return q_input.value
    return q_input._kept("_augmented_rows", with_bias_column)


def augmented_row_outer(q_input: PointMass, intercept: bool = True) -> np.ndarray | None:
    """x̃_n x̃_nᵀ flattened, ``(N, D²)``, for known inputs shared by every copy, kept on the point mass; ``None``
    where they are per copy or too many (:func:`fgraph.families.linalg.row_outer_products`)."""
    return q_input._kept(f"_augmented_row_outer_{intercept}",
                         lambda _: row_outer_products(augmented_rows(q_input, intercept)))


def with_bias_column(rows: np.ndarray) -> np.ndarray:
    """``[x, 1]`` along the last axis; axes along which ``rows`` is broadcast (stride 0) stay broadcast."""
    distinct = compressed(rows)
    augmented = np.concatenate([distinct, np.ones(distinct.shape[:-1] + (1,))], axis=-1)
    return np.broadcast_to(augmented, rows.shape[:-1] + augmented.shape[-1:]) if distinct is not rows else augmented


def augmented_moments(q_input: Distribution, intercept: bool = True) -> tuple:
    """``(E[x̃], E[x̃x̃ᵀ])`` for x̃ = [x; 1]: ``[[E[xxᵀ], E[x]], [E[x]ᵀ, 1]]``, shapes ``batch + (D,)``, ``batch + (D, D)``."""
    if isinstance(q_input, PointMass):
        rows = augmented_rows(q_input, intercept)
        return rows, rows[..., :, None] * rows[..., None, :]
    mean, second = np.asarray(q_input.mean), np.asarray(q_input.second_moment)
    if not intercept:
        return mean, second
    batch, d = mean.shape[:-1], mean.shape[-1]
    augmented_mean = np.concatenate([mean, np.ones(batch + (1,))], axis=-1)
    augmented_second = np.empty(batch + (d + 1, d + 1))
    augmented_second[..., :d, :d] = second
    augmented_second[..., :d, d] = mean
    augmented_second[..., d, :d] = mean
    augmented_second[..., d, d] = 1.0
    return augmented_mean, augmented_second


def expected_logit(q_coefficients: Distribution, q_input: Distribution, intercept: bool = True) -> np.ndarray:
    """``E[ψ] = E[β]ᵀ E[x̃]`` under independent marginals, shape ``batch``."""
    rows = (augmented_rows(q_input, intercept) if isinstance(q_input, PointMass)
            else augmented_moments(q_input, intercept)[0])
    return np.einsum("...i,...i->...", rows, np.asarray(q_coefficients.mean))


def expected_squared_logit(q_coefficients: Distribution, q_input: Distribution, intercept: bool = True) -> np.ndarray:
    """``E[ψ²] = tr(E[ββᵀ] E[x̃x̃ᵀ])`` under independent marginals, shape ``batch``.

    For known inputs ``x̃ᵀ E[ββᵀ] x̃`` row by row: one ``(N, D) @ (D, D)``
    product, no N D×D matrices. Kept on q(β) for q(x): the tilts' update and
    the free energy read it for the same marginals.
    """
    second = np.asarray(q_coefficients.second_moment)
    if isinstance(q_input, PointMass):  # kept: the tilts' update and the free energy read it with the same data
        return q_coefficients.derived_with(f"_expected_squared_logit_{intercept}", (q_input,),
                                           lambda: _known_input_quadratic_forms(q_input, intercept, second))
    return q_coefficients.derived_with(f"_expected_squared_logit_{intercept}", (q_input,), lambda: np.einsum(
        "...ij,...ij->...", second, augmented_moments(q_input, intercept)[1]))


def _known_input_quadratic_forms(q_input: PointMass, intercept: bool, matrices: np.ndarray) -> np.ndarray:
    """``x̃_nᵀ S x̃_n`` for known rows (``batch + (D,)``, the plate last) and matrices constant along the plate
    (``batch + (D, D)`` with a unit plate axis), shape the broadcast batch."""
    rows = augmented_rows(q_input, intercept)
    if matrices.ndim < 4 or math.prod(matrices.shape[:-3]) == 1:
        # one matrix for the plate: X S (one product) and a row-wise dot; the outer products of the rows (N D²
        # numbers, made once per run) pay off only when many matrices read them at once (the copies of a model)
        return quadratic_forms(rows, matrices)
    outer = augmented_row_outer(q_input, intercept)
    if outer is None or matrices.shape[-3] != 1:
        return quadratic_forms(rows, matrices)
    forms = quadratic_forms_of_rows(outer, matrices[..., 0, :, :])  # (..., N): one matrix product
    return np.broadcast_to(forms, np.broadcast_shapes(rows.shape[:-1], matrices.shape[:-2]))


def label_weight(q_out: Distribution) -> np.ndarray:
    """``κ = E[out] − ½`` (b = 1): the weight of ψ in the augmented factor."""
    return np.asarray(q_out.mean) - 0.5


def expected_omega(q_xi: Distribution) -> np.ndarray:
    """``E[ω] = tanh(ξ/2)/(2ξ)`` under q(ω) = PG(1, ξ), shape ``batch``."""
    return polya_gamma_mean(1.0, q_xi.mean)


def pseudo_observations(q_out: PointMass, node, method: str) -> tuple:
    """``(m/v, 1/v, m, v)`` of the labels' Gaussian pseudo-observations ``N(ψ; m, v)`` by ``method`` (one of
    :data:`APPROXIMATIONS`) with the node's α_ε, β_ε, each of the labels' shape; kept on the labels' point mass
    (data: once per run)."""
    alpha = getattr(node, "alpha_epsilon", DEFAULT_EPSILON)
    beta = getattr(node, "beta_epsilon", alpha)

    def compute(labels):
        mean, variance = basis_matching.logistic_pseudo_observations(labels, alpha, beta, method)
        return mean / variance, 1.0 / variance, mean, variance

    return q_out._kept(f"_pseudo_observations_{method}_{alpha!r}_{beta!r}", compute)


def _pseudo_observation_energy(method: str):
    def energy(q_out: PointMass, q_coefficients: Distribution, q_input: Distribution, q_xi: Distribution, node):
        """``−E[log N(ψ; m, v)] = ½ log 2πv + (m² − 2m E[ψ] + E[ψ²]) / (2v)`` (see the module)."""
        _, _, mean, variance = pseudo_observations(q_out, node, method)
        intercept = has_intercept(node)
        squared_error = (mean * mean - 2.0 * mean * expected_logit(q_coefficients, q_input, intercept)
                         + expected_squared_logit(q_coefficients, q_input, intercept))
        return 0.5 * np.log(2.0 * np.pi * variance) + 0.5 * squared_error / variance

    energy.__name__ = energy.__qualname__ = f"pseudo_observation_energy[{method}]"
    return energy


for _method in APPROXIMATIONS:
    average_energy(LogisticNode, operator=_method)(_pseudo_observation_energy(_method))


@average_energy(LogisticNode)
def _logistic_energy(q_out: Distribution, q_coefficients: Distribution, q_input: Distribution, q_xi: Distribution,
                     node):
    """``−(κE[ψ] − log 2 − log cosh(ξ/2) − E[ω](E[ψ²] − ξ²)/2)``, κ = E[out] − ½ (see the module)."""
    intercept = has_intercept(node)
    xi = np.asarray(q_xi.mean)
    slack = expected_squared_logit(q_coefficients, q_input, intercept) - xi * xi
    return (LOG_2 + log_cosh_half(xi) + 0.5 * expected_omega(q_xi) * slack
            - label_weight(q_out) * expected_logit(q_coefficients, q_input, intercept))
