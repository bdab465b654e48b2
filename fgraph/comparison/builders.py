"""Builders of the three comparisons (averaging, selection, combination) and their inference settings.

Each builder joins the candidates with a switch ``m`` through
``x = Mixture(m, [x_1, ..., x_K])`` in the active model and records what it
built (candidate names, switch, prior), so that :func:`selection_settings`,
:func:`combination_settings` and :class:`~fgraph.comparison.reader.ModelComparison`
need only the model and the name of ``x``.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from fgraph.comparison.candidates import (
    build_candidates,
    candidate_names,
    concentrations_per_candidate,
    plate_shape,
    probability_vector,
)
from fgraph.constraints import Constraints
from fgraph.errors import ModelError
from fgraph.families.categorical import Categorical as CategoricalDistribution
from fgraph.families.pointmass import PointMass
from fgraph.model import Model, Variable
from fgraph.nodes.categorical import Categorical
from fgraph.nodes.dirichlet import Dirichlet
from fgraph.nodes.mixture import Mixture


# ------------------------------------------------------------------ records
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


def recorded_comparison(model: Model, name: str):
    """What a builder recorded for the mixture ``name`` of ``model`` (``None`` for a mixture built by hand)."""
    return _COMPARISONS.get(model, {}).get(name)


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


# ------------------------------------------------------------------ builders
def average(name: str, candidates: Mapping, prior=None, batch_shape=None, switch: Variable | None = None) -> Variable:
    """Bayesian model averaging: ``name = Mixture(m, candidates)`` with ``m ~ Cat(prior)``.

    Parameters
    ----------
    name : str
        The variable the candidates' ends merge into; the switch is ``"<name>_model"``.
    candidates : dict name -> function
        Each function builds its sub-model in the active model and returns the
        variable (or number) that enters the mixture; it may take
        ``batch_shape`` (see :mod:`fgraph.comparison`).
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
    names = candidate_names(candidates)
    plate = plate_shape(batch_shape)
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
        probabilities = np.full(len(names), 1.0 / len(names)) if prior is None else probability_vector(prior, names, "prior")
        switch = Categorical(f"{name}_model", p=probabilities)
    ends = build_candidates(candidates, names, plate)
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

    Notes
    -----
    Run with ``fg.infer(model, **combination_settings(model))`` (variational
    message passing with the sub-models and the likelihood kept sum-product);
    ``ModelComparison(result, name).weights`` is ``q(π)``.
    """
    names = candidate_names(candidates)
    if batch_shape is None:
        raise ModelError(f"combine({name!r}): batch_shape is required (the plate of observations, e.g. (N,))")
    plate = plate_shape(batch_shape)
    concentrations = concentrations_per_candidate(alpha, names, "alpha")
    model = Model.current()
    weights = Dirichlet(f"{name}_weights", alpha=concentrations)
    switch = Categorical(f"{name}_model", p=weights, batch_shape=plate)
    ends = build_candidates(candidates, names, plate)
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
