"""Stick-breaking multinomial logistic factor node, Pólya-Gamma augmented for VMP.

Over K classes j = 0..K−1 (0-based), with K − 1 logits ψ_k = β_kᵀ x̃, x̃ = [x; 1],
one per *stick* k = 0..K−2,

    p(y = j | ψ) = σ(ψ_j) Π_{k<j} σ(−ψ_k)   (j < K − 1),      p(y = K−1 | ψ) = Π_{k<K−1} σ(−ψ_k):

class j breaks stick j off what the sticks before it left (Linderman, Johnson
and Adams 2015). Every factor is a logistic term,

    p(y = j | ψ) = Π_k e^{a_k(j) ψ_k} / (1 + e^{ψ_k})^{b_k(j)},   b_k(j) = [k ≤ j],   a_k(j) = [k = j],

with b_k(j) = 1 for the sticks the class reaches and 0 for the others (their
factor is 1). ``out`` is the class as a one-hot vector of length K (as
everywhere in the engine: observed integer labels are made one-hot by the
constructor, and a latent class is a ``Categorical`` variable, e.g. the gate
of a mixture of experts); ``coefficients1 … coefficients(K−1)`` are the K − 1
stick coefficient vectors (dimension d + 1, the bias last), one variable
each; ``input`` is x (dimension d), known (an array ``(N, d)`` makes a plate)
or latent (a multivariate normal, or a mixture of them: the rules read only
E[x̃] and E[x̃x̃ᵀ]).

**Why one variable per stick.** The optimal mean-field posterior over the
coefficients factorises over the sticks, q(β) = Π_k N(β_k; μ_k, Σ_k): given
q(y), q(x) and the tilts, stick k's message depends on no other stick. Each
β_k is then a variable of its own, a global one over the plate, whose
equality node reduces the plate's messages by their sums (the rule gives
``X̃ᵀκ_k`` and ``X̃ᵀ diag(w_k) X̃`` directly, so N (d+1)×(d+1) matrices are
never formed). One variable of batch ``(K−1,)`` would be the same posterior,
but its batch does not broadcast against the plate of the labels (the
stick axis is not a plate axis), so the sticks are a variadic group of
interfaces (rules see ``q_coefficients`` as a tuple in stick order).

**Augmentation and bound.** For each stick (Polson, Scott and Windle 2013),
with κ_k = a_k − b_k/2 = [k = j] − [k ≤ j]/2,

    e^{a_k ψ} / (1 + e^ψ)^{b_k} = 2^{−b_k} e^{κ_k ψ} E_{PG(ω|b_k,0)}[e^{−ωψ²/2}].

With q(ω_k | y) = PG(b_k(y), ξ_k), the tilt ξ_k shared by the classes, the
bound of :mod:`fgraph.nodes.logistic` holds for each b_k ∈ {0, 1} (for b_k = 0 both
sides are κ_kψ_k = 0), so averaging over q(y) gives, with the expectations
E[b_k] = P(y ≥ k) = Σ_{j≥k} p_j and E[κ_k] = p_k − E[b_k]/2 under
q(y) = Cat(p) (b and κ are linear in the one-hot y),

    E_q[log f] ≥ Σ_k [E[κ_k] E[ψ_k] − E[b_k] (log 2 + log cosh(ξ_k/2) + ω̄_k (E[ψ_k²] − ξ_k²)/2)],

ω̄_k = tanh(ξ_k/2)/(2ξ_k) (E[ω] of PG(1, ξ_k)), E[ψ_k²] = tr(E[β_kβ_kᵀ] E[x̃x̃ᵀ]).
It is tight in ξ_k at ξ_k = c_k = sqrt(E[ψ_k²]) (where the last term
vanishes) whatever E[b_k] is. The node's average energy is minus this,
per plate element.

**The interface ``xi``.** The tilts are the node's interface ``xi``: a
variable created with the node (``<name>_xi``, batch of the plate, event
``(K−1,)``) whose marginal is a point mass at c = (c_0 … c_{K−2}), set by its
rule. A VMP sweep is coordinate descent on one free energy, which never
increases. The node declares ξ = 0 as its starting value (q(ω) at the prior,
ω̄ = 1/4); ``init={"<name>_xi": PointMass(values, 1)}`` starts it elsewhere.

**Messages** (mean-field; w_k = E[b_k] ω̄_k is the weight of ψ_k²/2):

* to ``coefficients_k``: ``exp(E[κ_k] E[x̃]ᵀβ_k − ½ w_k β_kᵀE[x̃x̃ᵀ]β_k)``;
* to ``input``, with β_k = [v_k; β₀_k]: ``exp(Σ_k (E[κ_k]E[v_k] − w_k E[v_k β₀_k])ᵀx − ½ xᵀ(Σ_k w_k E[v_kv_kᵀ])x)``;
* to ``out``: Categorical with ``log m(j) = Σ_k [κ_k(j) E[ψ_k] − b_k(j) g_k]``,
  ``g_k = log 2 + log cosh(ξ_k/2) + ω̄_k (E[ψ_k²] − ξ_k²)/2``, i.e.
  ``log m(j) = Σ_{k<j} (−E[ψ_k]/2 − g_k) + [j < K−1] (E[ψ_j]/2 − g_j)``
  (the bound is linear in the one-hot y, so this is its exact coordinate step);
* to ``xi``: the point mass at ``c_k = sqrt(E[ψ_k²])``.

With K = 2 the node is :class:`~fgraph.nodes.logistic.LogisticNode` with the label
flipped (class 0 is the event of probability σ(ψ_0)).

The node is variational only: ``variational_only`` keeps it mean-field under ``algorithm="bp"`` too.
"""
from __future__ import annotations

