"""Linear experts gated by a switch: f(out, switch, input, parameters) = Π_k N(out | A_k x̃, Λ_k⁻¹)^{switch_k}.

``switch`` z is one-hot over K experts, ``input`` x a known vector of
dimension d (``x̃ = [x; 1]``, D = d + 1 with the intercept; ``x̃ = x``
without), ``out`` y a vector of dimension h, and ``parameters`` the K pairs
``(A_k, λ_k)`` — A_k of shape ``(h, D)``, ``Λ_k = diag(λ_k)`` — with a
matrix-normal–gamma marginal (:class:`~fgraph.families.matrix_normal_gamma.MatrixNormalGamma`,
typically the prior :func:`~fgraph.nodes.matrix_normal_gamma.MatrixNormalGamma`).
These are the experts of a conditional mixture network (Heins et al.,
§3.3–3.4, Appendix B): ``y | z = k ~ N(A_k x̃, Λ_k⁻¹)``.

**Shapes.** Over a plate of N inputs (``input`` of shape ``(N, d)``) the
output and the switch have batch ``(N,)``; the parameters variable has batch
``(K, 1)`` — one pair per expert, with a unit axis for the plate. In general
the plate may have several axes and the parameters batch ``(K,) + P``, P as
long as the plate with 1 where the pairs are shared and the plate's size where
each copy has its own: over a plate ``(R, N)`` of R independent copies of a
model (random restarts), parameters of batch ``(K, R, 1)``. In a model with
copies (``fg.Model(copies=R)``) the declarations stay those of one copy. The
node's own batch is ``(K,) + plate`` (after the copy axes); its messages to ``out``, ``switch`` (and
``input``) have the plate's batch, and its message to ``parameters`` the
parameters' batch: it is the product over the shared plate axes, given
directly by the sums of eq. (28) (no per-point message of N × K × D × D
numbers exists).

**The expected log-factor.** With ℓ_k = E[λ_k] and, per row,
``E[λ_ki (y_i − a_kiᵀx̃)²] = ℓ_ki (y_i − m_kiᵀx̃)² + x̃ᵀV_kx̃``,

    f̃_k(y) = exp E_q(θ)[log N(y | A_k x̃, Λ_k⁻¹)]
           = N(y | M_k x̃, diag(ℓ_k)⁻¹) · exp(c_k),
    c_k = ½ Σ_i (E[log λ_ki] − log ℓ_ki) − (h/2) x̃ᵀV_kx̃.

**Factorisation.** ``[("out", "switch"), ("parameters",)]`` (what ``"mf"``,
i.e. ``algorithm="vmp"``, means for this node): the structured posterior
q(y | z) q(z) q(θ) of the paper, sum-product inside ``(out, switch)`` with
f̃ in place of f, so the rules towards ``out`` and ``switch`` carry exact
log-scales and the node's free-energy term is ``−log Z`` of the cluster plus
the cross-entropy terms (the engine's sum-product form):

* to ``out``: ``Σ_k m_switch(k) f̃_k(y)`` — a mixture of K Gaussians;
* to ``switch``: ``∫ f̃_k(y) m_out(y) dy`` — a categorical, with the
  expected log-partition terms c_k (the paper's R term);
* the joint marginal ``q(y, z = k) = γ_k N(y | μ_k, Σ_k)``, a mixture over y
  whose weights are q(z) and whose components are q(y | z = k);
* to ``parameters`` (mean-field): per expert the γ-weighted statistics
  ``(−½ Σ_n γ_nk x̃x̃ᵀ, Σ_n γ_nk E[y_n | k] x̃ᵀ, −½ Σ_n γ_nk E[y_ni² | k], ½ Σ_n γ_nk)``.

A known ``out`` (a mixture of linear regressions) or a known (one-hot)
``switch`` leaves the other interfaces in clusters of their own. Every
interface in a cluster of its own (``[("out",), ("switch",), ("parameters",)]``)
is plain mean field: ``exp E_q[log f]`` towards ``out`` (a Gaussian with
precision ``Σ_k E[z_k] diag(ℓ_k)``) and towards ``switch``.

**Free energy per iteration.** The node's term is read off the scales of its
messages towards ``out`` (or ``switch``), so it is the exact term of the
current state only if those messages were computed from the current
q(parameters). A schedule that updates ``parameters`` before ``out`` and
``switch`` (e.g. ``[..., ("x1", "parameters"), ("x1", "out"), ("x1", "switch")]``)
gives the exact free energy after every sweep; the default order updates
``parameters`` last, and its values agree only at convergence.
"""
from __future__ import annotations

import numpy as np

