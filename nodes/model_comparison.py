"""Bayesian model comparison with the mixture node: averaging, selection and combination.

Candidate models that share parts (the likelihood, a common prior) are
written once each, as small functions that build their own part inside the
active model and return the variable through which it meets the shared
part::

    candidates = {
        "left": lambda: Normal("x_left", mean=-3.0, var=1.0),
        "middle": lambda: Normal("x_middle", mean=0.0, var=1.0),
        "right": lambda: Normal("x_right", mean=4.0, var=1.0),
    }
    with fg.Model() as model:
        x = average("x", candidates, prior=[0.2, 0.5, 0.3])
        Normal("y", mean=x, var=5.0, observed=data)
    comparison = ModelComparison(fg.infer(model), "x")
    comparison.probabilities   # {"left": p(m = left | y), ...}
    comparison.log_evidence    # {"left": log p(y | m = left), ...}

A builder joins the candidates with a switch ``m`` (one-hot over the K
candidates) through ``x = Mixture(m, [x_1, ..., x_K])``; the methods differ
only in the prior on ``m`` and the constraints on ``q(m)`` (van Erp et al.
2023, §5, Fig. 5):

* :func:`average` — Bayesian model averaging: ``m ~ Cat(prior)``, exact
  sum-product. ``q(m)`` is the posterior ``p(m | y)``, ``q(x)`` the
  model-averaged posterior.
* :func:`select` — Bayesian model selection: the same graph with the form
  constraint ``q(m) = δ(m − e_k)``, ``k = argmax_k μ→(m_k) μ←(m_k)``
  (:func:`selection_settings`).
* :func:`combine` — Bayesian model combination: one switch per observation,
  ``m_n ~ Cat(π)``, ``π ~ Dir(α)``, a variational ``q(π) Π_n q(m_n)`` with the
  sub-models kept sum-product (:func:`combination_settings`).
* :func:`combine_online` — model combination on streaming data (§5.3.1 and
  §6.1): each observation is assigned by a point mass to its most probable
  model, ``q(π) = Dir(α_t + m_n)``, starting from an informative prior that
  Bayesian model reduction (:func:`dirichlet_model_reduction`) replaces by the
  vague target prior at the end.

A candidate function may take a ``batch_shape`` parameter: the builders then
pass the plate of the mixture, so that each copy (observation) gets its own
sub-model. A candidate without it builds its part once and every copy
shares it. The switch is an ordinary variable: ``average(..., switch=z)``
joins candidates under any prior on ``z`` (a Markov chain over the model
index, a hierarchical prior).

:class:`ModelComparison` reads a result: posterior model probabilities,
log evidences ``log p(y | m = k)`` per candidate (from the scale factors of
the messages at the mixture node), the model-averaged posterior and the best
model.
"""
from __future__ import annotations

import inspect
import sys
import weakref
from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

from fgraph.constraints import Constraints
from fgraph.errors import DataError, ModelError
from fgraph.families.base import stack_last
from fgraph.families.categorical import SIMPLEX_TOLERANCE
from fgraph.families.categorical import Categorical as CategoricalDistribution
from fgraph.families.dirichlet import Dirichlet as DirichletDistribution
from fgraph.families.dirichlet import log_multivariate_beta
from fgraph.families.pointmass import PointMass
from fgraph.families.product import product
from fgraph.inference import compile as compile_model
from fgraph.inference import run
from fgraph.model import Data, Model, Variable
from nodes.categorical import Categorical
from nodes.dirichlet import Dirichlet
from nodes.mixture import Mixture, MixtureNode

__all__ = [
    "average",
    "select",
    "combine",
    "selection_settings",
    "combination_settings",
    "ModelComparison",
    "compare",
    "combine_online",
    "OnlineCombination",
    "dirichlet_model_reduction",
]

#: Total concentration per category of the informative prior an online combination starts from, by default.
DEFAULT_START_CONCENTRATION = 100.0


