"""Switching linear regression, known noise: f(out, switch, input, coefficients) = Π_k N(out | X β_k, λ⁻¹ I)^{switch_k}.

``out`` y is a vector of J responses (observed), ``input`` X the known J × p design matrix of those responses,
``switch`` z one-hot over K components and ``coefficients`` the K regression vectors β_k ∈ R^p (a multivariate
normal marginal, e.g. under the prior :func:`~fgraph.nodes.isotropic_normal.IsotropicNormal`); the noise precision λ is a
known number (attribute ``noise_precision``). All J responses of one element of the plate share one label and one
β_k: over a plate of N elements this is the likelihood of the Bayesian mixture linear regression of the TVB paper
(§5.2, eq. 21: N data sets (y_n, X_n), each a classical regression belonging to one of K clusters;
:mod:`fgraph.models.mixtures.bmlr`). J = 1 is a mixture of ordinary regressions (one response per label).

**Why not** :mod:`fgraph.nodes.linear_experts`. Its experts are ``y | z = k ~ N(A_k x̃, diag(λ_k)⁻¹)`` with a
matrix-normal–gamma pair (A_k, λ_k): a Gamma noise precision per expert and output, and a coefficient covariance
V/λ_k tied to it. This model has a known noise precision shared by the components and its coefficients' prior
precision is a separate variable with a mean-field posterior q(β) q(τ) (:mod:`fgraph.models.mixtures.bmlr`); and the J
responses of one element share one coefficient vector, where the h outputs of an expert each have their own row
of A_k. Neither family nor shapes fit, and that node cannot carry the power ω that fractional VB puts on the
likelihood.

**Shapes.** Over a plate of N elements (``out`` of batch ``(N,)``, event ``(J,)``; ``input`` of batch ``(N,)``,
event ``(J, p)``) the switch has batch ``(N,)`` and the coefficients batch ``(K, 1)`` — one vector per component,
a unit axis for the plate (``(K,) + (1,) * len(plate)`` for a longer plate). The node's batch is ``(K,) + plate``
(after the copy axes in a model with copies, where the input and the data may be given per copy: bootstrap
resamples). Everything the node computes goes through the statistics of each element,
``G_n = X_nᵀX_n`` (p × p), ``c_n = X_nᵀy_n`` and ``s_n = y_nᵀy_n``, formed once per run; no message or energy
reads the J responses again.

**Messages** (mean field q(z) q(β); y observed; E_k[·] under q(β_k), ``E[β_kβ_kᵀ] = S_k + m_kmₖᵀ``):

* to ``switch``: ``log μ(k) = E[log N(y_n | X_n β_k, λ⁻¹ I)]
  = (J/2) log(λ/2π) − (λ/2)(s_n − 2 c_nᵀm_k + tr(G_n E[β_kβ_kᵀ]))``;
* to ``coefficients``: per component the Gaussian function of β_k with precision ``λ Σ_n w_nk G_n``, weighted mean
  ``λ Σ_n w_nk c_n`` and coefficient ``κ_k = Σ_n w_nk ((J/2) log(λ/2π) − (λ/2) s_n) + (p/2) log 2π`` (w = E[z]):
  the factor itself for a known switch, a :class:`~fgraph.families.mvnormal.GaussianLikelihood` (flat where
  ``Σ_n w_nk G_n`` is singular: a component with no weight);
* the average energy is ``−E[z_k] E[log N(y | X β_k, λ⁻¹ I)]`` per element (k, n) of the node's batch.

A node power ω (``power=``, one number or ``fg.per_copy`` numbers) raises the messages to ω and scales the energy
by ω, as for any node: the fractional likelihood p^ω(Y | Z, β, X). A latent ``out`` has no rules here.

**From the statistics** (``statistics=RegressionStatistics(gram, cross, square, responses)`` instead of ``input``
and ``observed``): since nothing reads the responses beyond (G_n, c_n, s_n) and J, the node can be given those
alone — N (p × p + p + 1) numbers instead of N J (p + 1). Then ``input`` holds G_n (event ``(p, p)``), the observed
``out`` holds ``(c_n, s_n)`` packed (event ``(p + 1,)``) and the attribute ``responses`` is J; every message and
energy is the same function of the same numbers as from the raw arrays. Resampling data sets is indexing the
statistics (:meth:`RegressionStatistics.take`), so R bootstrap copies cost R N (p² + p + 1) numbers, not R N J (p + 1).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from fgraph.errors import ModelError
from fgraph.families import Distribution, PointMass
from fgraph.model import Model, PerCopy, Variable, plate_of
from fgraph.node import FactorNode
from fgraph.nodes.components import SharedComponents
from fgraph.registry import average_energy
from fgraph.support import ONE_HOT

__all__ = ["SwitchingRegression", "SwitchingRegressionNode", "RegressionStatistics"]

LOG_2PI = float(np.log(2.0 * np.pi))


class SwitchingRegressionNode(SharedComponents, FactorNode):
    """``out | switch = k ~ N(input · β_k, λ⁻¹ I_J)``; ``coefficients`` of batch ``(K,) + (1,) * len(plate)`` (after
    the copies); attribute ``noise_precision`` λ > 0."""

    interfaces = ("out", "switch", "input", "coefficients")
    component_interface = "coefficients"
    event_ndims = {"out": 1, "switch": 1, "input": 2, "coefficients": 1}
    support = {"switch": ONE_HOT}
    default_factorization = "mf"

    def __init__(self, name, batch_shape=(), power=1.0, interfaces=None, plate_shape=(), noise_precision=1.0,
                 responses=None, **attributes):
        if (isinstance(noise_precision, bool) or not isinstance(noise_precision, numbers.Real)
                or not np.isfinite(noise_precision) or noise_precision <= 0.0):
            raise ValueError(f"node {name!r}: the noise precision λ must be a positive number, got "
                             f"{noise_precision!r}")
        if responses is not None and (isinstance(responses, bool) or not isinstance(responses, numbers.Integral)
                                      or responses < 1):
            raise ValueError(f"node {name!r}: the number of responses J of the statistics must be an integer >= 1, "
                             f"got {responses!r}")
        super().__init__(name, batch_shape, power, interfaces, plate_shape=tuple(plate_shape),
                         noise_precision=float(noise_precision),
                         responses=None if responses is None else int(responses), **attributes)

    def check_event_shapes(self, event_shapes: dict) -> None:
        out, switch, design, coefficients = (event_shapes.get(i) for i in self.interfaces)
        if self.responses is not None:  # from the statistics: input G_n (p, p), out (c_n, s_n) packed (p + 1,)
            if design and coefficients and tuple(design) != tuple(coefficients) * 2:
                raise ValueError(f"the statistics X_nᵀX_n have shape {tuple(design)} but the coefficients are of "
                                 f"dimension {tuple(coefficients)}; they must be p × p")
            if out and coefficients and tuple(out) != (coefficients[0] + 1,):
                raise ValueError(f"the packed statistics (X_nᵀy_n, y_nᵀy_n) have shape {tuple(out)}, not "
                                 f"(p + 1,) = {(coefficients[0] + 1,)}")
            if switch and switch[-1] != self.components:
                raise ValueError(f"the switch has K = {switch[-1]} categories but the coefficients hold "
                                 f"{self.components} components; give one vector per category")
            return
        if design and out and tuple(design)[:1] != tuple(out):
            raise ValueError(f"out has J = {tuple(out)} responses but the input's design matrices are "
                             f"{tuple(design)}; give one row per response")
        if design and coefficients and tuple(design)[1:] != tuple(coefficients):
            raise ValueError(f"the input has p = {tuple(design)[1:]} columns but the coefficients are of dimension "
                             f"{tuple(coefficients)}; they must match")
        if switch and switch[-1] != self.components:
            raise ValueError(f"the switch has K = {switch[-1]} categories but the coefficients hold "
                             f"{self.components} components; give one vector per category")


@dataclass(frozen=True)
class RegressionStatistics:
    """The statistics of N regressions (y_n, X_n) that the node needs: ``gram`` G_n = X_nᵀX_n (``plate + (p, p)``),
    ``cross`` c_n = X_nᵀy_n (``plate + (p,)``), ``square`` s_n = y_nᵀy_n (``plate``) and ``responses`` J, the rows
    of every X_n. A leading copy axis (``(R,) + plate + ...``) is allowed: give ``fg.per_copy(statistics)`` to the
    node then."""

    gram: np.ndarray
    cross: np.ndarray
    square: np.ndarray
    responses: int

    @classmethod
    def from_data(cls, X, y) -> "RegressionStatistics":
        """From design matrices X (``plate + (J, p)``) and responses y (``plate + (J,)``)."""
        X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
        if X.ndim < 2 or y.shape != X.shape[:-1]:
            raise ModelError(f"RegressionStatistics: X must be plate + (J, p) and y plate + (J,), got shapes "
                             f"{X.shape} and {y.shape}")
        Xt = np.swapaxes(X, -1, -2)
        return cls(Xt @ X, (Xt @ y[..., None])[..., 0], np.sum(y * y, axis=-1), int(X.shape[-2]))

    @property
    def dimension(self) -> int:
        """p."""
        return int(np.shape(self.gram)[-1])

    def take(self, indices) -> "RegressionStatistics":
        """The statistics of the data sets ``indices`` (an integer array of any shape, into the first axis): shape
        ``indices.shape + ...``; e.g. (R, n) indices give R resamples of n data sets, one per copy."""
        indices = np.asarray(indices)
        return RegressionStatistics(np.asarray(self.gram)[indices], np.asarray(self.cross)[indices],
                                    np.asarray(self.square)[indices], self.responses)

    def packed(self) -> np.ndarray:
        """(c_n, s_n) side by side, ``plate + (p + 1,)``: the value of the node's observed ``out``."""
        return np.concatenate([np.asarray(self.cross, dtype=float),
                               np.asarray(self.square, dtype=float)[..., None]], axis=-1)