import numpy as np

from fgraph.errors import ModelError
from fgraph.families import Distribution, PointMass
from fgraph.families.base import compressed
from fgraph.families.linalg import quadratic_forms_of_rows
from fgraph.families.polya_gamma import LOG_2, log_cosh_half
from fgraph.families.polya_gamma import mean as polya_gamma_mean
from fgraph.model import Variable, plate_of, random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy
from fgraph.support import ONE_HOT
from fgraph.nodes.categorical import one_hot_observations
from fgraph.nodes.logistic import (
    add_tilt_variable,
    augmented_row_outer,
    augmented_rows,
    expected_logit,
    expected_squared_logit,
    has_intercept,
    vector_dimension,
)

__all__ = ["StickBreakingLogistic", "StickBreakingLogisticNode"]


def _zero_tilts(variable) -> PointMass:
    """ξ = 0 for every stick: q(ω_k) starts at its prior, ω̄ = 1/4 (Böhning's bound)."""
    return PointMass(np.zeros(variable.event_shape), 1)


class StickBreakingLogisticNode(FactorNode):
    """``out ~ Cat(stick-breaking σ(β_kᵀ[x; 1]))``: the class one-hot on ``out`` (event ``(K,)``), x on ``input``
    (``(d,)``), the tilts on ``xi`` (``(K−1,)``) and β_k on ``coefficients<k+1>`` (``(d+1,)``), k = 0..K−2."""

    interfaces = ("out", "input", "xi")
    variadic = ("coefficients", "coefficients")
    event_ndims = {"out": 1, "input": 1, "xi": 1, "coefficients": 1}
    support = {"out": ONE_HOT}
    default_factorization = "mf"
    variational_only = True  # mean-field messages without log-scales: mean-field under "bp" too
    default_initial = {"xi": _zero_tilts}
    #: the bound is a sum over the sticks: stick k's message reads no other stick's coefficients; the
    #: optimal tilts c_k = sqrt(E[ψ_k²]) do not depend on the class
    messages_independent_of = {"coefficients": ("coefficients",), "xi": ("out",)}

    def check_event_shapes(self, event_shapes: dict) -> None:
        sticks = [event_shapes[i] for i in self.interfaces if i.startswith("coefficients")]
        if not sticks:
            raise ValueError("a stick-breaking logistic node needs K >= 2 classes: at least one coefficients vector")
        classes = len(sticks) + 1
        if event_shapes["out"] != (classes,):
            raise ValueError(f"out has event shape {event_shapes['out']}, but {len(sticks)} sticks make "
                             f"{classes} classes (one-hot vectors of length {classes})")
        if event_shapes["xi"] != (classes - 1,):
            raise ValueError(f"xi has event shape {event_shapes['xi']}; expected ({classes - 1},), one tilt per stick")
        dimension = event_shapes["input"][0] + has_intercept(self)
        wrong = [(k, s) for k, s in enumerate(sticks, 1) if s != (dimension,)]
        if wrong:
            k, shape = wrong[0]
            raise ValueError(f"coefficients{k} has event shape {shape}; with an input of dimension "
                             f"{event_shapes['input'][0]} expected ({dimension},)"
                             + (" (the last entry is the bias)" if has_intercept(self) else ""))