# ------------------------------------------------------------------ specs
@dataclass(frozen=True)
class _Comparison:
    """What a builder placed in a model: the names the settings helpers and readers need."""

    name: str  # the mixture's output variable (and node)
    method: str  # "average", "select" or "combine"
    names: tuple  # candidate names, in switch order
    switch: str  # switch variable
    prior: np.ndarray | None  # fixed prior probabilities of the switch (None: the switch has its own model)
    weights: str | None = None  # Dirichlet variable π of a combination
    alpha: np.ndarray | None = None  # its concentrations


_COMPARISONS: "weakref.WeakKeyDictionary[Model, dict]" = weakref.WeakKeyDictionary()


def _register(model: Model, comparison: _Comparison) -> None:
    _COMPARISONS.setdefault(model, {})[comparison.name] = comparison


def _comparisons_of(model: Model, name: str | None, method: str, helper: str) -> list:
    recorded = _COMPARISONS.get(model, {})
    if name is not None:
        comparison = recorded.get(name)
        if comparison is None or comparison.method != method:
            known = sorted(n for n, c in recorded.items() if c.method == method)
            raise ModelError(
                f"{helper}: name {name!r} is not a {method!r} comparison of this model; "
                f"the model has: {', '.join(known) or '(none)'}"
            )
        return [comparison]
    found = [c for c in recorded.values() if c.method == method]
    if not found:
        raise ModelError(f"{helper}: the model has no comparison built with {method}()")
    return found


# ------------------------------------------------------------ validation
def _candidate_names(candidates) -> tuple:
    if not isinstance(candidates, Mapping):
        raise ModelError(
            "candidates must be a dict {name: function}, each function building its sub-model in the "
            f"active model and returning the variable that enters the mixture; got {type(candidates).__name__}"
        )
    names = tuple(candidates)
    if len(names) < 2:
        raise ModelError(f"candidates: give at least two candidate models, got {len(names)}")
    for key, function in candidates.items():
        if not isinstance(key, str) or not key:
            raise ModelError(f"candidates: names must be non-empty strings, got {key!r}")
        if not callable(function):
            raise ModelError(
                f"candidates[{key!r}] must be a function that builds the sub-model and returns its variable, "
                f"got {type(function).__name__}"
            )
    return names


def _probability_vector(value, names: tuple, argument: str) -> np.ndarray:
    """A probability vector over the candidates from an array or a dict keyed by candidate name."""
    vector = _per_candidate(value, names, argument)
    if np.any(vector < 0.0):
        worst = int(np.argmin(vector))
        raise ModelError(
            f"{argument} must hold non-negative probabilities, got {float(vector[worst]):g} for candidate {names[worst]!r}"
        )
    total = float(vector.sum())
    if abs(total - 1.0) > SIMPLEX_TOLERANCE:
        raise ModelError(
            f"{argument} must sum to one (a probability vector over the candidates), but it sums to {total:.6g}"
        )
    return vector


def _concentrations(value, names: tuple, argument: str) -> np.ndarray:
    """Dirichlet concentrations over the candidates: a positive number (for all) or one per candidate."""
    if np.ndim(value) == 0 and not isinstance(value, Mapping):
        value = np.full(len(names), _finite_float(value, argument))
    vector = _per_candidate(value, names, argument)
    if np.any(vector <= 0.0):
        worst = int(np.argmin(vector))
        raise ModelError(
            f"{argument} must hold positive concentrations, got {float(vector[worst]):g} for candidate {names[worst]!r}"
        )
    return vector


