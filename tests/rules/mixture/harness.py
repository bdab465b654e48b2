"""Call the mixture node's rules the way the engine does, and integrate its factor numerically.

The mixture node has a variable number of interfaces ``in1 ... inK``; rules
see them grouped as the tuple ``m_inputs`` (or ``q_inputs`` when every one of
them is a constant) and the rules for ``in_k`` receive ``index = k − 1``.
:func:`mixture_message` builds a node with K inputs, groups the inputs and
resolves the rule from their families exactly as the compiler does (so a
table case also checks which rule is chosen and the family it declares).

The factor is ``f(out, switch, in_1..in_K) = Π_k (c_k δ(out − in_k))^{switch_k}``:
the scale ``c_k = exp(log_scale of μ_in_k)`` of an input message is the
evidence of the sub-model behind it, which belongs to branch k alone (van Erp
et al. 2023, eq. 15: the branch factors are raised to ``m_k``). The deltas are
integrated analytically; the remaining integral over ``out`` is done by
``scipy.integrate.quad``.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import integrate

from fgraph import registry
from fgraph.families import Mixture, PointMass
from fgraph.message_families import common_family
from fgraph.nodes.mixture import MixtureNode

registry.load_rule_packages()

QUAD = dict(epsabs=0.0, epsrel=1e-13, limit=400)


def mixture_node(count: int) -> MixtureNode:
    interfaces = MixtureNode.interfaces_for(["out", "switch"] + [f"in{k + 1}" for k in range(count)])
    return MixtureNode("node", (), interfaces=interfaces)


def mixture_message(interface: str, inputs: dict, count: int, expected_rule: str | None = None):
    """The message towards ``interface`` (``"out"``, ``"switch"`` or ``"in<k>"``) for ``inputs``.

    ``inputs`` maps ``m_out``, ``m_switch``/``q_switch`` and ``m_in<k>``/``q_in<k>`` to distributions.
    """
    node = mixture_node(count)
    families = node.group_inputs({name: type(value) for name, value in inputs.items()}, common_family)
    grouped = node.group_inputs(dict(inputs), tuple)
    target = node.group_of(interface) or interface
    bound = registry.resolve(registry.MESSAGE, MixtureNode, target, families, "table test")
    if expected_rule is not None:
        assert bound.function.__name__ == expected_rule, bound.name
    index = node.group_index(interface) if node.group_of(interface) else None
    result = bound(grouped, node, index)
    declared = bound.output_for(families)
    assert isinstance(result, declared), (type(result), declared)
    return result


def scaled_density(message, x: float) -> float:
    """``exp(log_scale) · message(x)``."""
    return math.exp(float(message.log_scale) + float(message.logpdf(x)))


def overlap(first, second) -> float:
    """``∫ first(x) second(x) dx`` of the normalised densities (a point mass is evaluated, not integrated)."""
    if isinstance(first, PointMass):
        return math.exp(float(second.normalised().logpdf(first.value)))
    if isinstance(second, PointMass):
        return overlap(second, first)
    centre = float(first.mean)
    spread = 15.0 * math.sqrt(float(first.var)) + 15.0 * math.sqrt(float(second.var)) + abs(float(second.mean) - centre)
    breakpoints = [float(first.mean), float(second.mean)]
    for message in (first, second):
        if isinstance(message, Mixture):
            breakpoints += [float(c.mean) for c in message.components]
    value, _ = integrate.quad(
        lambda x: math.exp(float(first.normalised().logpdf(x)) + float(second.normalised().logpdf(x))),
        centre - spread, centre + spread, points=sorted(set(breakpoints)), **QUAD,
    )
    return value


def mass(message) -> float:
    """``∫ μ̄(x) dx`` of a normalised message (1 up to quadrature error; a point mass has mass 1)."""
    if isinstance(message, PointMass):
        return 1.0
    centre, half = float(message.mean), 20.0 * math.sqrt(float(message.var))
    value, _ = integrate.quad(lambda x: math.exp(float(message.normalised().logpdf(x))), centre - half, centre + half, **QUAD)
    return value


def numerical_switch_message(m_out, m_inputs: list) -> np.ndarray:
    """``log μ_switch(k) = log ∫∫ μ_out(out) c_k δ(out − in_k) μ̄_in_k(in_k) Π_{i≠k} μ̄_in_i(in_i)``.

    The delta is integrated analytically (``in_k = out``), the overlap over
    ``out`` and the masses of the other inputs by quadrature.
    """
    log_masses = [math.log(mass(m)) for m in m_inputs]
    return np.array([
        float(m_out.log_scale) + float(m.log_scale) + math.log(overlap(m_out, m))
        + sum(log_masses[:k] + log_masses[k + 1:])
        for k, m in enumerate(m_inputs)
    ])


def numerical_out_density(m_switch, m_inputs: list):
    """``x ↦ μ_out(x) = Σ_k μ_switch(k) c_k μ̄_in_k(x) Π_{i≠k} ∫ μ̄_in_i``.

    The delta is integrated analytically against in_k (``in_k = x``); the
    masses of the other inputs by quadrature.
    """
    p, scale = m_switch.probabilities, math.exp(float(m_switch.log_scale))
    masses = [mass(m) for m in m_inputs]
    weights = [
        scale * p[k] * math.exp(float(m.log_scale)) * math.prod(masses[:k] + masses[k + 1:])
        for k, m in enumerate(m_inputs)
    ]

    def density(x: float) -> float:
        return sum(w * math.exp(float(m.normalised().logpdf(x))) for w, m in zip(weights, m_inputs))

    return density


def numerical_log_integral(function, low: float, high: float, points=()) -> float:
    value, _ = integrate.quad(function, low, high, points=sorted(points) or None, **QUAD)
    return math.log(value)