from fgraph.errors import ModelError
from fgraph.families import Distribution, PointMass
from fgraph.families.linalg import quadratic_forms, quadratic_forms_of_rows
from fgraph.families.mixture import Mixture
from fgraph.model import Model, PerCopy, Variable, plate_of
from fgraph.node import FactorNode
from fgraph.registry import average_energy
from fgraph.support import ONE_HOT
from fgraph.nodes.logistic import augmented_row_outer, with_bias_column

__all__ = ["LinearExperts", "LinearExpertsNode"]

LOG_2PI = float(np.log(2.0 * np.pi))


class LinearExpertsNode(FactorNode):
    """``out | switch = k ~ N(A_k x̃, diag(λ_k)⁻¹)``; ``parameters`` of batch ``(K,) + P``, P the plate with
    unit axes where one pair serves every element (attribute ``parameters_plate``)."""

    interfaces = ("out", "switch", "input", "parameters")
    event_ndims = {"out": 1, "switch": 1, "input": 1, "parameters": 2}
    support = {"switch": ONE_HOT}
    default_factorization = "mf"

    def __init__(self, name, batch_shape=(), power=1.0, interfaces=None, plate_shape=(), intercept=True,
                 parameters_plate=None, **attributes):
        plate_shape = tuple(plate_shape)
        parameters_plate = (1,) * len(plate_shape) if parameters_plate is None else tuple(parameters_plate)
        super().__init__(name, batch_shape, power, interfaces, plate_shape=plate_shape,
                         parameters_plate=parameters_plate, intercept=bool(intercept), **attributes)
        if power != 1.0:
            raise ValueError(f"node {name!r}: a linear-experts node cannot carry a power")

    @property
    def experts(self) -> int:
        return self.batch_shape[0]

    @property
    def expert_axis(self) -> int:
        """The position of the experts in the node's batch: ``(K,) + plate``, or ``copies + (1,)* + (K,) + plate``
        in a model with copies."""
        return len(self.batch_shape) - len(self.plate_shape) - 1

    def interface_batch_shape(self, interface: str) -> tuple:
        batch, axis = self.batch_shape, self.expert_axis
        if interface == "parameters":
            return batch[:axis + 1] + self.parameters_plate
        if getattr(self, "copy_ndim", 0):  # with copies the experts' place is padding of the plate's batch
            return batch[:axis] + (1,) + batch[axis + 1:]
        return batch[axis + 1:]

    def parameters_without_experts(self, array: np.ndarray, event_ndim: int) -> np.ndarray:
        """A parameter moment of batch ``interface_batch_shape("parameters")`` with the experts moved next to its
        event, so that it broadcasts against the plate's batch: ``P' + (K,) + event``, P' the parameters' batch
        without the experts (a unit axis in their place in a model with copies)."""
        axis = self.expert_axis
        moved = np.moveaxis(array, axis, array.ndim - event_ndim - 1)
        if getattr(self, "copy_ndim", 0):
            moved = np.expand_dims(moved, axis)
        return moved

    def mean_field_clusters(self) -> list:
        """What ``"mf"`` means here: the structured q(out, switch) q(parameters)."""
        return [("out", "switch"), ("parameters",)]


