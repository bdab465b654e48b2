"""Reading a comparison off an inference run: model probabilities, evidences, posteriors, the best model.

The evidence of candidate k is ``log ∫ μ_out μ_in_k`` at the mixture node,
the log-scale of the product of the two messages on its k-th input (van Erp
et al. 2023, Theorem 3.1), computed in log space.
"""
from __future__ import annotations

import numpy as np

from fgraph.comparison.builders import recorded_comparison
from fgraph.errors import ModelError
from fgraph.families.base import stack_last
from fgraph.families.product import product
from fgraph.model import Model, Variable
from fgraph.nodes.mixture import MixtureNode


def _mixture_node(model: Model, name: str):
    for node in model.nodes:
        if isinstance(node, MixtureNode):
            out = model.connections[node.name]["out"]
            if isinstance(out, Variable) and out.name == name:
                return node
    mixtures = [model.connections[n.name]["out"].name for n in model.nodes if isinstance(n, MixtureNode)]
    raise ModelError(f"{name!r} is not the output of a mixture; mixtures in this model: {', '.join(mixtures) or '(none)'}")


def log_evidence_per_candidate(result, node_name: str) -> np.ndarray:
    """``log ∫ μ_out μ_in_k = log p(y | m = k)`` at a mixture node, shape ``node batch + (K,)``.

    Both messages are independent of the switch on a tree, so this holds for
    averaging, selection and combination alike; it is computed in log space
    (no underflow when one model dominates by thousands of nats).
    """
    node = result.plan.graph.node(node_name)
    towards_out = result.messages(node_name, "out")[1]
    terms = [product(towards_out, result.messages(node_name, interface)[1]).log_scale for interface in node.inputs]
    return stack_last(terms)


def _sum_to_batch(values: np.ndarray, batch: tuple) -> np.ndarray:
    """Sum ``values`` (``node batch + (K,)``) over the plate axes a switch of batch ``batch`` is shared across."""
    node_batch = values.shape[:-1]
    lead = len(node_batch) - len(batch)
    axes = tuple(range(lead)) + tuple(lead + i for i, size in enumerate(batch) if size == 1 and node_batch[lead + i] != 1)
    return values.sum(axis=axes) if axes else values


class ModelComparison:
    """What a run says about the candidates joined by the mixture ``name``.

    Attributes
    ----------
    names : tuple of str
        Candidate names, in switch order.
    method : str
        ``"average"``, ``"select"`` (point-mass switch) or ``"combine"`` (variational switch),
        read off the run.
    probabilities : dict name -> float or array
        ``q(m = k)``: the posterior model probabilities (averaging), a one-hot
        vector (selection), or per-observation assignment probabilities of
        shape ``batch`` (combination).
    log_evidence : dict name -> float or array
        ``log p(y | m = k)`` in nats, from the scale factors at the mixture node.
        Summed over the plate the switch is shared across; per observation
        when every observation has its own switch. Exact when the sub-models
        and the likelihood are sum-product on a tree.
    total_log_evidence : float or None
        ``log p(y) = log Σ_k p(m = k) p(y | m = k)`` when the run is exact
        (sum-product on a tree, i.e. averaging), else ``None`` (see
        ``result.free_energy``).
    posterior : Distribution
        ``q(name)``: the model-averaged posterior (a mixture of the candidates'
        conditional posteriors weighted by ``q(m)``).
    weights : Dirichlet or None
        ``q(π)`` of a combination; ``expected_weights`` its mean by name.
    best : str
        The most probable candidate: argmax of ``q(m)`` (of its mean over a
        batch of switches), or of ``E[π]`` for a combination.
    """

    def __init__(self, result, name: str):
        self.result = result
        self.name = name
        plan = result.plan
        model = plan.graph.model
        node = _mixture_node(model, name)
        recorded = recorded_comparison(model, name)
        switch = model.connections[node.name]["switch"]
        if not isinstance(switch, Variable):
            raise ModelError(f"the switch of mixture {name!r} is fixed; there is nothing to compare")
        self.switch = switch.name
        if recorded is not None:
            self.names = recorded.names
            weights = recorded.weights
        else:
            inputs = [model.connections[node.name][i] for i in node.inputs]
            self.names = tuple(i.name if isinstance(i, Variable) else f"in{k + 1}" for k, i in enumerate(inputs))
            weights = None
        self._ends = {key: model.connections[node.name][i] for key, i in zip(self.names, node.inputs)}
        if plan.forms.get(self.switch) == "point_mass":
            self.method = "select"
        elif plan.nodes[node.name].cluster_of.get("switch") == ("switch",) and len(plan.nodes[node.name].clusters) > 1:
            self.method = "combine"  # a variational switch: q(switch) is a cluster of its own
        else:
            self.method = "average"
        q_switch = result.marginal(self.switch).mean
        self.probabilities = {key: _scalar(q_switch[..., k]) for k, key in enumerate(self.names)}
        # Result exposes marginals, not messages; the evidences need the two messages at the mixture node
        evidences = _sum_to_batch(log_evidence_per_candidate(result, node.name), switch.batch_shape)
        self.log_evidence = {key: _scalar(evidences[..., k]) for k, key in enumerate(self.names)}
        self.total_log_evidence = result.log_evidence if plan.exact else None
        self.posterior = result.marginal(name)
        self.weights = result.marginal(weights) if weights is not None else None
        if self.weights is not None:
            self.expected_weights = {key: float(self.weights.mean[k]) for k, key in enumerate(self.names)}
            ranking = self.weights.mean
        else:
            self.expected_weights = None
            ranking = q_switch.reshape(-1, len(self.names)).mean(axis=0)
        self.best = self.names[int(np.argmax(ranking))]

    def _check_name(self, candidate: str, argument: str = "candidate") -> None:
        if candidate not in self.names:
            raise ModelError(f"{argument} {candidate!r} is not a candidate of {self.name!r}; the candidates are {list(self.names)}")

    def log_bayes_factor(self, first: str, second: str):
        """``log p(y | m = first) − log p(y | m = second)`` in nats (> 0 favours ``first``)."""
        self._check_name(first, "first")
        self._check_name(second, "second")
        return self.log_evidence[first] - self.log_evidence[second]

    def conditional(self, candidate: str):
        """``q`` of the candidate's variable: its posterior given the data and ``m = candidate``."""
        self._check_name(candidate)
        end = self._ends[candidate]
        if not isinstance(end, Variable):
            raise ModelError(f"candidate {candidate!r} is the fixed value {end.value!r}; it has no posterior")
        return self.result.marginal(end.name)

    def summary(self) -> str:
        """A table of the candidates: probability (or expected weight) and log evidence."""
        width = max(len(n) for n in self.names)
        column = "E[weight]" if self.weights is not None else "q(m)"
        lines = [f"{self.method} over {self.name!r} (best: {self.best})", f"{'candidate':<{width}}  {column:>10}  {'log p(y|m)':>12}"]
        for key in self.names:
            probability = self.expected_weights[key] if self.weights is not None else np.mean(self.probabilities[key])
            evidence = np.sum(self.log_evidence[key])
            lines.append(f"{key:<{width}}  {probability:>10.4f}  {evidence:>12.4f}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"ModelComparison({self.name!r}, method={self.method!r}, best={self.best!r})"


def _scalar(values):
    values = np.asarray(values)
    return float(values) if values.ndim == 0 else values


def compare(result, name: str) -> ModelComparison:
    """``ModelComparison(result, name)``."""
    return ModelComparison(result, name)
