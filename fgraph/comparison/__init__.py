"""Bayesian model comparison with the mixture node: averaging, selection and combination.

``from fgraph.comparison import average, select, combine, ModelComparison``.

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

The package sits above the node types (it builds models from them), like a
model written by a user: the engine never imports it, and ``import fgraph``
does not load it (``fgraph.average`` and the other names below are looked
up on first use). One module per concern:

* :mod:`~fgraph.comparison.candidates` — checking the candidates and the
  numbers given per candidate, and building the candidates in the model;
* :mod:`~fgraph.comparison.builders` — :func:`average`, :func:`select`,
  :func:`combine` and the inference settings of selection and combination;
* :mod:`~fgraph.comparison.reader` — :class:`ModelComparison`, what a run says;
* :mod:`~fgraph.comparison.reduction` — Bayesian model reduction of a
  Dirichlet posterior;
* :mod:`~fgraph.comparison.online` — :func:`combine_online`, model
  combination on a stream.
"""
from fgraph.comparison.builders import average, combination_settings, combine, select, selection_settings
from fgraph.comparison.online import OnlineCombination, combine_online
from fgraph.comparison.reader import ModelComparison, compare
from fgraph.comparison.reduction import dirichlet_model_reduction

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
