"""Product of two random scalars: f(out, a, b) = δ(out − a·b).

Unlike :mod:`nodes.multiplication` (a known gain), both factors are random
here, so no message through the node is Gaussian: with a ~ N(μ_a, v_a) and
b ~ N(μ_b, v_b) the density of out = a·b is a product-normal density, with a
logarithmic peak at 0 and heavier tails than a Gaussian. The rules in
``rules/product`` represent every message by numerical integration over one
input, conditioning on it turns the delta into a Gaussian:

    out | a ~ N(a μ_b, a² v_b)  ⇒  μ_out(out) = ∫ N(a | μ_a, v_a) N(out | a μ_b, a² v_b) da
                                             ≈ Σ_i w_i N(out | a_i μ_b, a_i² v_b),

a mixture of Gaussians, one component per node a_i of a quadrature rule
(:func:`quadrature`) for the Gaussian m_a. It converges to the exact density
as the grid is refined. The messages back to ``a`` and ``b`` are built the
same way (a mixture over the nodes of the other input). An alternative
operator, ``"moment_matching"``, replaces the forward message by the Gaussian
with its exact mean and variance (select it with
``constraints={"operator": {<node name>: "moment_matching"}}``).

The factor is deterministic, so it has no average energy and only takes part
in sum-product message passing (see :mod:`nodes.addition`).
"""
from __future__ import annotations

import numpy as np

from fgraph.errors import ModelError
from fgraph.families.base import logsumexp
from fgraph.model import Variable, random_variable
from fgraph.node import FactorNode

__all__ = ["Product", "ProductNode"]

#: Uniform nodes spanning ±HALF_WIDTH standard deviations of the integrated Gaussian.
GRID_POINTS = 200
#: Geometric nodes on each side of 0, where the conditional density N(out | x μ, x² v) becomes a spike.
REFINEMENT_POINTS = 40
HALF_WIDTH = 8.0
#: Relative spacing of the geometric nodes near 0 (they stop where it equals the uniform spacing).
REFINEMENT_RATIO = 0.15
#: Innermost geometric node, in standard deviations of the integrated Gaussian.
SMALLEST = 1e-5


class ProductNode(FactorNode):
    """``out = a * b`` for two random scalars.

    Attributes ``grid_points`` and ``refinement_points`` set the size of the
    quadrature (messages are mixtures of ``grid_points + 2 refinement_points``
    components, times the number of components of a mixture input).
    """

    interfaces = ("out", "a", "b")
    event_ndims = {"out": 0, "a": 0, "b": 0}

    def __init__(self, name, batch_shape=(), power=1.0, interfaces=None, grid_points=GRID_POINTS,
                 refinement_points=REFINEMENT_POINTS, **attributes):
        if int(grid_points) < 3 or int(refinement_points) < 0:
            raise ValueError(
                f"node {name!r}: need grid_points >= 3 and refinement_points >= 0, got {grid_points}, {refinement_points}"
            )
        super().__init__(name, batch_shape, power, interfaces, grid_points=int(grid_points),
                         refinement_points=int(refinement_points), **attributes)


def Product(name, a, b, observed=None, batch_shape=None, grid_points=GRID_POINTS, refinement_points=REFINEMENT_POINTS):
    """The variable ``name = a * b`` of two scalar variables (use :func:`nodes.Multiply` for a known gain)."""
    for label, value in (("a", a), ("b", b)):
        if not isinstance(value, Variable):
            raise ModelError(f"Product {name!r}: {label} must be a variable; for a constant factor use Multiply")
        if value.event_ndim != 0:
            raise ModelError(f"Product {name!r}: {label} must be a scalar, got event shape {value.event_shape}")
    return random_variable(
        ProductNode, name, {"a": a, "b": b}, observed, batch_shape=batch_shape, event_shape=(),
        grid_points=grid_points, refinement_points=refinement_points,
    )


def quadrature(mean, var, grid_points: int = GRID_POINTS, refinement_points: int = REFINEMENT_POINTS):
    """Nodes x_i and log-weights log w_i with Σ_i w_i g(x_i) ≈ ∫ N(x | mean, var) g(x) dx.

    Built for integrands that are smooth except near x = 0, where the
    product rules' conditionals N(· | x μ, x² v) collapse to a spike: a
    uniform grid over mean ± HALF_WIDTH·sd, plus ``refinement_points``
    geometrically spaced nodes on each side of 0 (relative spacing about
    REFINEMENT_RATIO, from SMALLEST·sd up to where the uniform spacing takes
    over). Weights are trapezoid widths times the Gaussian density,
    normalised to sum to one, so a mixture built on them is normalised.

    Parameters
    ----------
    mean, var : arrays of one batch shape (var > 0)

    Returns
    -------
    nodes, log_weights : arrays of shape ``batch + (K,)``, K = grid_points + 2 refinement_points,
        nodes sorted along the last axis and never exactly 0.
    """
    mean = np.asarray(mean, dtype=float)[..., None]
    sd = np.sqrt(np.asarray(var, dtype=float))[..., None]
    unit = np.linspace(-HALF_WIDTH, HALF_WIDTH, grid_points)
    uniform = mean + sd * unit
    spacing = sd * (unit[1] - unit[0])
    if refinement_points:
        # geometrically from SMALLEST·sd out to spacing / REFINEMENT_RATIO
        inner, outer = SMALLEST * sd, spacing / REFINEMENT_RATIO
        near = inner * (outer / inner) ** np.linspace(0.0, 1.0, refinement_points)
        nodes = np.concatenate([uniform, near, -near], axis=-1)
    else:
        nodes = uniform
    nodes = np.sort(nodes, axis=-1)
    nodes = np.where(nodes == 0.0, 0.5 * SMALLEST * sd, nodes)  # a node at 0 would give a zero-variance component
    gaps = np.diff(nodes, axis=-1)
    widths = 0.5 * (np.concatenate([gaps[..., :1], gaps], axis=-1) + np.concatenate([gaps, gaps[..., -1:]], axis=-1))
    with np.errstate(divide="ignore"):
        log_weights = np.log(widths) - 0.5 * (nodes - mean) ** 2 / sd**2
    log_weights = log_weights - logsumexp(log_weights, axis=-1, keepdims=True)
    return nodes, log_weights