def _finite_float(value, argument: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ModelError(f"{argument} must be a number or one number per candidate, got {value!r}") from None
    if not np.isfinite(number):
        raise ModelError(f"{argument} must be finite, got {number!r}")
    return number


def _per_candidate(value, names: tuple, argument: str) -> np.ndarray:
    if isinstance(value, Mapping):
        unknown = [key for key in value if key not in names]
        if unknown:
            raise ModelError(
                f"{argument} names unknown candidate(s) {unknown}; the candidates are {list(names)}"
            )
        missing = [key for key in names if key not in value]
        if missing:
            raise ModelError(f"{argument} has no entry for candidate(s) {missing}; give one per candidate")
        value = [value[key] for key in names]
    try:
        vector = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"{argument} must be numeric, got {value!r}") from None
    if vector.shape != (len(names),):
        raise ModelError(
            f"{argument} must have one entry per candidate ({len(names)}: {', '.join(names)}), "
            f"got shape {vector.shape}"
        )
    if not np.all(np.isfinite(vector)):
        raise ModelError(f"{argument} contains NaN or infinite values")
    return vector


def _plate(batch_shape, argument: str = "batch_shape") -> tuple:
    if batch_shape is None:
        return ()
    if np.ndim(batch_shape) == 0:
        batch_shape = (batch_shape,)
    try:
        plate = tuple(int(size) for size in batch_shape)
    except (TypeError, ValueError):
        raise ModelError(f"{argument} must be a tuple of positive integers, got {batch_shape!r}") from None
    if any(size < 1 for size in plate):
        raise ModelError(f"{argument} must be a tuple of positive integers, got {batch_shape!r}")
    return plate


def _takes_batch_shape(function: Callable) -> bool:
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):  # builtins without a signature
        return False
    return "batch_shape" in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


def _is_finite_number(value) -> bool:
    try:
        return value is not None and bool(np.all(np.isfinite(np.asarray(value, dtype=float))))
    except (TypeError, ValueError):
        return False


def _build_candidates(candidates: Mapping, names: tuple, plate: tuple) -> list:
    """Call every candidate function in the active model; check what comes back."""
    model = Model.current()
    ends = []
    for key in names:
        function = candidates[key]
        end = function(batch_shape=plate) if _takes_batch_shape(function) else function()
        if isinstance(end, Variable):
            if end.model is not model:
                raise ModelError(f"candidates[{key!r}] returned variable {end.name!r} of another model")
        elif not _is_finite_number(end):
            raise ModelError(
                f"candidates[{key!r}] returned {end!r}; a candidate must return the variable that enters the "
                "mixture (or a fixed number)"
            )
        ends.append(end)
    shapes = {key: end.event_shape for key, end in zip(names, ends) if isinstance(end, Variable)}
    if len(set(shapes.values())) > 1:
        raise ModelError(f"candidates: the returned variables must share one event shape, got {shapes}")
    return ends


# -------------------------------------------------------------- builders
def average(name: str, candidates: Mapping, prior=None, batch_shape=None, switch: Variable | None = None) -> Variable:
    """Bayesian model averaging: ``name = Mixture(m, candidates)`` with ``m ~ Cat(prior)``.

    Parameters
    ----------
    name : str
        The variable the candidates' ends merge into; the switch is ``"<name>_model"``.
    candidates : dict name -> function
        Each function builds its sub-model in the active model and returns the
        variable (or number) that enters the mixture; it may take
        ``batch_shape`` (see the module docstring).
    prior : array of K probabilities or dict name -> probability, optional
        ``p(m)``; uniform by default.
    batch_shape : tuple, optional
        Plate of the mixture (copies of the sub-models sharing one switch, as in
        van Erp et al. Fig. 5a); ``()`` by default.
    switch : Variable, optional
        An existing categorical variable (event shape ``(K,)``) to use as the
        switch instead of ``m ~ Cat(prior)``: any model of the model index
        (a Markov chain, a hierarchical prior). Exclusive with ``prior``.

    Returns
    -------
    Variable ``name`` (the model-averaged quantity). Run ``fg.infer(model)``
    (sum-product) and read it with :class:`ModelComparison`.
    """
    return _mixture_of_candidates("average", name, candidates, prior, batch_shape, switch)