def StickBreakingLogistic(name, coefficients, input, observed=None, batch_shape=None, power=1.0, intercept=True):
    """The class ``name`` ∈ {0..K−1} (one-hot, event ``(K,)``) of a stick-breaking multinomial logistic regression.

    ``coefficients`` lists the K − 1 stick coefficient vectors, each a vector
    variable of dimension d + 1 (e.g. an ``MvNormal`` prior; the last entry
    multiplies the appended 1, the bias) or a known vector; a known array of
    shape ``(K−1, d+1)`` is split into its rows. ``input`` is a known array of
    shape ``(d,)`` or ``(N, d)`` (one factor per row: a plate of N) or a latent
    vector variable of dimension d. ``observed`` binds the classes as integer
    labels in 0..K−1 (shape of the plate) or one-hot rows (plate + ``(K,)``).
    ``intercept=False`` drops the appended 1 (β_k of dimension d).
    Also creates the variable ``<name>_xi`` (the tilts, event ``(K−1,)``, see
    the module), which starts at 0 unless ``init={"<name>_xi": ...}`` says otherwise.
    """
    sticks = _sticks(coefficients, name)
    classes = len(sticks) + 1
    dimensions = {vector_dimension(stick, f"coefficients{k}", f"StickBreakingLogistic {name!r}") for k, stick in enumerate(sticks, 1)}
    if len(dimensions) > 1:
        raise ModelError(f"StickBreakingLogistic {name!r}: the stick coefficient vectors have different dimensions "
                         f"{sorted(dimensions)}; give every stick d + 1 coefficients")
    dimension = dimensions.pop()
    input_dimension = vector_dimension(input, "input", f"StickBreakingLogistic {name!r}")
    intercept = bool(intercept)
    if input_dimension + intercept != dimension:
        bias = " (the last coefficient is the bias)" if intercept else " (no intercept)"
        raise ModelError(f"StickBreakingLogistic {name!r}: input has dimension {input_dimension}, but the coefficients "
                         f"have dimension {dimension}{bias}; give input a last axis of length {dimension - intercept}")
    if observed is not None and observed is not True and observed is not False:
        observed = one_hot_observations(name, observed, classes)
    plates = [plate_of(stick, 1) for stick in sticks] + [plate_of(input, 1)]
    if observed is not None and observed is not True and observed is not False:
        plates.append(plate_of(observed, 1))
    xi = add_tilt_variable(name, f"StickBreakingLogistic {name!r}", plates, batch_shape, (classes - 1,))
    parameters = {"input": input, "xi": xi}
    parameters.update({f"coefficients{k}": stick for k, stick in enumerate(sticks, 1)})
    return random_variable(StickBreakingLogisticNode, name, parameters, observed, batch_shape, power,
                           event_shape=(classes,), intercept=intercept)


def _sticks(coefficients, name: str) -> list:
    """The K − 1 stick coefficients: a list/tuple as given, or the rows of a known array ``(K−1, D)``."""
    return coefficient_list(coefficients, f"StickBreakingLogistic {name!r}", "stick", "K − 1", 1,
                            "at least one stick (K − 1 coefficient vectors)")


def coefficient_list(coefficients, where: str, unit: str, count: str, minimum: int, needed: str) -> list:
    """One coefficient vector per ``unit`` (stick, class): a list/tuple as given, or the rows of a known array
    ``(count, D)``; at least ``minimum`` of them (``needed`` says so in the error). ``where`` names the node."""
    if isinstance(coefficients, Variable):
        raise ModelError(
            f"{where}: coefficients must list one vector variable per {unit} ({count} of them), got the single "
            f"variable {coefficients.name!r}; e.g. [MvNormal(f'beta{{k}}', ...) for k in range({count.replace(' ', '')})]"
        )
    if isinstance(coefficients, (list, tuple)):
        vectors = list(coefficients)
    else:
        array = np.asarray(coefficients, dtype=float)
        if array.ndim != 2:
            raise ModelError(f"{where}: known coefficients must be an array of shape ({count}, d + 1), one row per "
                             f"{unit}, or a list; got shape {array.shape}")
        vectors = list(array)
    if len(vectors) < minimum:
        raise ModelError(f"{where}: K >= 2 classes need {needed}; got {len(vectors) or 'none'}")
    return vectors


# ----------------------------------------------------------------- expectations


def stick_weights(q_out: Distribution) -> tuple:
    """``(E[b_k], E[κ_k])`` for k = 0..K−2, shapes ``batch + (K−1,)``.

    Under q(y) = Cat(p): ``E[b_k] = P(y ≥ k) = Σ_{j≥k} p_j`` (the stick is
    reached) and ``E[κ_k] = p_k − E[b_k]/2``; exact 0/1 and ±½ for a one-hot y.
    """
    def weights():
        p = np.asarray(q_out.mean)
        reached = np.cumsum(p[..., ::-1], axis=-1)[..., ::-1][..., :-1]
        return reached, p[..., :-1] - 0.5 * reached
    return q_out.derived("_stick_weights", weights)  # read by every stick's message


def expected_logits(q_coefficients: tuple, q_input: Distribution, intercept: bool = True) -> np.ndarray:
    """``E[ψ_k] = E[β_k]ᵀE[x̃]`` for every stick, shape ``batch + (K−1,)``.

    For known rows, one matrix product for every stick, kept on the first stick's marginal (the message to
    ``out`` and the free energy read it)."""
    if isinstance(q_input, PointMass):
        return q_coefficients[0].derived_with(f"_logits_of_sticks_{intercept}", tuple(q_coefficients[1:]) + (q_input,),
                                              lambda: _logits_of_known_rows(q_coefficients, q_input, intercept))
    return _stacked([expected_logit(q, q_input, intercept) for q in q_coefficients])