def _from_statistics(name, statistics, dimension) -> tuple:
    """(input, observed, J) for the node from :class:`RegressionStatistics` (``fg.per_copy`` of one: per copy)."""
    copies = isinstance(statistics, PerCopy)
    value = statistics.value if copies else statistics
    if not isinstance(value, RegressionStatistics):
        raise ModelError(f"SwitchingRegression {name!r}: statistics must be a RegressionStatistics (or fg.per_copy "
                         f"of one), got {type(value).__name__}")
    gram, cross, square = (np.asarray(a, dtype=float) for a in (value.gram, value.cross, value.square))
    if gram.ndim < 2 or gram.shape[-2:] != (dimension, dimension) or cross.shape != gram.shape[:-1] \
            or square.shape != gram.shape[:-2]:
        raise ModelError(f"SwitchingRegression {name!r}: the statistics need X_nᵀX_n of shape plate + (p, p), "
                         f"X_nᵀy_n plate + (p,), y_nᵀy_n plate with p = {dimension} (the dimension of the "
                         f"coefficients); got {gram.shape}, {cross.shape}, {square.shape}")
    for label, array in (("X_nᵀX_n", gram), ("X_nᵀy_n", cross), ("y_nᵀy_n", square)):
        if not np.all(np.isfinite(array)):
            raise ModelError(f"SwitchingRegression {name!r}: the statistics {label} have NaN or infinite values")
    J = value.responses
    if isinstance(J, bool) or not isinstance(J, numbers.Integral) or J < 1:
        raise ModelError(f"SwitchingRegression {name!r}: the statistics' number of responses J must be an integer "
                         f">= 1, got {J!r}")
    packed = value.packed()
    mark = PerCopy if copies else (lambda array: array)
    return mark(gram), mark(packed), int(J)


