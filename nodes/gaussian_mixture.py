"""Gaussian mixture likelihood: f(out, switch, parameters) = Π_k N(out | μ_k, Λ_k⁻¹)^{switch_k}.

``out`` x is a vector of dimension d (observed data or a latent variable), ``switch`` z is one-hot
over K components and ``parameters`` the K pairs ``θ_k = (μ_k, Λ_k)`` — a mean and a precision —
with a normal–Wishart marginal (:class:`~fgraph.families.normal_wishart.NormalWishart`, typically
the prior :func:`~nodes.normal_wishart.NormalWishart`, which is the Gaussian–Wishart prior
``μ_k | Λ_k ~ N(m₀, (β₀ Λ_k)⁻¹)``, ``Λ_k ~ W(W₀, ν₀)`` of Bishop 2006, §10.2). With a categorical
switch under a Dirichlet weight it is the Bayesian Gaussian mixture (:mod:`fgraph.models.gmm`).

**Why one variable for (μ_k, Λ_k).** The variational posterior of a Bayesian Gaussian mixture keeps μ_k
dependent on Λ_k (q(μ_k, Λ_k) = N(μ_k | m_k, (β_k Λ_k)⁻¹) W(Λ_k | W_k, ν_k), Bishop eq. 10.59–10.63).
Two variables, an ``MvNormal`` mean with a (scaled) ``Wishart`` precision, would be factorised by VMP
into q(μ_k) q(Λ_k) — another fixed point — and a structured cluster (μ_k, Λ_k) would have to span the
prior node and this node, which the engine's clusters (one node's interfaces) do not. The pair is
therefore one variable of the normal–Wishart family, as the pair (A_k, λ_k) of
:mod:`nodes.linear_experts` is one matrix-normal–gamma variable.

**Shapes.** Over a plate of N points (``out`` of batch ``(N,)``) the switch has batch ``(N,)`` and the
parameters batch ``(K, 1)`` — one pair per component, a unit axis for the plate (``(K,) + (1,) * len(plate)``
for a longer plate). The node's batch is ``(K,) + plate`` (after the copy axes in a model with copies);
its messages to ``out`` and ``switch`` have the plate's batch, and its message to ``parameters`` is the
product over the whole plate (the engine's reduction of a shared parameter), given directly by the
weighted sums below — no per-point message of N × K × d × d numbers exists. In a model with copies
(``fg.Model(copies=R)``: restarts, a grid of node powers, bootstrap resamples) the sums run over the
plate once per copy.

**Messages** (mean field: q(out) q(switch) q(parameters); the expectations under q(θ_k) are
``E[Λ_k] = ν_k W_k``, ``E[Λ_k μ_k] = ν_k W_k m_k``, ``E[log |Λ_k|]`` and
``E[(x − μ_k)ᵀ Λ_k (x − μ_k)] = d/β_k + ν_k ((x̄ − m_k)ᵀ W_k (x̄ − m_k) + tr(W_k Σ_x))``, x̄ and Σ_x the
mean and covariance of q(x), Σ_x = 0 for data):

* to ``switch``: ``log μ(k) = E[log N(x | μ_k, Λ_k⁻¹)] = −(d/2) log 2π + ½ E[log |Λ_k|]
  − ½ E[(x − μ_k)ᵀ Λ_k (x − μ_k)]`` (Bishop eq. 10.46 with the weight term left to the switch's prior);
* to ``parameters``: for each k, the normal–Wishart function with natural parameters
  ``(−½ Σ_n w_nk E[x_n x_nᵀ], Σ_n w_nk E[x_n], −½ Σ_n w_nk, ½ Σ_n w_nk)`` (statistics
  ``(Λ, Λμ, μᵀΛμ, log |Λ|)``) and coefficient ``κ_k = (d/2)(1 − Σ_n w_nk) log 2π``, ``w_nk = E[z_nk]``: exact
  for known x and z (the factor itself), a :class:`~fgraph.families.normal_wishart.NormalWishartLikelihood`
  (a component with no weight sends zeros); times the prior it is Bishop's eqs. 10.60–10.63;
* to ``out``: the normal of precision ``Σ_k w_k ν_k W_k`` and weighted mean ``Σ_k w_k ν_k W_k m_k``.

The average energy is ``−Σ_k E[z_k] E[log N(x | μ_k, Λ_k⁻¹)]`` per element (k, n) of the node's batch.
A node power ω (``power=``, one number or ``fg.per_copy`` numbers in a model with copies) raises every
message to ω and scales the energy by ω, as for any node: the fractional likelihood p^ω(X | Z, μ, Λ).
"""
from __future__ import annotations