def select(name: str, candidates: Mapping, prior=None, batch_shape=None, switch: Variable | None = None) -> Variable:
    """Bayesian model selection: the graph of :func:`average`, to be run with ``q(m)`` a point mass.

    Takes the same arguments and returns the same variable as :func:`average`.
    Selection is a form constraint on the switch, so run it with
    ``fg.infer(model, **selection_settings(model))``; :class:`ModelComparison`
    then reports a one-hot ``q(m)`` at the selected (MAP) model and ``q(name)``
    equal to that model's posterior.
    """
    return _mixture_of_candidates("select", name, candidates, prior, batch_shape, switch)


def _mixture_of_candidates(method, name, candidates, prior, batch_shape, switch) -> Variable:
    names = _candidate_names(candidates)
    plate = _plate(batch_shape)
    model = Model.current()
    if switch is not None:
        if prior is not None:
            raise ModelError(f"{method}({name!r}): give either prior or switch, not both")
        if not isinstance(switch, Variable):
            raise ModelError(f"switch must be a categorical variable of the model, got {type(switch).__name__}")
        if switch.event_shape != (len(names),):
            raise ModelError(
                f"switch {switch.name!r} has event shape {switch.event_shape}, but there are {len(names)} "
                f"candidates ({', '.join(names)}); it must be one-hot over them"
            )
        probabilities = None
    else:
        probabilities = np.full(len(names), 1.0 / len(names)) if prior is None else _probability_vector(prior, names, "prior")
        switch = Categorical(f"{name}_model", p=probabilities)
    ends = _build_candidates(candidates, names, plate)
    output = Mixture(name, switch, ends, batch_shape=plate or None)
    _register(model, _Comparison(name, method, names, switch.name, probabilities))
    return output


def combine(name: str, candidates: Mapping, alpha=1.0, batch_shape=None) -> Variable:
    """Bayesian model combination: one switch per observation, ``m_n ~ Cat(π)``, ``π ~ Dir(alpha)``.

    Creates ``"<name>_weights"`` (π, a probability vector over the candidates),
    ``"<name>_model"`` (the switches, batch ``batch_shape``) and the plated
    mixture ``name`` (batch ``batch_shape``). Candidates that take
    ``batch_shape`` get the plate, so every observation has its own sub-model
    copy (needed for exact per-observation evidences).

    Parameters
    ----------
    alpha : positive number, K numbers or dict name -> number
        Concentrations of the Dirichlet prior on the mixing weights π.
    batch_shape : int or tuple
        The plate of observations (required), e.g. ``(N,)``.

    Run with ``fg.infer(model, **combination_settings(model))`` (variational
    message passing with the sub-models and the likelihood kept sum-product);
    ``ModelComparison(result, name).weights`` is ``q(π)``.
    """
    names = _candidate_names(candidates)
    if batch_shape is None:
        raise ModelError(f"combine({name!r}): batch_shape is required (the plate of observations, e.g. (N,))")
    plate = _plate(batch_shape)
    concentrations = _concentrations(alpha, names, "alpha")
    model = Model.current()
    weights = Dirichlet(f"{name}_weights", alpha=concentrations)
    switch = Categorical(f"{name}_model", p=weights, batch_shape=plate)
    ends = _build_candidates(candidates, names, plate)
    output = Mixture(name, switch, ends, batch_shape=plate)
    _register(model, _Comparison(name, "combine", names, switch.name, None, weights.name, concentrations))
    return output


# ------------------------------------------------------- settings helpers
def _merged(constraints) -> Constraints:
    base = Constraints.coerce(constraints)
    return Constraints(dict(base.factorization), dict(base.form), dict(base.operator))


def _as_dict(constraints: Constraints) -> dict:
    return {"factorization": constraints.factorization, "form": constraints.form, "operator": constraints.operator}