def SwitchingRegression(name, switch, input=None, coefficients=None, observed=None, noise_precision=1.0, power=1.0,
                        statistics=None):
    """The J responses ``name`` with ``name | switch = k ~ N(input · β_k, λ⁻¹ I_J)``, β_k the k-th coefficient vector.

    Parameters
    ----------
    switch : categorical variable (event ``(K,)``, batch the plate's) or a one-hot array
    input : known design matrices, an array ``plate + (J, p)`` (or ``fg.per_copy`` of ``copies + plate + (J, p)``)
    coefficients : variable of event ``(p,)`` and batch ``(K,) + (1,) * len(plate)``, e.g.
        ``IsotropicNormal("beta", np.zeros(p), tau, batch_shape=(K, 1))`` for a plate ``(N,)``
    observed : the responses, an array ``plate + (J,)`` (or ``fg.per_copy`` values)
    noise_precision : λ > 0, known
    power : ω in (0, 1] (or ``fg.per_copy`` values), the fractional likelihood ``f^ω``
    statistics : instead of ``input`` and ``observed``, the data sets' statistics (:class:`RegressionStatistics`,
        or ``fg.per_copy`` of one whose arrays have the copy axes first): the same model from N (p² + p + 1)
        numbers (module docstring); the variable ``name`` then holds (X_nᵀy_n, y_nᵀy_n) packed

    Run it with ``algorithm="vmp"``.
    """
    model = Model.current()
    if not isinstance(coefficients, Variable) or len(coefficients.event_shape) != 1:
        raise ModelError(f"SwitchingRegression {name!r}: coefficients must be a variable of event shape (p,) with a "
                         "multivariate normal marginal (e.g. an IsotropicNormal)")
    responses = None
    if statistics is not None:
        if input is not None or observed is not None:
            raise ModelError(f"SwitchingRegression {name!r}: give either input and observed or statistics, not both")
        input, observed, responses = _from_statistics(name, statistics, coefficients.event_shape[0])
    if isinstance(input, Variable):
        raise ModelError(f"SwitchingRegression {name!r}: input must be known (design matrices of shape (N, J, p))")
    if observed is None or isinstance(observed, (Variable, bool)):
        raise ModelError(f"SwitchingRegression {name!r}: the responses must be observed (an array of shape (N, J))")
    design = np.shape(input.value if isinstance(input, PerCopy) else input)
    data = np.shape(observed.value if isinstance(observed, PerCopy) else observed)
    dimension = coefficients.event_shape[0]
    if responses is None and (len(design) < 2 or design[-1] != dimension):
        raise ModelError(f"SwitchingRegression {name!r}: the input must be design matrices with p = {dimension} "
                         f"columns (the dimension of the coefficients), got shape {design}")
    if responses is None and (len(data) < 1 or data[-1] != design[-2]):
        raise ModelError(f"SwitchingRegression {name!r}: the responses (shape {data}) need one design row each "
                         f"(the input has shape {design})")
    switch_value = switch.value if isinstance(switch, PerCopy) else switch
    switch_shape = switch.event_shape if isinstance(switch, Variable) else np.shape(switch_value)[-1:]
    shapes = [plate_of(switch, 1), plate_of(input, 2), plate_of(observed, 1)]
    try:
        plate = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ModelError(f"SwitchingRegression {name!r}: the batch shapes of the switch, the input and the data "
                         f"{shapes} do not broadcast together") from None
    components = switch_shape[-1] if len(switch_shape) else None
    expected = (components,) + (1,) * len(plate)
    if tuple(coefficients.plate_shape) != expected:
        raise ModelError(
            f"SwitchingRegression {name!r}: the switch has K = {components} states and the plate is {plate}, so the "
            f"coefficients need batch shape {expected} (one vector per component, unit axes for the plate); "
            f"{coefficients.name!r} has {tuple(coefficients.plate_shape)}")
    variable = model.add_variable(name, plate, (data[-1],), observed=True)
    try:
        model.add_node(SwitchingRegressionNode, name, {"out": variable, "switch": switch, "input": input,
                                                       "coefficients": coefficients},
                       plate_shape=plate, power=power, noise_precision=noise_precision, responses=responses)
        model.bind({name: observed.value if isinstance(observed, PerCopy) else observed})
    except ValueError as error:
        model._discard(variable, None)
        raise ModelError(f"SwitchingRegression {name!r}: {error}") from None
    except BaseException:
        model._discard(variable, None)
        raise
    return variable