import numpy as np

from fgraph.errors import ModelError
from fgraph.families import Distribution, PointMass
from fgraph.families.base import sum_last_axis
from fgraph.model import Model, PerCopy, Variable, plate_of
from fgraph.node import FactorNode
from nodes.components import SharedComponents
from fgraph.registry import average_energy
from fgraph.support import ONE_HOT

__all__ = ["GaussianMixture", "GaussianMixtureNode"]

LOG_2PI = float(np.log(2.0 * np.pi))


class GaussianMixtureNode(SharedComponents, FactorNode):
    """``out | switch = k ~ N(μ_k, Λ_k⁻¹)``; ``parameters`` of batch ``(K,) + (1,) * len(plate)`` (after the copies)."""

    interfaces = ("out", "switch", "parameters")
    component_interface = "parameters"
    event_ndims = {"out": 1, "switch": 1, "parameters": 1}
    support = {"switch": ONE_HOT}
    default_factorization = "mf"

    def __init__(self, name, batch_shape=(), power=1.0, interfaces=None, plate_shape=(), **attributes):
        super().__init__(name, batch_shape, power, interfaces, plate_shape=tuple(plate_shape), **attributes)

    def check_event_shapes(self, event_shapes: dict) -> None:
        out, switch, parameters = (event_shapes.get(i) for i in ("out", "switch", "parameters"))
        if out and parameters and tuple(out) != tuple(parameters):
            raise ValueError(f"out has event shape {tuple(out)} but the parameters are of dimension "
                             f"{tuple(parameters)}; "
                             "they must match")
        if switch and switch[-1] != self.components:
            raise ValueError(f"the switch has K = {switch[-1]} categories but the parameters hold {self.components} "
                             "components; give one pair per category")


def GaussianMixture(name, switch, parameters, observed=None, batch_shape=None, power=1.0):
    """The vector ``name`` with ``name | switch = k ~ N(μ_k, Λ_k⁻¹)``, ``(μ_k, Λ_k)`` the k-th pair of ``parameters``.

    Parameters
    ----------
    switch : categorical variable (event ``(K,)``, batch the plate's) or a one-hot array
    parameters : variable of event ``(d,)`` and batch ``(K,) + (1,) * len(plate)`` with a normal–Wishart
        marginal, e.g. ``NormalWishart("theta", m0, beta0, W0, nu0, batch_shape=(K, 1))`` for a plate ``(N,)``
    observed : array ``plate + (d,)``, optional (a latent ``name`` otherwise)
    batch_shape : the plate, for a latent ``name`` whose switch is not a variable of the plate
    power : ω in (0, 1] (or ``fg.per_copy`` values), the fractional likelihood ``f^ω``

    Run it with ``algorithm="vmp"``.
    """
    model = Model.current()
    if not isinstance(parameters, Variable) or len(parameters.event_shape) != 1:
        raise ModelError(f"GaussianMixture {name!r}: parameters must be a variable of event shape (d,) with a "
                         "normal-Wishart marginal (a NormalWishart)")
    dimension = parameters.event_shape[0]
    switch_value = switch.value if isinstance(switch, PerCopy) else switch
    switch_shape = switch.event_shape if isinstance(switch, Variable) else np.shape(switch_value)[-1:]
    shapes = [plate_of(switch, 1)]
    if observed is not None and observed is not True:
        data = observed.value if isinstance(observed, PerCopy) else observed
        if np.ndim(data) < 1 or np.shape(data)[-1] != dimension:
            raise ModelError(f"GaussianMixture {name!r}: the data must have a last axis of d = {dimension} features "
                             f"(the dimension of the parameters), got shape {np.shape(data)}")
        shapes.append(plate_of(observed, 1))
    if batch_shape is not None:
        shapes.append(tuple(batch_shape))
    try:
        plate = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ModelError(f"GaussianMixture {name!r}: the batch shapes of the switch and the data {shapes} do not "
                         "broadcast together") from None
    components = switch_shape[-1] if len(switch_shape) else None
    expected = (components,) + (1,) * len(plate)
    if tuple(parameters.plate_shape) != expected:
        raise ModelError(
            f"GaussianMixture {name!r}: the switch has K = {components} states and the plate is {plate}, so the "
            f"parameters need batch shape {expected} (one pair per component, unit axes for the plate); "
            f"{parameters.name!r} has {tuple(parameters.plate_shape)}")
    variable = model.add_variable(name, plate, (dimension,), observed=observed is not None)
    try:
        model.add_node(GaussianMixtureNode, name, {"out": variable, "switch": switch, "parameters": parameters},
                       plate_shape=plate, power=power)
        if observed is not None and observed is not True:  # the plate's shape is shared by the copies
            model.bind({name: observed.value if isinstance(observed, PerCopy) else observed})
    except BaseException:
        model._discard(variable, None)
        raise
    return variable