def selection_settings(model: Model, name: str | None = None, constraints=None, init=None, iterations: int = 2) -> dict:
    """Keyword arguments for ``fg.infer`` that turn :func:`select` models into model selection.

    Adds the form constraint ``"point_mass"`` on the switch of ``name`` (or of
    every :func:`select` comparison in ``model``) and an initial point mass at
    the prior's most probable candidate (the first one when the switch has
    its own model), which the schedule needs wherever ``q(m)`` is read before
    the evidences reach it. ``constraints`` and ``init`` are merged in (yours
    win). Two sweeps: the first computes the evidences and the selection, the
    second passes the selected sub-model on.

    Returns ``{"constraints": ..., "init": ..., "iterations": ...}``::

        result = fg.infer(model, **selection_settings(model))
    """
    chosen = _comparisons_of(model, name, "select", "selection_settings")
    merged = _merged(constraints)
    initial = {}
    for comparison in chosen:
        merged.form.setdefault(comparison.switch, "point_mass")
        favourite = 0 if comparison.prior is None else int(np.argmax(comparison.prior))
        initial[comparison.switch] = PointMass(np.eye(len(comparison.names))[favourite], 1)
    initial.update(init or {})
    return {"constraints": _as_dict(merged), "init": initial, "iterations": iterations}


def combination_settings(model: Model, name: str | None = None, constraints=None, init=None) -> dict:
    """Keyword arguments for ``fg.infer`` that run :func:`combine` models by variational message passing.

    ``algorithm="vmp"`` with the mean-field factorisation
    ``q(π) Π_n q(m_n) q(sub-models, x)`` at the Dirichlet, categorical and
    mixture nodes, and factorisation ``"bp"`` for every other node (the
    sub-models and the likelihood), so that the evidences ``p(y_n | m_n = k)``
    the switches receive are exact. The switches start from ``q(m_n) =
    Cat(α / Σα)``. Nodes named (or typed) in ``constraints`` keep your choice;
    ``init`` is merged in (yours wins).

    Returns ``{"algorithm": "vmp", "constraints": ..., "init": ...}``::

        result = fg.infer(model, **combination_settings(model), iterations=100, tol=1e-8)
    """
    chosen = _comparisons_of(model, name, "combine", "combination_settings")
    merged = _merged(constraints)
    variational = set()
    initial = {}
    for comparison in chosen:
        variational.update({comparison.weights, comparison.switch, comparison.name})
        initial[comparison.switch] = CategoricalDistribution(comparison.alpha / comparison.alpha.sum())
    typed = [key for key in merged.factorization if isinstance(key, type)]
    for node in model.nodes:
        if node.name in variational or node.name in merged.factorization:
            continue
        if any(isinstance(node, key) for key in typed):
            continue
        merged.factorization[node.name] = "bp"
    initial.update(init or {})
    return {"algorithm": "vmp", "constraints": _as_dict(merged), "init": initial}


# ----------------------------------------------------------------- reading
def _mixture_node(model: Model, name: str):
    for node in model.nodes:
        if isinstance(node, MixtureNode):
            out = model.connections[node.name]["out"]
            if isinstance(out, Variable) and out.name == name:
                return node
    mixtures = [model.connections[n.name]["out"].name for n in model.nodes if isinstance(n, MixtureNode)]
    raise ModelError(f"{name!r} is not the output of a mixture; mixtures in this model: {', '.join(mixtures) or '(none)'}")


def _log_evidence_per_candidate(result, node_name: str) -> np.ndarray:
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
        recorded = _COMPARISONS.get(model, {}).get(name)
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
        evidences = _sum_to_batch(_log_evidence_per_candidate(result, node.name), switch.batch_shape)
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