def _logits_of_known_rows(q_coefficients: tuple, q_input: PointMass, intercept: bool) -> np.ndarray:
    rows = augmented_rows(q_input, intercept)
    means = np.stack(np.broadcast_arrays(*(np.asarray(q.mean) for q in q_coefficients)), axis=-1)  # (..., D, J)
    distinct = compressed(rows)
    if means.ndim < 3 or means.shape[-3] != 1 or distinct.ndim < 2 or distinct.shape[-2] != rows.shape[-2]:
        return _stacked([expected_logit(q, q_input, intercept) for q in q_coefficients])
    logits = distinct @ means[..., 0, :, :]  # (..., N, J): rows constant along the copies, means along the plate
    return np.broadcast_to(logits, np.broadcast_shapes(rows.shape[:-1], means.shape[:-2]) + logits.shape[-1:])


def expected_squared_logits(q_coefficients: tuple, q_input: Distribution, intercept: bool = True) -> np.ndarray:
    """``E[ψ_k²] = tr(E[β_kβ_kᵀ] E[x̃x̃ᵀ])`` for every stick, shape ``batch + (K−1,)`` (known rows: no D×D per row).

    For known rows with kept outer products, every stick's quadratic forms are one matrix product, kept on the
    first stick's marginal for the tilts' update and the free energy."""
    if isinstance(q_input, PointMass) and augmented_row_outer(q_input, intercept) is not None:
        return q_coefficients[0].derived_with("_squared_logits_of_sticks", tuple(q_coefficients[1:]) + (q_input,),
                                              lambda: _squared_logits_of_known_rows(q_coefficients, q_input, intercept))
    return _stacked([expected_squared_logit(q, q_input, intercept) for q in q_coefficients])


def _squared_logits_of_known_rows(q_coefficients: tuple, q_input: PointMass, intercept: bool) -> np.ndarray:
    seconds = np.broadcast_arrays(*(np.asarray(q.second_moment) for q in q_coefficients))
    if seconds[0].ndim < 3 or seconds[0].shape[-3] != 1:  # not constant along the plate: stick by stick
        return _stacked([expected_squared_logit(q, q_input, intercept) for q in q_coefficients])
    stacked = np.stack([second[..., 0, :, :] for second in seconds], axis=-3)  # (..., J, D, D)
    forms = np.moveaxis(quadratic_forms_of_rows(augmented_row_outer(q_input, intercept), stacked), -2, -1)
    rows = augmented_rows(q_input, intercept)
    return np.broadcast_to(forms, np.broadcast_shapes(rows.shape[:-1], seconds[0].shape[:-2]) + forms.shape[-1:])


def _stacked(per_stick: list) -> np.ndarray:
    return np.stack(np.broadcast_arrays(*per_stick), axis=-1)


def tilt_weights(q_xi: Distribution) -> tuple:
    """``(ξ, ω̄)``: the tilts and ``ω̄_k = tanh(ξ_k/2)/(2ξ_k)``, E[ω] under PG(1, ξ_k), shapes ``batch + (K−1,)``."""
    xi = np.asarray(q_xi.mean)
    return xi, q_xi.derived("_polya_gamma_mean", lambda: polya_gamma_mean(1.0, xi))  # read by every stick's message


def reach_costs(q_coefficients: tuple, q_input: Distribution, q_xi: Distribution, intercept: bool = True) -> np.ndarray:
    """``g_k = log 2 + log cosh(ξ_k/2) + ω̄_k (E[ψ_k²] − ξ_k²)/2``: minus the bound's terms of a reached stick
    other than κψ, shape ``batch + (K−1,)``."""
    xi, omega = tilt_weights(q_xi)
    slack = expected_squared_logits(q_coefficients, q_input, intercept) - xi * xi
    return LOG_2 + log_cosh_half(xi) + 0.5 * omega * slack


@average_energy(StickBreakingLogisticNode)
def _stick_breaking_energy(q_out: Distribution, q_input: Distribution, q_xi: Distribution,
                           q_coefficients: Distribution, node):
    """``−Σ_k [E[κ_k] E[ψ_k] − E[b_k] g_k]``, g_k = log 2 + log cosh(ξ_k/2) + ω̄_k (E[ψ_k²] − ξ_k²)/2 (see the module)."""
    intercept = has_intercept(node)
    reached, weight = stick_weights(q_out)
    costs = reach_costs(q_coefficients, q_input, q_xi, intercept)
    return np.sum(reached * costs - weight * expected_logits(q_coefficients, q_input, intercept), axis=-1)