# ---------------------------------------------------------------------- the expected log-factor
def component_moments(q_parameters: Distribution, node) -> dict:
    """The parameters of q(θ) with the components moved next to the event, so that they broadcast against the
    plate's batch: m ``P + (K, d)``, β ``P + (K,)``, W ``P + (K, d, d)``, its Cholesky factor, ν ``P + (K,)`` and
    E[log |Λ|] ``P + (K,)``. Kept on q(θ) for the node (the switch's message and the energy read it)."""
    return q_parameters.derived_with(f"_component_moments_{id(node)}", (), lambda: _component_moments(q_parameters,
                                                                                                       node))


def _placed(array: np.ndarray, event_ndim: int, node) -> np.ndarray:
    """A moment of batch ``copies + (K,) + (1,)*plate`` as ``copies + (1,)*plate' + (K,) + event`` against the
    plate's batch (``plate`` without copies)."""
    axis = node.component_axis
    array = np.asarray(array)
    moved = np.moveaxis(array, axis, array.ndim - event_ndim - 1)
    if getattr(node, "copy_ndim", 0):
        moved = np.expand_dims(moved, axis)
    return moved


def _component_moments(q_parameters, node) -> dict:
    batch = node.interface_batch_shape("parameters")
    if q_parameters.batch_shape != batch:
        q_parameters = q_parameters.broadcast_to(batch)
    return {
        "location": _placed(q_parameters.location, 1, node),
        "precision_scale": _placed(q_parameters.precision_scale, 0, node),
        "scale": _placed(q_parameters.scale, 2, node),
        "scale_cholesky": _placed(q_parameters._scale_cholesky, 2, node),
        "df": _placed(q_parameters.df, 0, node),
        "mean_logdet": _placed(q_parameters.mean_logdet, 0, node),
    }


def out_moments(q_out: Distribution) -> tuple:
    """E[x] (``batch + (d,)``) and Cov[x] (``batch + (d, d)``, or ``None`` for a point mass: data)."""
    mean = np.asarray(q_out.mean, dtype=float)
    if isinstance(q_out, PointMass):
        return mean, None
    second = np.asarray(q_out.second_moment, dtype=float)
    return mean, second - mean[..., :, None] * mean[..., None, :]


def expected_log_likelihoods(q_out: Distribution, q_parameters: Distribution, node) -> np.ndarray:
    """E[log N(x | μ_k, Λ_k⁻¹)] under q(x) q(θ) for every k, shape ``plate batch + (K,)``.

    Kept on q(θ) for q(x): the switch's message and the free energy read the same numbers."""
    return q_parameters.derived_with(f"_expected_log_likelihoods_{id(node)}", (q_out,),
                                     lambda: _expected_log_likelihoods(q_out, q_parameters, node))