# ---------------------------------------------------- Bayesian model reduction
def dirichlet_model_reduction(posterior_alpha, prior_alpha, reduced_alpha):
    """Replace the prior of a Dirichlet posterior without refitting (Bayesian model reduction).

    For a posterior ``Dir(α̃)`` obtained under the prior ``Dir(α)`` from a
    likelihood that does not depend on the prior, the posterior under the
    prior ``Dir(α')`` is ``Dir(α̃ − α + α')`` and the log evidence changes by

        log B(α̃ − α + α') − log B(α̃) − log B(α') + log B(α),

    with ``B`` the multivariate Beta function (Friston, Parr and Zeidman
    2019). Arrays broadcast over leading (batch) axes; the last axis holds the
    K concentrations.

    Returns
    -------
    (Dirichlet, change in log evidence in nats, shape batch)
    """
    posterior_alpha, prior_alpha, reduced_alpha = (np.asarray(a, dtype=float) for a in (posterior_alpha, prior_alpha, reduced_alpha))
    for argument, value in (("posterior_alpha", posterior_alpha), ("prior_alpha", prior_alpha), ("reduced_alpha", reduced_alpha)):
        if value.ndim < 1 or not np.all(np.isfinite(value)) or np.any(value <= 0.0):
            raise ModelError(f"{argument} must be a vector of positive, finite concentrations, got {value!r}")
    alpha = posterior_alpha - prior_alpha + reduced_alpha
    if np.any(alpha <= 0.0):
        raise ModelError(
            "the reduced posterior α̃ − α + α' has a non-positive concentration; the reduced prior must not "
            "remove more than the data added"
        )
    change = (
        log_multivariate_beta(alpha)
        - log_multivariate_beta(posterior_alpha)
        - log_multivariate_beta(reduced_alpha)
        + log_multivariate_beta(prior_alpha)
    )
    return DirichletDistribution(alpha), change


# -------------------------------------------------------- online combination
@dataclass
class OnlineCombination:
    """The outcome of :func:`combine_online` (what was computed, if interrupted).

    Attributes
    ----------
    names : tuple of str
    posterior : Dirichlet
        ``q(π)`` under the target prior ``Dir(prior)``, by Bayesian model reduction.
    posterior_informative : Dirichlet
        ``q(π) = Dir(start_prior + counts)``, under the prior the stream ran with.
    prior, start_prior : array (K,)
        The target (vague) and the starting (informative) concentrations.
    assignments : int array (n,)
        Index of the candidate each processed observation was assigned to.
    probabilities : array (n, K)
        The belief each assignment was read from, ``p(m_n | y_n, α_{n−1})``
        (the forward message ``Cat(α / Σα)`` times the evidences, normalised).
    log_evidences : array (n, K)
        ``log p(y_n | m_n = k)`` of every processed observation (the message to its switch).
    log_evidence_change : float
        Change of ``log p(y, m̂)`` from the starting to the target prior (the reduction's term).
    log_evidence : float
        ``log p(y_1..n, m̂_1..n)`` under the target prior: the evidences of the
        assigned models plus ``log B(prior + counts) − log B(prior)``.
    counts : array (K,)
        Number of observations assigned to each candidate.
    processed : int
        Observations processed; ``interrupted`` says whether the stream was stopped early.
    """

    names: tuple
    posterior: DirichletDistribution
    posterior_informative: DirichletDistribution
    prior: np.ndarray
    start_prior: np.ndarray
    assignments: np.ndarray
    probabilities: np.ndarray
    log_evidences: np.ndarray
    log_evidence_change: float
    log_evidence: float
    counts: np.ndarray
    processed: int
    interrupted: bool = False

    @property
    def expected_weights(self) -> dict:
        """``E[π_k]`` under :attr:`posterior`, by candidate name."""
        return {key: float(self.posterior.mean[k]) for k, key in enumerate(self.names)}