def product_moments(mean_a, var_a, mean_b, var_b):
    """Exact mean and variance of a·b for independent a, b: (μ_a μ_b, v_a v_b + μ_a² v_b + μ_b² v_a)."""
    return mean_a * mean_b, var_a * var_b + mean_a**2 * var_b + mean_b**2 * var_a


def mixture_family_of(message_family: type) -> type:
    """The component family of a message pulled back through ``out = x·other`` (normal or point mass)."""
    from fgraph.families import Mixture, PointMass, UnivariateNormal

    if issubclass(message_family, Mixture):
        message_family = message_family.component_family
    return PointMass if issubclass(message_family, PointMass) else UnivariateNormal


def pull_back(m_out, nodes, log_weights):
    """``Σ_j w_j m_out(x · c_j)`` as a function of x: the message to one input given the other at nodes c_j.

    ``m_out`` is a normalised normal, point mass or mixture of either, with
    batch shape ``batch``; ``nodes`` and ``log_weights`` (shape ``batch + (J,)``)
    describe the other input. Each term is the scaled density
    m_out(x c_j) = N(x | μ/c_j, v/c_j²) / |c_j| (or δ(x − w/c_j) / |c_j|), so
    the result is a mixture of J (times the number of components of
    ``m_out``) components whose log-scale is log Σ_j w_j / |c_j|.

    Returns
    -------
    (log_weights, components, log_scale) for :meth:`Mixture.create`.
    """
    from fgraph.families import Mixture, NormalMeanVariance, PointMass

    if isinstance(m_out, Mixture):
        parts = list(zip(np.moveaxis(m_out.log_weights, -1, 0), m_out.components))
    else:
        parts = [(np.zeros(m_out.batch_shape), m_out)]
    batch = np.broadcast_shapes(nodes.shape[:-1], m_out.batch_shape)
    nodes = np.broadcast_to(nodes, batch + nodes.shape[-1:])
    log_weights = np.broadcast_to(log_weights, nodes.shape) - np.log(np.abs(nodes))
    all_log_weights, components = [], []
    for part_log_weight, component in parts:
        for j in range(nodes.shape[-1]):
            node = nodes[..., j]
            if isinstance(component, PointMass):
                components.append(PointMass(component.value / node, 0))
            else:
                components.append(NormalMeanVariance(component.mean / node, component.var / node**2, check=False))
            all_log_weights.append(np.broadcast_to(part_log_weight + log_weights[..., j], batch))
    stacked = np.stack(all_log_weights, axis=-1)
    return stacked, components, logsumexp(stacked, axis=-1)


def message_to_input(m_out, other, node):
    """The message to one input of ``out = x·other`` given ``m_out`` and the message (or value) of the other.

    With ``other`` a Gaussian, μ(x) = ∫ m_out(x c) m_other(c) dc is
    approximated on the quadrature nodes of m_other (:func:`pull_back`): a
    mixture. With ``other`` a point mass c it is exact, m_out(x c) = m_out
    rescaled by 1/c with log-scale −log|c|.
    """
    from fgraph.families import Mixture, PointMass

    if isinstance(other, PointMass):
        nodes, log_weights = np.asarray(other.value, dtype=float)[..., None], np.zeros(np.shape(other.value) + (1,))
    else:
        nodes, log_weights = quadrature(other.mean, other.var, node.grid_points, node.refinement_points)
    log_weights, components, log_scale = pull_back(m_out.normalised(), nodes, log_weights)
    if len(components) == 1:
        return components[0].with_log_scale(log_scale)
    return Mixture.create(log_weights, components, log_scale)


def input_message_family(families: dict) -> type:
    """Family of :func:`message_to_input`'s result, from the families of its inputs."""
    from fgraph.families import Mixture, PointMass

    m_out = families.get("m_out", families.get("q_out"))
    other = next(f for name, f in families.items() if name not in ("m_out", "q_out"))
    component = mixture_family_of(m_out)
    if issubclass(other, PointMass) and not issubclass(m_out, Mixture):
        return component
    return Mixture.of(component)
