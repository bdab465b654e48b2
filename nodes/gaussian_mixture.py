"""Gaussian mixture likelihood: f(out, switch, parameters) = Π_k N(out | μ_k, Λ_k⁻¹)^{switch_k}.

``out`` x is a vector of dimension d (observed data or a latent variable), ``switch`` z is one-hot
over K components and ``parameters`` the K pairs ``θ_k = (μ_k, Λ_k)`` — a mean and a precision —
with a normal–Wishart marginal (:class:`~fgraph.families.normal_wishart.NormalWishart`, typically
the prior :func:`~fgraph.nodes.normal_wishart.NormalWishart`, which is the Gaussian–Wishart prior
``μ_k | Λ_k ~ N(m₀, (β₀ Λ_k)⁻¹)``, ``Λ_k ~ W(W₀, ν₀)`` of Bishop 2006, §10.2). With a categorical
switch under a Dirichlet weight it is the Bayesian Gaussian mixture (:mod:`fgraph.models.mixtures.gmm`).

**Why one variable for (μ_k, Λ_k).** The variational posterior of a Bayesian Gaussian mixture keeps μ_k
dependent on Λ_k (q(μ_k, Λ_k) = N(μ_k | m_k, (β_k Λ_k)⁻¹) W(Λ_k | W_k, ν_k), Bishop eq. 10.59–10.63).
Two variables, an ``MvNormal`` mean with a (scaled) ``Wishart`` precision, would be factorised by VMP
into q(μ_k) q(Λ_k) — another fixed point — and a structured cluster (μ_k, Λ_k) would have to span the
prior node and this node, which the engine's clusters (one node's interfaces) do not. The pair is
therefore one variable of the normal–Wishart family, as the pair (A_k, λ_k) of
:mod:`fgraph.nodes.linear_experts` is one matrix-normal–gamma variable.

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

import math

import numpy as np

from fgraph.errors import ModelError
from fgraph.families import Distribution
from fgraph.model import Model, PerCopy, Variable, plate_of
from fgraph.node import FactorNode
from fgraph.nodes.components import SharedComponents
from fgraph.registry import average_energy, energy_total
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
    plate's batch: m ``P + (K, d)``, β ``P + (K,)``, W ``P + (K, d, d)``, ν ``P + (K,)`` and
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
        "df": _placed(q_parameters.df, 0, node),
        "mean_logdet": _placed(q_parameters.mean_logdet, 0, node),
    }


def design_features(q_out: Distribution) -> np.ndarray:
    """Φ = [E[x xᵀ] packed, E[x], 1] per element of q(x)'s batch, shape ``batch + (d(d+1)/2 + d + 1,)``; the
    packed E[x xᵀ] is its upper triangle row by row (:func:`packed_indices`): the matrix is symmetric.

    E[log N(x | μ_k, Λ_k⁻¹)] is linear in Φ (:func:`log_likelihood_coefficients`), and the parameters' message
    holds the weighted plate sums Σ_n w_nk Φ_n, so both are one matrix product over the plate (with the
    triangle, of about half the width of vec E[x xᵀ] for larger d). Kept on q(x): for data (a point mass) Φ
    is built once per run."""
    return q_out.derived("_gaussian_design_features", lambda: _design_features(q_out))


def packed_indices(dimension: int) -> tuple:
    """(rows, columns) of the upper triangle of a d × d matrix, row by row: the packed layout of E[x xᵀ]."""
    return np.triu_indices(dimension)


def unpacked(packed: np.ndarray, dimension: int) -> np.ndarray:
    """The symmetric ``... × d × d`` matrices whose upper triangles are ``packed`` (``... + (d(d+1)/2,)``)."""
    rows, columns = packed_indices(dimension)
    full = np.empty(packed.shape[:-1] + (dimension, dimension))
    full[..., rows, columns] = packed
    full[..., columns, rows] = packed
    return full


def _design_features(q_out) -> np.ndarray:
    mean = np.asarray(q_out.mean, dtype=float)
    second = np.asarray(q_out.second_moment, dtype=float)
    batch, dimension = mean.shape[:-1], mean.shape[-1]
    rows, columns = packed_indices(dimension)
    triangle = len(rows)
    features = np.empty(batch + (triangle + dimension + 1,))
    features[..., :triangle] = second[..., rows, columns]
    features[..., triangle:-1] = mean
    features[..., -1] = 1.0
    return features


def log_likelihood_coefficients(q_parameters: Distribution, node) -> np.ndarray:
    """C with E[log N(x | μ_k, Λ_k⁻¹)] = Φ · C[:, k] (Φ of :func:`design_features`), shape
    ``copies + (1,) * plate + (d² + d + 1, K)`` (the components' moments' batch, K moved last).

    From E[(x − μ_k)ᵀ Λ_k (x − μ_k)] = ν_k tr(W_k E[x xᵀ]) − 2 ν_k E[x]ᵀ W_k m_k + ν_k m_kᵀ W_k m_k + d/β_k:
    the rows are −½ ν_k W_k packed (its off-diagonal entries doubled: each stands for two of the trace),
    ν_k W_k m_k and ½ E[log |Λ_k|] − (d/2) log 2π − d/(2β_k) − ½ ν_k m_kᵀ W_k m_k."""
    return q_parameters.derived_with(f"_log_likelihood_coefficients_{id(node)}", (),
                                     lambda: _log_likelihood_coefficients(q_parameters, node))


def _log_likelihood_coefficients(q_parameters, node) -> np.ndarray:
    moments = component_moments(q_parameters, node)
    location, scale, df = moments["location"], moments["scale"], moments["df"]
    components, dimension = location.shape[-2:]
    scaled_location = (scale @ location[..., None])[..., 0]  # W_k m_k
    constant = (0.5 * moments["mean_logdet"] - 0.5 * dimension * LOG_2PI - 0.5 * dimension / moments["precision_scale"]
                - 0.5 * df * np.sum(location * scaled_location, axis=-1))
    packed_rows, packed_columns = packed_indices(dimension)
    multiplicity = np.where(packed_rows == packed_columns, -0.5, -1.0)  # −½ on the diagonal, twice that off it
    quadratic = (df[..., None, None] * scale)[..., packed_rows, packed_columns] * multiplicity
    rows = np.concatenate([quadratic, df[..., None] * scaled_location, constant[..., None]], axis=-1)  # (..., K, F)
    return np.swapaxes(rows, -1, -2)


def expected_log_likelihoods(q_out: Distribution, q_parameters: Distribution, node) -> np.ndarray:
    """E[log N(x | μ_k, Λ_k⁻¹)] under q(x) q(θ) for every k, shape ``plate batch + (K,)``: Φ @ C, one matrix
    product over the plate, (N, d² + d + 1) @ (d² + d + 1, K).

    Kept on q(θ) for q(x): the switch's message and the free energy read the same numbers. The expansion of
    the quadratic form loses no more digits than the direct form for centred data
    (:func:`fgraph.models.mixtures.gmm.build_gmm` centres them)."""
    return q_parameters.derived_with(f"_expected_log_likelihoods_{id(node)}", (q_out,),
                                     lambda: _expected_log_likelihoods(q_out, q_parameters, node))


def _expected_log_likelihoods(q_out, q_parameters, node) -> np.ndarray:
    features = design_features(q_out)
    coefficients = log_likelihood_coefficients(q_parameters, node)
    batch = np.broadcast_shapes(features.shape[:-1], coefficients.shape[:-2])
    if coefficients.ndim > 2 and coefficients.shape[-3] == 1:  # shared by the plate's last axis: a matrix product
        result = features @ coefficients.reshape(coefficients.shape[:-3] + coefficients.shape[-2:])
    else:  # a single point (no plate)
        result = np.einsum("...f,...fk->...k", features, coefficients)
    return np.broadcast_to(result, batch + coefficients.shape[-1:])


def weighted_feature_sums(q_out: Distribution, q_switch: Distribution, node) -> np.ndarray:
    """S_k = Σ_n E[z_nk] Φ_n over the plate — the sums Σ_n w_nk E[x_n x_nᵀ] (packed), Σ_n w_nk E[x_n] and Σ_n w_nk
    side by side — shape ``copies + (K, F)``, F = d(d+1)/2 + d + 1: one matrix product over the plate,
    (K × n) @ (n × F).

    The parameters' message is made of them and the summed energy reads them (Σ_n w_nk Φ_n · C[:, k]); kept
    on q(z) for q(x). ``weights`` (``plate batch + (K,)``) and Φ (``plate batch + (d² + d + 1,)``,
    :func:`design_features`) broadcast together; copy axes are kept."""
    return q_switch.derived_with(f"_weighted_feature_sums_{id(node)}", (q_out,),
                                 lambda: _weighted_feature_sums(q_out, q_switch, node))


def _weighted_feature_sums(q_out, q_switch, node) -> np.ndarray:
    weights = switch_weights(q_switch, node.components)
    features = design_features(q_out)
    copies = getattr(node, "copy_ndim", 0)
    batch = tuple(np.broadcast_shapes(node.interface_batch_shape("out"), weights.shape[:-1], features.shape[:-1]))
    components, width = weights.shape[-1], features.shape[-1]
    kept = batch[:copies]
    count = math.prod(batch[copies:])
    w = np.broadcast_to(weights, batch + (components,)).reshape(kept + (count, components))
    phi = np.broadcast_to(features, batch + (width,)).reshape(kept + (count, width))
    if math.prod(kept) == 1:  # one copy: a plain matrix product (a stack of one runs slower in numpy)
        return (w.reshape(count, components).T @ phi.reshape(count, width)).reshape(kept + (components, width))
    return np.swapaxes(w, -1, -2) @ phi


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
    return node.plate_to_node_batch(-(weights * terms))  # the terms are finite: a zero weight adds zero


@energy_total(_gaussian_mixture_energy, per_copy=True)
def _gaussian_mixture_energy_total(q_out: Distribution, q_switch: Distribution, q_parameters: Distribution, node):
    """``(Σ_{k,n} U_kn, K · n)`` per copy: −Σ_k S_k · C[:, k] from the plate sums S the parameters' message
    made (:func:`weighted_feature_sums`) and the coefficients C (:func:`log_likelihood_coefficients`), without
    the K × n energies. ``None`` (the engine sums the energies above) when the components vary over the plate."""
    coefficients = log_likelihood_coefficients(q_parameters, node)
    copies = getattr(node, "copy_ndim", 0)
    if any(size != 1 for size in coefficients.shape[copies:-2]):
        return None
    sums = weighted_feature_sums(q_out, q_switch, node)  # copies + (K, F)
    coefficients = coefficients.reshape(coefficients.shape[:copies] + coefficients.shape[-2:])  # copies + (F, K)
    total = -np.einsum("...kf,...fk->...", sums, coefficients)
    return (float(total) if not copies else total), math.prod(node.batch_shape[copies:])