def LinearExperts(name, switch, input, parameters, observed=None, intercept=True):
    """The vector ``name`` with ``name | switch = k ~ N(A_k [input; 1], diag(λ_k)⁻¹)``.

    Parameters
    ----------
    switch : categorical variable (event ``(K,)``, batch the plate's) or a one-hot array
    input : known array ``(d,)`` or ``(N, d)`` (a plate of N)
    parameters : variable of event ``(h, D)`` (D = d + 1, or d with ``intercept=False``) and batch
        ``(K,) + P``: one pair per expert, P of the plate's length with 1 on the axes the pairs are
        shared along — ``(K, 1)`` for a plate ``(N,)``, e.g. ``MatrixNormalGamma("theta", ...,
        batch_shape=(K, 1))``; ``(K, R, 1)`` for R independent copies of the model (restarts) with
        the plate ``(R, N)``
    observed : array ``plate + (h,)``, optional
    """
    model = Model.current()
    if not isinstance(parameters, Variable) or len(parameters.event_shape) != 2:
        raise ModelError(f"LinearExperts {name!r}: parameters must be a variable of event shape (h, D) "
                         "(a MatrixNormalGamma)")
    if isinstance(input, Variable):
        raise ModelError(f"LinearExperts {name!r}: input must be known (an array of shape (d,) or (N, d))")
    if not isinstance(input, PerCopy):
        input = np.asarray(input, dtype=float)
    input_shape = np.shape(input.value if isinstance(input, PerCopy) else input)
    if len(input_shape) < 1:
        raise ModelError(f"LinearExperts {name!r}: input must have a last axis of d features, got a scalar")
    rows, columns = parameters.event_shape
    dimension = input_shape[-1] + (1 if intercept else 0)
    if dimension != columns:
        raise ModelError(
            f"LinearExperts {name!r}: the parameters have D = {columns} columns but the input has "
            f"{input_shape[-1]} features" + (" (plus the intercept)" if intercept else "")
        )
    switch_value = switch.value if isinstance(switch, PerCopy) else switch
    switch_shape = switch.event_shape if isinstance(switch, Variable) else np.shape(switch_value)[-1:]
    shapes = [plate_of(input, 1), plate_of(switch, 1)]
    if observed is not None:
        shapes.append(plate_of(observed, 1))
    try:
        plate = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ModelError(f"LinearExperts {name!r}: the batch shapes of input, switch and the data {shapes} do not "
                         "broadcast together") from None
    experts = switch_shape[-1] if len(switch_shape) else None
    given = tuple(parameters.plate_shape)
    shared = given[1:]
    if (given[:1] != (experts,) or len(shared) != len(plate)
            or any(size not in (1, plate_size) for size, plate_size in zip(shared, plate))):
        raise ModelError(
            f"LinearExperts {name!r}: the switch has K = {experts} states and the plate is {plate}, so the "
            f"parameters need batch shape {(experts,) + (1,) * len(plate)} (one pair per expert, unit axes for "
            f"the plate; an axis of the plate's size keeps one pair per copy along it); "
            f"{parameters.name!r} has {given}"
        )
    variable = model.add_variable(name, plate, (rows,), observed=observed is not None)
    try:
        model.add_node(LinearExpertsNode, name, {"out": variable, "switch": switch, "input": input,
                                                 "parameters": parameters}, plate_shape=plate, intercept=intercept,
                       parameters_plate=shared)
        if observed is not None:  # data of the plate's shape is shared by the copies, copies + plate is per copy
            model.bind({name: observed.value if isinstance(observed, PerCopy) else observed})
    except BaseException:
        model._discard(variable, None)
        raise
    return variable


# ---------------------------------------------------------------------- the expected log-factor
def augmented_inputs(q_input: PointMass, intercept: bool) -> np.ndarray:
    """x̃ = [x; 1] (or x), shape ``plate + (D,)``, kept on the point mass (data: once per run)."""
    if not intercept:
        return q_input.value
    return q_input._kept("_augmented_rows", with_bias_column)


def expert_arrays(q_parameters: Distribution, node) -> dict:
    """The moments of q(θ) with the expert axis moved next to the event, so that they broadcast against the plate:
    M ``P + (K, h, D)``, V ``P + (K, D, D)``, ℓ = E[λ] ``P + (K, h)``, E[log λ] ``P + (K, h)``."""
    batch = q_parameters.batch_shape
    if len(batch) != len(node.batch_shape):  # parameters shared by the whole batch: give them its rank
        q_parameters = q_parameters.broadcast_to(node.interface_batch_shape("parameters"))
    return {
        "mean": node.parameters_without_experts(q_parameters.matrix_mean, 2),
        "covariance": node.parameters_without_experts(q_parameters.column_covariance, 2),
        "precision": node.parameters_without_experts(q_parameters.mean_precision, 1),
        "log_precision": node.parameters_without_experts(q_parameters.mean_log_precision, 1),
    }


def expected_factor(q_parameters: Distribution, q_input: PointMass, node) -> tuple:
    """f̃_k(y) = N(y | μ_k, diag(ℓ_k)⁻¹) exp(c_k): ``(μ, ℓ, c)`` of shapes ``plate + (K, h)``, ``P + (K, h)``,
    ``plate + (K,)`` (module docstring).

    Kept on q(θ) for the input: the messages to the output and the switch and the free energy read it
    between two updates of q(θ)."""
    return q_parameters.derived_with(f"_expected_factor_{id(node)}", (q_input,),
                                     lambda: _expected_factor(q_parameters, q_input, node))


def _expected_factor(q_parameters: Distribution, q_input: PointMass, node) -> tuple:
    moments = expert_arrays(q_parameters, node)
    rows = augmented_inputs(q_input, node.intercept)
    h = moments["mean"].shape[-2]
    # matrix products over the plate, one expert at a time: no plate × K × D × D array
    predicted = (rows[..., None, None, :] @ np.swapaxes(moments["mean"], -1, -2))[..., 0, :]
    covariance = moments["covariance"]
    outer = augmented_row_outer(q_input, node.intercept)
    if outer is not None and covariance.ndim >= 4 and covariance.shape[-4] == 1:  # every expert at once
        spread = np.moveaxis(quadratic_forms_of_rows(outer, covariance[..., 0, :, :, :]), -2, -1)  # (..., N, K)
        spread = np.broadcast_to(spread, np.broadcast_shapes(rows.shape[:-1], covariance.shape[:-3]) + spread.shape[-1:])
    else:
        spread = np.stack([quadratic_forms(rows, covariance[..., k, :, :]) for k in range(covariance.shape[-3])],
                          axis=-1)  # x̃ᵀ V_k x̃
    offset = 0.5 * np.sum(moments["log_precision"] - np.log(moments["precision"]), axis=-1) - 0.5 * h * spread
    return predicted, moments["precision"], offset


