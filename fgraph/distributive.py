"""Sum-product through a mixture message, component by component.

A sum-product message is linear in each incoming message,

    ∫ f(x, y, ...) (Σ_k w_k p_k(y)) ... dy = Σ_k w_k ∫ f(x, y, ...) p_k(y) ... dy,

so a rule written for one family serves a mixture of that family: apply it
to every component and weight the results by ``w_k`` times their own
log-scales (Theorem 4.1 of van Erp et al. 2023: messages propagated through
a factor shared by all models remain marginalised over the models). The
compiler binds this wrapper when a node has no rule of its own for a mixture
input; the component rule is resolved at compile time like any other.
"""
from __future__ import annotations

import numpy as np

from fgraph.families.base import logsumexp
from fgraph.families.mixture import Mixture
from fgraph.registry import BoundRule


def distributed_rule(component_rule: BoundRule, input_name: str, component_output: type) -> BoundRule:
    """A rule taking a mixture on ``input_name`` built from ``component_rule`` for its components."""

    def over_components(node=None, index=None, **inputs):
        mixture = inputs[input_name]
        outputs = []
        for component in mixture.components:
            outputs.append(component_rule(dict(inputs, **{input_name: component}), node, index))
        batch = np.broadcast_shapes(mixture.log_weights.shape[:-1], *(o.batch_shape for o in outputs))
        log_weights = np.stack(
            [np.broadcast_to(mixture.log_weights[..., k] + o.log_scale, batch) for k, o in enumerate(outputs)], axis=-1
        )
        return Mixture.create(log_weights, outputs, logsumexp(log_weights, axis=-1))

    over_components.__qualname__ = f"distributed[{component_rule.name}]"
    over_components.__module__ = "fgraph.distributive"
    names = component_rule.input_names
    return BoundRule(over_components, names, Mixture.of(component_output), True, True)
