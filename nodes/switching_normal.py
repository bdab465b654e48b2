"""The switching normal likelihood: f(out, switch, mean_1..mean_K) = Π_k N(out | mean_k, v_k)^{switch_k}.

A one-hot ``switch`` selects which of K means the observation ``out`` is centred on, with a known
variance v_k per component (attribute ``var``). It is the likelihood of a Gaussian mixture with
the component means as interfaces, written as one exponential-family factor (eq. 34 of van Erp
et al. 2023, the voice-activity model): unlike the mixture node (:mod:`fgraph.nodes.mixture`), which
compares the evidences of whole sub-models, its messages are variational, so a mean may be a state
of a chain that the other time steps also see (the speech of a voice-activity model): under the
mean-field factorisation q(out) q(switch) Π_k q(mean_k)

* to ``switch``: log μ(k) = E[log N(out | mean_k, v_k)]
  = −½ log 2π v_k − (E[out²] − 2 E[out] E[mean_k] + E[mean_k²]) / (2 v_k);
* to ``mean_k``: N(mean_k | E[out], v_k / E[switch_k]) (precision E[switch_k] / v_k);
* to ``out``: the normal of precision Σ_k E[switch_k] / v_k and weighted mean Σ_k E[switch_k] E[mean_k] / v_k.

The node is variational only (``"mf"``); its free-energy term is −Σ_k E[switch_k] E[log N(out | mean_k, v_k)].
"""
from __future__ import annotations

import numpy as np

from fgraph.errors import ModelError
from fgraph.families import Distribution
from fgraph.families.base import sum_last_axis
from fgraph.families.normal import LOG_2PI
from fgraph.model import random_variable
from fgraph.node import FactorNode
from fgraph.registry import average_energy

__all__ = ["SwitchingNormal", "SwitchingNormalNode"]


class SwitchingNormalNode(FactorNode):
    """``out`` (scalar), ``switch`` (one-hot over K), ``mean1..meanK`` (scalars); attribute ``var`` (K,) > 0."""

    interfaces = ("out", "switch")
    variadic = ("mean", "means")
    event_ndims = {"out": 0, "switch": 1, "means": 0}

    def __init__(self, name, batch_shape=(), power=1.0, interfaces=None, var=None, **attributes):
        super().__init__(name, batch_shape, power, interfaces, **attributes)
        count = len(self.means)
        var = np.asarray(var, dtype=float)
        if var.ndim == 0:
            var = np.full(count, float(var))
        if var.shape != (count,) or not np.all(np.isfinite(var)) or np.any(var <= 0.0):
            raise ValueError(f"node {name!r}: var must be one positive finite variance or one per component "
                             f"({count}), got {var!r}")
        self.var = var

    @property
    def means(self) -> tuple:
        return tuple(i for i in self.interfaces if i not in type(self).interfaces)

    def interface_event_ndim(self, interface: str) -> int:
        return 1 if interface == "switch" else 0

    @classmethod
    def parameter_event_ndim(cls, interface: str, attributes: dict) -> int:
        return 1 if interface == "switch" else 0

    def check_event_shapes(self, event_shapes: dict) -> None:
        categories = event_shapes["switch"][-1] if event_shapes["switch"] else None
        if categories is not None and categories != len(self.means):
            raise ValueError(f"the switch has K = {categories} categories but the node has {len(self.means)} means; "
                             "give one mean per category of the switch")


def SwitchingNormal(name, switch, means, var, observed=None, batch_shape=None):
    """The scalar ``name ~ N(means[k], var[k])`` for the k the one-hot ``switch`` selects.

    ``means`` are K ≥ 2 variables or numbers (e.g. a chain's states and a plate of noise values),
    ``var`` one positive variance or K of them. Run it with ``algorithm="vmp"``.
    """
    means = list(means)
    if len(means) < 2:
        raise ModelError(f"SwitchingNormal {name!r}: give at least two means, got {len(means)}")
    parameters = {"switch": switch}
    parameters.update({f"mean{k + 1}": value for k, value in enumerate(means)})
    return random_variable(SwitchingNormalNode, name, parameters, observed, batch_shape, var=var)


def switch_probabilities(q_switch: Distribution, count: int) -> np.ndarray:
    """E[switch] (..., K)."""
    probabilities = np.asarray(q_switch.mean, dtype=float)
    if probabilities.shape[-1:] != (count,):
        raise ValueError(f"the switch has {probabilities.shape[-1:]} categories, the node {count} means")
    return probabilities


def expected_log_likelihoods(q_out: Distribution, q_means: tuple, var: np.ndarray) -> np.ndarray:
    """E[log N(out | mean_k, v_k)] for every k, shape ``batch + (K,)``."""
    mean_out, second_out = np.asarray(q_out.mean, dtype=float), np.asarray(q_out.second_moment, dtype=float)
    terms = []
    for q_mean, v in zip(q_means, var):
        squared = second_out - 2.0 * mean_out * np.asarray(q_mean.mean) + np.asarray(q_mean.second_moment)
        terms.append(-0.5 * (LOG_2PI + np.log(v)) - 0.5 * squared / v)
    return np.stack(np.broadcast_arrays(*terms), axis=-1)


@average_energy(SwitchingNormalNode)
def _switching_normal_energy(q_out: Distribution, q_switch: Distribution, q_means: Distribution, node):
    """−Σ_k E[switch_k] E[log N(out | mean_k, v_k)] per element, under the mean-field factorisation."""
    weights = switch_probabilities(q_switch, len(node.means))
    return -sum_last_axis(np.where(weights > 0.0, weights * expected_log_likelihoods(q_out, q_means, node.var), 0.0))