def log_expected_factor_at(value: np.ndarray, predicted, precision, offset) -> np.ndarray:
    """log f̃_k(y) at known y (``plate + (h,)``), shape ``plate + (K,)``."""
    residual = value[..., None, :] - predicted
    return (offset + 0.5 * np.sum(np.log(precision), axis=-1) - 0.5 * precision.shape[-1] * LOG_2PI
            - 0.5 * np.sum(precision * residual * residual, axis=-1))


def switch_weights(q_switch: Distribution) -> np.ndarray:
    """E[z] (probabilities or a one-hot value), shape ``plate + (K,)``."""
    return np.asarray(q_switch.mean, dtype=float)


def conditional_moments(q_out_switch: Mixture) -> tuple:
    """From q(y, z) = Σ_k γ_k q(y | k): γ (``plate + (K,)``), E[y | k] (``plate + (K, h)``) and
    E[y_i² | k] (``plate + (K, h)``); kept on the mixture (the free energy reads it under two q(θ))."""
    return q_out_switch.derived("_conditional_moments", lambda: _conditional_moments(q_out_switch))


def _conditional_moments(q_out_switch: Mixture) -> tuple:
    weights = q_out_switch.weights
    means = np.stack([np.broadcast_to(c.mean, q_out_switch.batch_shape + c.event_shape)
                      for c in q_out_switch.components], axis=-2)
    variances = [np.broadcast_to(np.diagonal(c.cov, axis1=-2, axis2=-1), q_out_switch.batch_shape + c.event_shape)
                 for c in q_out_switch.components]
    squares = np.stack(variances, axis=-2) + means * means
    return weights, means, squares


def expected_log_likelihood(weights, means, squares, q_parameters: Distribution, q_input: PointMass,
                            node) -> np.ndarray:
    """w_k E[log N(y | A_k x̃, Λ_k⁻¹) | k] per expert and plate element, shape ``(K,) + plate`` (the node's batch),
    from w = E[z_k] (or γ_k), E[y | k] and E[y_i² | k].

    ``E_k[(y_i − m_kiᵀx̃)²] = E[y_i² | k] − 2 E[y_i | k] m_kiᵀx̃ + (m_kiᵀx̃)²``.
    """
    predicted, precision, offset = expected_factor(q_parameters, q_input, node)
    squared_error = squares - 2.0 * means * predicted + predicted * predicted
    per_expert = (offset + 0.5 * np.sum(np.log(precision), axis=-1) - 0.5 * precision.shape[-1] * LOG_2PI
                  - 0.5 * np.sum(precision * squared_error, axis=-1))
    weighted = np.where(weights > 0.0, weights * per_expert, 0.0)
    if getattr(node, "copy_ndim", 0):  # the plate's batch has a unit axis where the node's has the experts
        return np.moveaxis(np.squeeze(weighted, node.expert_axis), -1, node.expert_axis)
    return np.moveaxis(weighted, -1, node.expert_axis)


@average_energy(LinearExpertsNode)
def _experts_energy_structured(q_out_switch: Mixture, q_input: PointMass, q_parameters: Distribution, node):
    """``−γ_k E[log N(y | A_k x̃, Λ_k⁻¹) | z = k]`` under q(y, z) q(θ), per element (k, n) of the node's batch."""
    weights, means, squares = conditional_moments(q_out_switch)
    return -expected_log_likelihood(weights, means, squares, q_parameters, q_input, node)


@average_energy(LinearExpertsNode)
def _experts_energy_mean_field(q_out: Distribution, q_switch: Distribution, q_input: PointMass,
                               q_parameters: Distribution, node):
    """``−E[z_k] E[log N(y | A_k x̃, Λ_k⁻¹)]`` under independent q(y) q(z) q(θ) (a known y or z included),
    per element (k, n) of the node's batch."""
    weights = switch_weights(q_switch)
    mean = np.asarray(q_out.mean, dtype=float)
    second = np.asarray(q_out.second_moment, dtype=float)
    squares = np.diagonal(second, axis1=-2, axis2=-1)[..., None, :]
    return -expected_log_likelihood(weights, mean[..., None, :], squares, q_parameters, q_input, node)