# ---------------------------------------------------------------------- the statistics of the elements
def _from_stats(node) -> bool:
    return getattr(node, "responses", None) is not None


def design_gram(q_input: PointMass, node=None) -> np.ndarray:
    """G_n = X_nᵀX_n, ``batch + (p, p)``, kept on the point mass (data: once per run); the input itself for a node
    given the statistics."""
    if _from_stats(node):
        return np.asarray(q_input.value, dtype=float)
    return q_input._kept("_design_gram", lambda X: np.swapaxes(X, -1, -2) @ X)


def response_count(q_out: PointMass, node=None) -> int:
    """J, the responses of every element: the attribute of a node given the statistics, else the event of out."""
    return node.responses if _from_stats(node) else q_out.event_shape[-1]


def response_statistics(q_out: PointMass, q_input: PointMass, node=None) -> tuple:
    """c_n = X_nᵀy_n (``batch + (p,)``) and s_n = y_nᵀy_n (``batch``), kept on the responses for the input; read
    off the packed ``out`` for a node given the statistics."""
    if _from_stats(node):
        packed = np.asarray(q_out.value, dtype=float)
        return packed[..., :-1], packed[..., -1]

    def compute():
        y = np.asarray(q_out.value, dtype=float)
        X = np.asarray(q_input.value, dtype=float)
        return (np.swapaxes(X, -1, -2) @ y[..., None])[..., 0], np.sum(y * y, axis=-1)

    return q_out.derived_with("_response_statistics", (q_input,), compute)


def by_copy(array: np.ndarray, event_ndim: int, node) -> np.ndarray:
    """A per-element array (batch broadcastable to the plate's batch ``node.interface_batch_shape("out")``) as
    ``(C, n) + event``: C the copies (1 when the array is shared by them), n the elements of the plate."""
    array = np.asarray(array, dtype=float)
    copies = getattr(node, "copy_ndim", 0)
    batch = node.interface_batch_shape("out")
    event = array.shape[array.ndim - event_ndim:] if event_ndim else ()
    own = array.shape[:array.ndim - event_ndim]
    per_copy = copies and len(own) > len(batch) - copies and any(size != 1 for size in own[:len(own) - len(batch)
                                                                                         + copies])
    target = batch if per_copy else batch[copies:]
    if not per_copy and len(own) > len(target):  # copy axes of length one
        array = array.reshape(array.shape[len(own) - len(target):])
    count = math.prod(batch[copies:])
    return np.broadcast_to(array, target + event).reshape((math.prod(batch[:copies]) if per_copy else 1, count)
                                                          + event)