def _expected_log_likelihoods(q_out, q_parameters, node) -> np.ndarray:
    moments = component_moments(q_parameters, node)
    mean, covariance = out_moments(q_out)
    location, factor = moments["location"], moments["scale_cholesky"]
    dimension = location.shape[-1]
    components = location.shape[-2]
    batch = np.broadcast_shapes(mean.shape[:-1], location.shape[:-2], factor.shape[:-3])
    quadratic = _shared_quadratic(mean, location, moments["scale"], batch)
    if quadratic is None:
        quadratic = np.empty(batch + (components,))
        for k in range(components):  # one matrix product per component over the plate: no N × K × d × d array
            difference = mean - location[..., k, :]
            factor_k = factor[..., k, :, :]
            if factor_k.ndim > 2 and all(size == 1 for size in factor_k.shape[:-2]):  # one matrix: a plain product
                whitened = difference @ factor_k.reshape(factor_k.shape[-2:])  # (x̄ − m)ᵀ L with W = L Lᵀ
            else:
                whitened = (difference[..., None, :] @ factor_k)[..., 0, :]
            quadratic[..., k] = sum_last_axis(whitened * whitened)  # a short last axis: slices added, not reduced
    if covariance is not None:  # + tr(W_k Σ_x)
        quadratic = quadratic + np.sum(moments["scale"] * covariance[..., None, :, :], axis=(-2, -1))  # both symmetric
    expected_quadratic = dimension / moments["precision_scale"] + moments["df"] * quadratic
    return 0.5 * moments["mean_logdet"] - 0.5 * dimension * LOG_2PI - 0.5 * expected_quadratic


def _shared_quadratic(mean, location, scale, batch):
    """(x̄ − m_k)ᵀ W_k (x̄ − m_k) for every point and k as x̄ᵀW_k x̄ − 2 x̄ᵀW_k m_k + m_kᵀW_k m_k: two matrix products
    over the plate, (N, d²) @ (d², K) and (N, d) @ (d, K), when the components are shared by the plate (their
    plate axis, third from the end of ``location``, is one). None otherwise. The data are centred
    (:func:`fgraph.models.gmm.build_gmm`), so the expansion loses no more digits than the direct form."""
    if location.ndim < 3 or location.shape[-3] != 1 or scale.shape[:-2] != location.shape[:-1]:
        return None
    outer = batch[:-1]  # the axes before the plate's
    try:
        np.broadcast_shapes(mean.shape[:-2], location.shape[:-3], outer)
    except ValueError:
        return None
    components, dimension = location.shape[-2:]
    squares = (mean[..., :, None] * mean[..., None, :]).reshape(mean.shape[:-1] + (dimension * dimension,))
    flat_scale = np.swapaxes(scale.reshape(location.shape[:-3] + (components, dimension * dimension)), -1, -2)
    scaled_location = (scale @ location[..., None])[..., 0]  # W_k m_k, location batch + (K, d)
    cross = np.swapaxes(scaled_location.reshape(location.shape[:-3] + (components, dimension)), -1, -2)
    constant = np.sum(location * scaled_location, axis=-1)  # m_kᵀ W_k m_k, (..., 1, K)
    return np.broadcast_to(squares @ flat_scale - 2.0 * (mean @ cross) + constant, batch + (components,))


def switch_weights(q_switch: Distribution, components: int) -> np.ndarray:
    """E[z] (probabilities or a one-hot value), shape ``plate batch + (K,)``."""
    weights = np.asarray(q_switch.mean, dtype=float)
    if weights.shape[-1:] != (components,):
        raise ValueError(f"the switch has {weights.shape[-1:]} categories, the node {components} components")
    return weights


@average_energy(GaussianMixtureNode)
def _gaussian_mixture_energy(q_out: Distribution, q_switch: Distribution, q_parameters: Distribution, node):
    """``−E[z_k] E[log N(x | μ_k, Λ_k⁻¹)]`` under q(x) q(z) q(θ), per element (k, n) of the node's batch."""
    weights = switch_weights(q_switch, node.components)
    terms = expected_log_likelihoods(q_out, q_parameters, node)
    weights, terms = np.broadcast_arrays(weights, terms)
    weighted = np.where(weights > 0.0, weights * terms, 0.0)
    return node.plate_to_node_batch(-weighted)