class _Step:
    """One compiled model of a mini-batch of ``size`` observations."""

    def __init__(self, name, candidates, names, likelihood, plate):
        with Model(f"{name}_online") as model:
            prior = Data(f"{name}_prior", shape=(len(names),), event_ndim=1)
            switch = Categorical(f"{name}_model", p=prior, batch_shape=plate or None)
            output = average(name, candidates, batch_shape=plate, switch=switch)
            observed = likelihood(output)
        if not isinstance(observed, Variable) or not observed.observed:
            raise ModelError(
                "likelihood must return the observed variable it creates (declared with observed=True), "
                f"got {observed!r}"
            )
        self.model = model
        self.prior = prior.name
        self.switch = switch.name
        self.observed = observed
        self.node = name
        self.plan = compile_model(model)
        if not self.plan.exact:
            raise ModelError(
                "combine_online needs exact per-observation evidences: the candidates and the likelihood must be "
                "sum-product on a tree (no loops, conjugate messages)"
            )


def combine_online(
    candidates: Mapping,
    likelihood: Callable,
    data,
    alpha=1.0,
    start_alpha=None,
    batch_size: int = 1,
    name: str = "x",
    progress: bool = False,
    callback: Callable | None = None,
) -> OnlineCombination:
    """Online Bayesian model combination with point-mass assignments (van Erp et al. 2023, §5.3.1, §6.1).

    Observations arrive one at a time (or ``batch_size`` at a time). For each,
    the engine computes the sub-model evidences ``p(y_n | m_n = k)`` (the
    message to its switch) and the belief ``Cat(α / Σα) · p(y_n | m_n)``; the
    observation is assigned by a point mass to the belief's argmax ``k̂`` and
    ``q(π) = Dir(α + e_k̂)`` becomes the prior of the next one. Observations of
    one mini-batch share the prior of the batch.

    With a vague prior the first assignments dominate the forward message and
    everything lands in one model (§6.1), so the stream runs under the
    informative ``start_alpha``; at the end Bayesian model reduction
    (:func:`dirichlet_model_reduction`) swaps it for the target ``alpha``:
    ``q(π) = Dir(α̃ − start_alpha + alpha)``.

    Parameters
    ----------
    candidates : dict name -> function
        As for :func:`average`; a function taking ``batch_shape`` gets the
        mini-batch plate (``()`` when ``batch_size`` is 1).
    likelihood : function(x) -> Variable
        Builds the observation model given the mixture output ``x`` and returns
        the observed variable, declared with ``observed=True``, e.g.
        ``lambda x: Normal("y", mean=x, var=5.0, observed=True)``.
    data : array, leading axis N
        Observations of that variable, ``data[n]`` of its event shape.
    alpha : positive number, K numbers or dict
        The target (vague) Dirichlet prior.
    start_alpha : positive number, K numbers or dict, optional
        The informative prior the stream runs under; default ``alpha`` rescaled to
        a concentration of 100 per candidate (preserving its proportions).
    batch_size : int
        Observations per engine run.
    progress : bool
        Show a tqdm progress bar (a line per 10% on stderr without tqdm).
    callback : function(processed, alpha), optional
        Called after every mini-batch with the number of observations processed
        and a copy of the current concentrations.

    The model is compiled once per mini-batch size; each run re-binds the data
    and the prior probabilities (an ``fg.Data`` placeholder). A
    ``KeyboardInterrupt`` (Ctrl-C, or raised by ``callback``) stops the stream
    and returns what was computed, with ``interrupted=True``.
    """
    names = _candidate_names(candidates)
    target = _concentrations(alpha, names, "alpha")
    start = (
        target / target.mean() * DEFAULT_START_CONCENTRATION if start_alpha is None
        else _concentrations(start_alpha, names, "start_alpha")
    )
    if not callable(likelihood):
        raise ModelError(f"likelihood must be a function of the mixture output, got {type(likelihood).__name__}")
    if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ModelError(f"batch_size must be a positive integer, got {batch_size!r}")
    shared = [key for key in names if not _takes_batch_shape(candidates[key])]
    if batch_size > 1 and shared:
        raise ModelError(
            f"candidates {shared} take no batch_shape parameter, so one sub-model would serve a whole mini-batch; "
            "with batch_size > 1 write them as functions of batch_shape (one copy per observation)"
        )
    observations = np.asarray(data, dtype=float)
    if observations.ndim < 1 or observations.shape[0] == 0:
        raise DataError(f"data must have a leading axis of observations, got shape {observations.shape}")
    total = observations.shape[0]

    steps: dict = {}
    concentrations = start.copy()
    # (assignments, beliefs, evidences) per mini-batch, appended in one step; the final counts are
    # recomputed from them, so an interrupt between the append and the update of alpha loses nothing
    records = []
    interrupted = False
    bar = _Progress(total, progress)
    try:
        for first in range(0, total, batch_size):
            chunk = observations[first:first + batch_size]
            plate = (len(chunk),) if batch_size > 1 else ()
            step = steps.get(plate)
            if step is None:
                step = steps[plate] = _Step(name, candidates, names, likelihood, plate)
            values = chunk if plate else chunk[0]
            if values.shape != step.observed.shape:
                raise DataError(
                    f"each observation of {step.observed.name!r} must have shape {step.observed.event_shape}, "
                    f"got {chunk.shape[1:]}"
                )
            captured = {}
            result = run(
                step.plan,
                data={step.prior: concentrations / concentrations.sum(), step.observed.name: values},
                iterations=1,
                free_energy=False,
                callback=lambda iteration, result: captured.update(evidence=_log_evidence_per_candidate(result, step.node)),
            )
            if result.interrupted or "evidence" not in captured:
                raise KeyboardInterrupt
            belief = np.reshape(result.marginal(step.switch).probabilities, (-1, len(names)))
            chosen = np.argmax(belief, axis=-1)
            records.append((chosen, belief, np.reshape(captured["evidence"], (-1, len(names)))))
            concentrations = concentrations + np.bincount(chosen, minlength=len(names))
            bar.update(len(chunk))
            if callback is not None:
                callback(first + len(chunk), concentrations.copy())
    except KeyboardInterrupt:
        interrupted = True
    finally:
        bar.close()

    assignments = np.concatenate([r[0] for r in records]) if records else np.zeros(0, dtype=int)
    beliefs = np.concatenate([r[1] for r in records]) if records else np.zeros((0, len(names)))
    evidences = np.concatenate([r[2] for r in records]) if records else np.zeros((0, len(names)))
    processed = len(assignments)
    counts = np.bincount(assignments, minlength=len(names)).astype(float)
    informative = start + counts
    reduced, change = dirichlet_model_reduction(informative, start, target)
    assigned_evidence = float(np.sum(evidences[np.arange(processed), assignments]))
    log_evidence = assigned_evidence + float(log_multivariate_beta(target + counts) - log_multivariate_beta(target))
    return OnlineCombination(
        names=names,
        posterior=reduced,
        posterior_informative=DirichletDistribution(informative),
        prior=target,
        start_prior=start,
        assignments=assignments,
        probabilities=beliefs,
        log_evidences=evidences,
        log_evidence_change=float(change),
        log_evidence=log_evidence,
        processed=processed,
        interrupted=interrupted,
        counts=counts,
    )


class _Progress:
    """A tqdm bar when tqdm is installed, else a line on stderr every 10%; silent when disabled."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.done, self.bar, self.enabled = total, 0, None, enabled
        self.next_report = 0.1
        if enabled:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                return
            self.bar = tqdm(total=total, desc="online combination", unit="obs")

    def update(self, count: int) -> None:
        self.done += count
        if self.bar is not None:
            self.bar.update(count)
        elif self.enabled and self.done / self.total >= self.next_report:
            print(f"online combination: {self.done}/{self.total} observations", file=sys.stderr)
            self.next_report = np.floor(self.done / self.total * 10 + 1) / 10

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