def coefficient_moments(q_coefficients: Distribution, node) -> tuple:
    """E[β_k] ``(C, K, p)`` and E[β_kβ_kᵀ] flattened ``(C, K, p²)``, C the copies (1 without), kept on q(β)."""
    def compute():
        copies = getattr(node, "copy_ndim", 0)
        target = node.interface_batch_shape("coefficients")
        count = math.prod(target[:copies])
        mean = np.asarray(q_coefficients.mean, dtype=float)
        second = np.asarray(q_coefficients.second_moment, dtype=float)
        p = mean.shape[-1]
        return (np.broadcast_to(mean, target + (p,)).reshape(count, -1, p),
                np.broadcast_to(second, target + (p, p)).reshape(count, -1, p * p))

    return q_coefficients.derived_with(f"_coefficient_moments_{id(node)}", (), compute)


def expected_log_likelihoods(q_out: PointMass, q_input: PointMass, q_coefficients: Distribution, node) -> np.ndarray:
    """E[log N(y_n | X_n β_k, λ⁻¹ I)] for every element and k, shape ``(C, n, K)`` (module docstring), kept on q(β)
    for the data: the switch's message and the energy read the same numbers."""
    return q_coefficients.derived_with(f"_expected_log_likelihoods_{id(node)}", (q_out, q_input),
                                       lambda: _expected_log_likelihoods(q_out, q_input, q_coefficients, node))


def _expected_log_likelihoods(q_out, q_input, q_coefficients, node) -> np.ndarray:
    mean, second = coefficient_moments(q_coefficients, node)  # (C, K, p), (C, K, p²)
    cross, square = response_statistics(q_out, q_input, node)
    gram = design_gram(q_input, node)
    p = mean.shape[-1]
    responses = response_count(q_out, node)
    cross = by_copy(cross, 1, node)  # (C|1, n, p)
    square = by_copy(square, 0, node)  # (C|1, n)
    gram = by_copy(gram.reshape(gram.shape[:-2] + (p * p,)), 1, node)  # (C|1, n, p²)
    quadratic = (square[..., None] - 2.0 * (cross @ np.swapaxes(mean, -1, -2))
                 + gram @ np.swapaxes(second, -1, -2))  # (C, n, K)
    precision = node.noise_precision
    return 0.5 * responses * (np.log(precision) - LOG_2PI) - 0.5 * precision * quadratic


def switch_weights(q_switch: Distribution, node) -> np.ndarray:
    """E[z] (probabilities or a one-hot value) as ``(C|1, n, K)``."""
    weights = np.asarray(q_switch.mean, dtype=float)
    if weights.shape[-1:] != (node.components,):
        raise ValueError(f"the switch has {weights.shape[-1:]} categories, the node {node.components} components")
    return by_copy(weights, 1, node)


def to_plate_batch(per_element: np.ndarray, node) -> np.ndarray:
    """``(C|1, n) + (K,)`` back to the plate's batch ``node.interface_batch_shape("out") + (K,)``."""
    batch = node.interface_batch_shape("out")
    count = math.prod(batch[:getattr(node, "copy_ndim", 0)])
    per_element = np.broadcast_to(per_element, (count,) + per_element.shape[1:])
    return per_element.reshape(batch + per_element.shape[-1:])


def to_node_batch(per_element: np.ndarray, node) -> np.ndarray:
    """``(C, n, K)`` as the node's batch ``copies + (K,) + plate``."""
    return node.plate_to_node_batch(to_plate_batch(per_element, node))


@average_energy(SwitchingRegressionNode)
def _switching_regression_energy(q_out: PointMass, q_switch: Distribution, q_input: PointMass,
                                 q_coefficients: Distribution, node):
    """``−E[z_k] E[log N(y | X β_k, λ⁻¹ I)]`` under q(z) q(β), per element (k, n) of the node's batch."""
    weights = switch_weights(q_switch, node)
    terms = expected_log_likelihoods(q_out, q_input, q_coefficients, node)
    weights, terms = np.broadcast_arrays(weights, terms)
    weighted = np.where(weights > 0.0, weights * terms, 0.0)
    return to_node_batch(-weighted, node)
